"""How to install an optional part of dpcore: one sentence for every error message that needs it.

dpcore is not on a package index (a name there could belong to anyone): an extra is installed
from a checkout of the repository, or from a wheel built from one.
"""

from __future__ import annotations

from ._version import __version__

__all__ = ["install_hint"]


def install_hint(extra: str) -> str:
    """The install advice for the optional part ``extra`` ("app", "server", "dask", ...).

    Examples
    --------
    >>> install_hint("dask").startswith('python -m pip install -e ".[dask]"')
    True
    """
    return (
        f'python -m pip install -e ".[{extra}]" in a checkout of dpcore (or '
        f'"dist/dpcore-{__version__}-py3-none-any.whl[{extra}]", a wheel built from it); '
        "dpcore is not on a package index"
    )
