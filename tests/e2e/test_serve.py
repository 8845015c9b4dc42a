"""End-to-end: ``dpcore serve --replicas 2`` behind nginx, through the proxy, then stopped.

The HTML shell, the proxy's and each replica's health answer through nginx; a page opened in
Chromium through the proxy runs to the end (its websocket passed nginx's upgrade); after
SIGTERM every process ``dpcore serve`` started is gone. Skipped when nginx is not installed.
Over 10 s on this shared machine (11.5-14 s at load averages of 5 to 9 on 2 cores): two
Streamlit servers and nginx start (5 s) and stop (3 s), which is what it tests, and the first
page run on a fresh server imports the app (the rest).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import APP_READY, REPO_ROOT, _free_port, _healthy

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").is_file() else None)
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        NGINX is None, reason="nginx is not installed (Debian: apt-get install nginx-light)"
    ),
]


def _descendants(pid):
    """Every live process below ``pid`` (read from /proc: parent pids)."""
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(proc.name))
    found, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _alive(pid):
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_two_replicas_behind_nginx_serve_a_page_and_stop_cleanly(browser, tmp_path):
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    }
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dpcore",
                "serve",
                "--replicas",
                "2",
                "--port",
                str(port),
                "--address",
                "127.0.0.1",
                "--nginx",
                NGINX,
            ],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    started = []
    try:
        deadline = time.monotonic() + 90
        while "Stop with Ctrl-C" not in log.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        started = _descendants(proc.pid)
        assert len(started) >= 4, started  # two replicas, nginx's master and its worker
        for path in ("/_stcore/health", "/_replica/1/health", "/_replica/2/health"):
            assert _healthy(base + path), path
        with urllib.request.urlopen(base + "/", timeout=10) as shell:
            assert "dpcore_replica=" in shell.headers["Set-Cookie"]
            assert '<div id="root">' in shell.read().decode()

        with socket.create_connection(("127.0.0.1", port), timeout=10) as ws:  # the upgrade
            ws.sendall(
                f"GET /_stcore/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                "Sec-WebSocket-Protocol: streamlit\r\n\r\n".encode()
            )
            assert ws.recv(4096).startswith(b"HTTP/1.1 101 "), "nginx did not pass the upgrade"

        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(base + "/glossary")
            page.wait_for_selector(APP_READY, timeout=60_000)  # the script ran over the websocket
            assert page.get_by_role("heading", name="Glossary").count()
        finally:
            context.close()

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0, log.read_text()[-3000:]
        assert [p for p in started if _alive(p)] == [], "a process outlived dpcore serve"
        assert not _healthy(base + "/_stcore/health")
    finally:
        if proc.poll() is None:  # a failed check: stop it as a user would, then for good
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for pid in started:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
