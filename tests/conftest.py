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

The PostgreSQL ledger's tests run against a real server (``postgres_server``): Debian's
PostgreSQL binaries, one server per test process (each pytest-xdist worker has its own), on
a unix socket in a fresh temporary directory (no TCP), and a fresh schema per ledger.

Two things Streamlit's test harness would redo for every ``AppTest`` are done once per test
process, as a server does them once: the scan of installed packages for components, and the
compiled scripts (``_scan_components_once``, ``_compile_scripts_once``).
"""

import functools
import glob
import importlib.util
import itertools
import multiprocessing.spawn
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from dpcore._threads import limit_blas_threads

limit_blas_threads()  # test processes run side by side (pytest-xdist), as the app's sessions do

import pytest  # noqa: E402

_ROOT = Path(__file__).resolve().parents[1]
LEDGER_ENV = "DPCORE_LEDGER"
_FOLDER = pytest.StashKey[str]()
_STORE = os.environ.get("DPCORE_TEST_STORE") or tempfile.mkdtemp(prefix="dpcore-test-store-")
os.environ["DPCORE_TEST_STORE"] = os.environ["DPCORE_STORE"] = _STORE


def pytest_configure(config):
    multiprocessing.spawn.get_preparation_data = _without_the_app(
        multiprocessing.spawn.get_preparation_data
    )
    _scan_components_once()
    _compile_scripts_once()
    folder = tempfile.mkdtemp(prefix="dpcore-ledger-")
    config.stash[_FOLDER] = folder
    os.environ[LEDGER_ENV] = str(Path(folder) / "ledger.sqlite")


_WAITING_FIRST = (_ROOT / "tests" / "e2e", _ROOT / "tests" / "app")  # browser, then AppTest


def pytest_collection_modifyitems(config, items):
    """The order the workers take the tests in (pytest-xdist's ``worksteal``, set in
    pyproject.toml): the first worker starts on the first part of this list, the next on the
    next, and a worker that runs out takes the back half of the longest queue.

    Browser tests come first, the slow ones (over 10 s, marked ``slow``) first among them:
    they mostly wait for Chromium and the server, so one worker runs them while the others
    take the CPU-bound tests from the back of the list, and a long test never starts last.
    Then the AppTest sessions, then the rest."""

    def order(item):
        path = Path(str(item.path)).resolve()
        group = next(
            (i for i, g in enumerate(_WAITING_FIRST) if path.is_relative_to(g)), len(_WAITING_FIRST)
        )
        return group, item.get_closest_marker("slow") is None

    items.sort(key=order)


def pytest_unconfigure(config):
    shutil.rmtree(config.stash.get(_FOLDER, ""), ignore_errors=True)
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        shutil.rmtree(_STORE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _own_ledger_file(tmp_path_factory, monkeypatch):
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path_factory.mktemp("ledger") / "ledger.sqlite"))


def _streamlit_part(name):
    """Streamlit's module ``name``, or None without Streamlit or in a version without it."""
    if importlib.util.find_spec("streamlit") is None:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _scan_components_once():
    """Each new ``AppTest`` scans every installed distribution's metadata for Streamlit
    components (0.14 s here, a quarter of the AppTest tests' time); nothing is installed
    during a run, so a test process scans once. Without Streamlit, or where this Streamlit
    keeps its scanner elsewhere, nothing changes."""
    manifest_scanner = _streamlit_part("streamlit.components.v2.manifest_scanner")
    scan = getattr(manifest_scanner, "scan_component_manifests", None)
    if scan is not None and not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.lru_cache(maxsize=None)(scan)


def _compile_scripts_once():
    """Each ``AppTest`` run compiles app.py and its page afresh (a new script cache per run,
    about a tenth of the AppTest tests' time); the scripts do not change during a run, so a
    test process keeps one cache, as a server does."""
    app_test = _streamlit_part("streamlit.testing.v1.app_test")
    cache_class = getattr(app_test, "ScriptCache", None)
    if isinstance(cache_class, type):
        shared = cache_class()
        app_test.ScriptCache = lambda: shared


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


# --------------------------------------------------------------------------------------------
# A real PostgreSQL server for the ledger (dpcore.privacy.ledger.postgres)

_PG_SETTINGS = (  # a throwaway server: nothing survives the session, so nothing is flushed
    "-c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c shared_buffers=16MB -c max_connections=60"
)


