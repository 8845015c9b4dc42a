"""Every test writes its privacy ledger into a temporary file, never into the home directory.

``DPCORE_LEDGER`` is pointed at a file in a fresh temporary directory when pytest starts (so
subprocesses such as the browser tests' ``streamlit run`` inherit it, whatever the shell had
set), and each test then gets a ledger file of its own, so releases in one test never count
in another.

``DPCORE_STORE`` (the shared results store) is pointed at one fresh temporary directory for the
whole run at import, before any test module or server subprocess reads it, and removed at the
end: nothing a test computes lands in the user's store. Under pytest-xdist the workers inherit
the controller's directory (``DPCORE_TEST_STORE``), so a view one worker computed is read by the
other, as by two server processes sharing a store; only the controller removes it.

``DPCORE_WARM_FIGURES`` is "off": a test's app (AppTest or a server) builds only the figures its
pages ask for, not the warm-up's hundreds in a background thread (tests/ui/test_warm.py runs
the warm-up itself).
"""

import multiprocessing.spawn
import os
import shutil
import tempfile
from pathlib import Path

from dpcore._threads import limit_blas_threads

limit_blas_threads()  # test processes run side by side (pytest-xdist), as the app's sessions do

import pytest  # noqa: E402

LEDGER_ENV = "DPCORE_LEDGER"
_FOLDER = pytest.StashKey[str]()
_STORE = os.environ.get("DPCORE_TEST_STORE") or tempfile.mkdtemp(prefix="dpcore-test-store-")
os.environ["DPCORE_TEST_STORE"] = os.environ["DPCORE_STORE"] = _STORE
os.environ["DPCORE_WARM_FIGURES"] = "off"


def pytest_configure(config):
    multiprocessing.spawn.get_preparation_data = _without_the_app(
        multiprocessing.spawn.get_preparation_data)
    folder = tempfile.mkdtemp(prefix="dpcore-ledger-")
    config.stash[_FOLDER] = folder
    os.environ[LEDGER_ENV] = str(Path(folder) / "ledger.sqlite")


def pytest_unconfigure(config):
    shutil.rmtree(config.stash.get(_FOLDER, ""), ignore_errors=True)
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        shutil.rmtree(_STORE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _own_ledger_file(tmp_path_factory, monkeypatch):
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path_factory.mktemp("ledger") / "ledger.sqlite"))


def _without_the_app(get_preparation_data):
    """AppTest runs app.py as ``__main__`` (and a script run still going in its thread can set
    it again at any time); a process started with spawn (the ledger's race test, a dask
    LocalCluster's workers) re-runs the parent's ``__main__`` first and would run the app.
    Spawned children of the tests import their targets by module name instead."""

    def prepared(name):
        data = get_preparation_data(name)
        if Path(data.get("init_main_from_path", "")).name == "app.py":
            del data["init_main_from_path"]
        return data

    return prepared
