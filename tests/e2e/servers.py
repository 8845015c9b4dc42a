"""The servers and the browser that the browser tests and the browser benchmarks start.

Chromium's path and flags, a free port, the commands of `streamlit run` and `dpcore serve`, and
waiting until the server they start answers. The tests' servers (:func:`running_streamlit`)
start and stop as ``dpcore app`` and ``dpcore serve`` start and stop theirs
(``dpcore._serve.processes``): each in a process group of its own, stopped with the whole
group, Streamlit's simulation processes included. Plain Python (neither pytest nor
playwright): tests/e2e/conftest.py and the tests import it, and so does benchmarks/load.py
(which puts the repository root on ``sys.path`` for that), so a benchmark starts the server
the tests check with the same command and waits for it the same way; the benchmarks stop their
servers themselves (the server process, not its group).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dpcore._serve import processes
from dpcore._serve.processes import free_port as free_port  # for the tests and benchmarks

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The browser: $DPCORE_CHROMIUM, else chromium on PATH, else Debian's /usr/bin/chromium.
CHROMIUM = Path(
    os.environ.get("DPCORE_CHROMIUM")
    or shutil.which("chromium")
    or shutil.which("chromium-browser")
    or "/usr/bin/chromium"
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: What `dpcore serve` prints once every replica (and nginx) is up.
SERVING = "Stop with Ctrl-C"
#: A server's time to stop after SIGTERM before its process group gets SIGKILL.
STOP_SECONDS = 20.0


def healthy(url: str) -> bool:
    """Whether ``url`` (a Streamlit ``/_stcore/health``) answers 200 ``ok`` now."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200 and response.read().decode().strip() == "ok")
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def streamlit_command(port: int, script: str = "app.py") -> list[str]:
    """The command line of ``streamlit run script``, headless on 127.0.0.1:``port``."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        script,
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
    ]


def serve_command(
    port: int, replicas: int, *options: str, address: str | None = "127.0.0.1"
) -> list[str]:
    """The command line of ``dpcore serve --replicas N --port port``, on ``address`` (None: its
    default one), then ``options``."""
    return [
        sys.executable,
        "-m",
        "dpcore",
        "serve",
        "--replicas",
        str(replicas),
        "--port",
        str(port),
        *(["--address", address] if address else []),
        *options,
    ]


def _log_tail(log_path: Path | None) -> str:
    return "" if log_path is None else ":\n" + log_path.read_text(errors="replace")[-3000:]


def wait_until_healthy(
    proc: subprocess.Popen[bytes], base_url: str, timeout_s: float, log_path: Path | None = None
) -> None:
    """Wait until the Streamlit server ``proc`` at ``base_url`` answers its health check.

    Raises
    ------
    RuntimeError
        If ``proc`` exits first, or ``timeout_s`` pass; with the end of ``log_path`` if given.
    """
    deadline = time.monotonic() + timeout_s
    while not healthy(f"{base_url}/_stcore/health"):
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}{_log_tail(log_path)}")
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"streamlit did not answer /_stcore/health within {timeout_s} s"
                + _log_tail(log_path)
            )
        time.sleep(0.25)


@contextmanager
def running_streamlit(log_path: Path, env: dict[str, str], timeout_s: float) -> Iterator[str]:
    """``streamlit run app.py`` from the repository root on a free port, with ``env``, writing to
    ``log_path``; yields its base URL once it answers (at most ``timeout_s``); stops it after."""
    port = free_port()
    with open(log_path, "ab") as log:
        proc = processes.start(
            streamlit_command(port),
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(proc, base_url, timeout_s, log_path)
        yield base_url
    finally:
        processes.stop([proc], STOP_SECONDS)


def wait_until_serving(proc: subprocess.Popen[bytes], log_path: Path, timeout_s: float) -> None:
    """Wait until ``dpcore serve`` (``proc``, writing to ``log_path``) says it serves.

    Raises
    ------
    RuntimeError
        If ``proc`` exits first, or ``timeout_s`` pass; with the end of its log.
    """
    deadline = time.monotonic() + timeout_s
    while SERVING not in log_path.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"dpcore serve did not start{_log_tail(log_path)}")
        time.sleep(0.2)
