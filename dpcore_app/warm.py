"""``dpcore warm``: the dashboard's warm-up (``python -m ui.warm``) without Streamlit's
bare-mode notices.

The warm-up calls the pages' cached functions outside ``streamlit run`` on purpose, and each
call logs "No runtime found" or "missing ScriptRunContext", notices meant for an app that
should be running under Streamlit. Only those two loggers are filtered, and only below ERROR,
in this process only; the app itself logs as Streamlit does.
"""

from __future__ import annotations

import logging
import runpy

BARE_MODE_LOGGERS = ("streamlit.runtime.caching.cache_data_api",
                     "streamlit.runtime.scriptrunner_utils.script_run_context")


def quiet_bare_mode() -> None:
    """Drop the bare-mode notices (a filter stays when Streamlit later sets the level)."""
    for name in BARE_MODE_LOGGERS:
        logging.getLogger(name).addFilter(lambda record: record.levelno >= logging.ERROR)


if __name__ == "__main__":
    quiet_bare_mode()
    runpy.run_module("ui.warm", run_name="__main__", alter_sys=True)
