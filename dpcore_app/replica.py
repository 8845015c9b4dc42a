"""One replica of ``dpcore serve``: ``streamlit run``, and the class's first view built in it.

    python -m dpcore_app.replica run APP [streamlit flags]    # as ``streamlit run``

With ``DPCORE_WARM_UP`` naming a file, a thread builds the DP-OWL page's default view in this
process once Streamlit's runtime exists (:func:`dpcore_app.warm.warm_replica`: from the shared
results store when ``dpcore warm`` filled it), then writes that file: "ok SECONDS", or
"failed: ERROR". The server answers /_stcore/health meanwhile; ``dpcore serve`` reports ready
only once every replica has written its file, so the first student does not wait for the
first view's imports, reads and figures. Without the variable this is ``streamlit run``.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import time
from pathlib import Path

WARM_UP_ENV = "DPCORE_WARM_UP"
#: What the entry script and the DP-OWL page import besides the view's own modules: imported
#: here too, so that the first session finds them loaded.
FIRST_IMPORTS = (
    "dpcore_app.app",
    "dpcore_app.ui.common.controls",
    "dpcore_app.ui.common.explain",
    "dpcore_app.ui.common.address",
    "dpcore_app.ui.common.downloads",
    "dpcore_app.ui.common.handout",
    "dpcore_app.ui.common.ledger",
    "dpcore_app.ui.common.ledger_sidebar",
    "dpcore_app.ui.common.link",
    "dpcore_app.ui.common.safety",
    "dpcore_app.ui.owl.charts",
    "dpcore_app.ui.owl.decide",
    "dpcore_app.ui.owl.explain",
    "dpcore_app.ui.owl.handout",
    "dpcore_app.ui.owl.panels",
    "dpcore_app.ui.owl.tuning",
    "dpcore_app.ui.owl.view_model",
)
RUNTIME_SECONDS = 60.0  # how long the warm-up waits for Streamlit's runtime to exist


def warm_up(done: Path, wait: float = RUNTIME_SECONDS) -> None:
    """Build the first view here (in Streamlit's caches once its runtime exists), then write
    ``done``: "ok SECONDS" or "failed: ERROR" (the server still serves; that view is then
    built for its first user). ``wait``: the most seconds to wait for the runtime."""
    try:
        from streamlit import runtime

        deadline = time.monotonic() + wait
        # st.cache_data keeps an entry where the sessions will look once the runtime exists
        while not runtime.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        from dpcore_app import warm

        warm.quiet_bare_mode()
        for module in FIRST_IMPORTS:
            importlib.import_module(module)
        text = f"ok {warm.warm_replica():.2f}"
    except Exception as err:  # reported to dpcore serve, which says it
        text = f"failed: {type(err).__name__}: {err}"
    tmp = done.with_name(done.name + ".tmp")
    tmp.write_text(text + "\n")
    os.replace(tmp, done)  # dpcore serve never reads half a line


def main(argv: list[str] | None = None) -> None:
    target = os.environ.get(WARM_UP_ENV, "").strip()
    if target:
        threading.Thread(
            target=warm_up, args=(Path(target),), name="dpcore-warm-up", daemon=True
        ).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