def _pg_binaries():
    """(initdb, pg_ctl): from PATH, else Debian's /usr/lib/postgresql/<version>/bin (where the
    postgresql package puts them, off PATH), newest version first; None when absent."""
    found = [shutil.which(name) for name in ("initdb", "pg_ctl")]
    if all(found):
        return tuple(os.path.realpath(f) for f in found)
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda d: [int(x) for x in Path(d).parent.name.split(".") if x.isdigit()],
        reverse=True,
    )
    for folder in versions:
        paths = tuple(os.path.join(folder, name) for name in ("initdb", "pg_ctl"))
        if all(os.access(f, os.X_OK) for f in paths):
            return paths
    return None


def _unavailable(reason):
    """Skip the PostgreSQL tests, except in CI, whose .ci/run installs the server."""
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the PostgreSQL ledger tests: {reason}", pytrace=False)
    pytest.skip(reason)


class PostgresServer:
    """One PostgreSQL server in a temporary directory, reached on its unix socket only.

    initdb refuses to run as root, so under root (CI, this machine) the server runs as the
    ``postgres`` system user (the Debian package makes it) or else ``nobody``.
    """

    def __init__(self, initdb, pg_ctl):
        self.pg_ctl = pg_ctl
        # A short path of our own: a socket path has at most 107 bytes, and pytest's tmp
        # folders are private to root, where the server's user could not enter.
        self.dir = tempfile.mkdtemp(prefix="dpcore-pg-")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "server.log")
        self._as = {}
        if os.geteuid() == 0:
            user = next(u for u in (_user("postgres"), _user("nobody")) if u is not None)
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            self._as = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._names = itertools.count()
        self._run(
            initdb,
            "-D",
            self.data,
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "--encoding=UTF8",
            "--locale=C",
            "--no-instructions",
        )
        self._run(
            pg_ctl,
            "-D",
            self.data,
            "-l",
            self.log,
            "-w",
            "-t",
            "60",
            "-o",
            f"-p {self.port} -k {self.dir} {_PG_SETTINGS}",
            "start",
        )

    def _run(self, *command):
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=self.dir, timeout=120, **self._as
        )
        if done.returncode != 0:
            log = Path(self.log).read_text() if os.path.exists(self.log) else ""
            raise RuntimeError(f"{Path(command[0]).name} failed: {done.stderr}{log}")

    def url(self, database="postgres"):
        return f"postgresql://postgres@/{database}?host={self.dir}&port={self.port}"

    def new_ledger(self):
        """The URL of a new, empty ledger: a schema of its own (first on the search path) in
        the server's one database; milliseconds, where a database takes a tenth of a second."""
        name = f"ledger_{next(self._names)}"
        self.admin(f"CREATE SCHEMA {name}")
        return f"{self.url()}&options=-csearch_path%3D{name}"

    def new_database(self, *settings):
        """The URL of a new, empty database, with ``ALTER DATABASE ... SET`` ``settings``."""
        name = f"ledger_db_{next(self._names)}"
        self.admin(f"CREATE DATABASE {name}", *(f"ALTER DATABASE {name} SET {s}" for s in settings))
        return self.url(name)

    def admin(self, *statements):
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as con:
            for statement in statements:
                con.execute(statement)

    def stop(self):
        try:
            self._run(self.pg_ctl, "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def _user(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


@pytest.fixture(scope="session")
def postgres_server():
    """This test process's PostgreSQL server (started on first use, stopped at the end)."""
    if importlib.util.find_spec("psycopg") is None:
        _unavailable("psycopg is not installed: python -m pip install -e '.[server]'")
    binaries = _pg_binaries()
    if binaries is None:
        _unavailable(
            "PostgreSQL's initdb and pg_ctl are neither on PATH nor in "
            "/usr/lib/postgresql/*/bin: apt-get install postgresql"
        )
    server = PostgresServer(*binaries)
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def new_ledger(request, tmp_path):
    """A factory of new, empty ledger locations on each backend in turn: an SQLite file in
    the test's folder, or a schema of its own on this process's PostgreSQL server."""
    if request.param == "postgresql":
        return request.getfixturevalue("postgres_server").new_ledger
    names = itertools.count()
    return lambda: tmp_path / f"ledger{next(names)}.sqlite"
