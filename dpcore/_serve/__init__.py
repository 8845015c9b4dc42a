"""The processes behind ``dpcore app`` and ``dpcore serve`` (used only by :mod:`dpcore.cli`).

``dpcore app`` runs one Streamlit server; ``dpcore serve`` runs several behind nginx, and
optionally a Dask scheduler and its workers for the replicas' uncached sweeps.

- :mod:`~dpcore._serve.processes`: starting programs and stopping them with this process;
- :mod:`~dpcore._serve.nginx`: nginx's configuration and the signed-in user's headers;
- :mod:`~dpcore._serve.options`: what ``dpcore serve`` runs and who could reach it;
- :mod:`~dpcore._serve.server`: the server itself, started, watched and stopped in order.

Nothing here imports Streamlit, nginx or Dask: they are programs started as subprocesses.
"""
