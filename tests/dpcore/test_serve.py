"""The processes of ``dpcore app`` and ``dpcore serve``: nginx's configuration, and no server
left running after its command is stopped. The whole of ``dpcore serve`` through a browser is
tests/e2e/test_serve.py."""

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from dpcore import _serve

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "dpcore_app" / "deploy" / _serve.TEMPLATE
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").is_file() else None)


def test_the_config_routes_by_cookie_to_every_replica_and_passes_websockets(tmp_path):
    conf = _serve.nginx_config(TEMPLATE.read_text(), tmp_path, "127.0.0.1:8080", [9001, 9002])
    assert "{{" not in conf and "listen 127.0.0.1:8080;" in conf
    assert "hash $dpcore_route consistent;" in conf  # sticky: one session, one replica
    for k, port in ((1, 9001), (2, 9002)):
        assert f"server 127.0.0.1:{port} " in conf
        assert f"location = /_replica/{k}/health" in conf
        assert f"127.0.0.1:{port} {k};" in conf  # the X-Dpcore-Replica header's number
        assert f"proxy_pass http://127.0.0.1:{port}/_stcore/health;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf
    assert "proxy_read_timeout 1d;" in conf
    assert ("user nobody " in conf) == (os.geteuid() == 0)  # as root, a group Debian has


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx-light)")
def test_nginx_accepts_the_config(tmp_path):
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        _serve.nginx_config(
            TEMPLATE.read_text(), tmp_path, f"127.0.0.1:{_serve.free_port()}", [_serve.free_port()]
        )
    )
    if os.geteuid() == 0:
        tmp_path.chmod(0o711)
    out = subprocess.run(
        [NGINX, "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr


def test_a_template_must_have_exactly_the_fields_serve_fills_in():
    with pytest.raises(_serve.ServeError, match="fields"):
        _serve.render("listen {{ listen }}; {{ typo }}", {"listen": "80"})
    assert _serve.render("listen {{ listen }};", {"listen": "80"}) == "listen 80;"


def _processes_with(text):
    """Pids of the processes whose command line contains ``text`` (zombies are gone)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


def _healthy(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_app_stops_its_streamlit_server_on_sigterm(tmp_path):
    """SIGTERM to ``dpcore app`` stops the Streamlit server it started, then ``dpcore`` exits 0.

    3-5 s (5 s at a load average of 9 on 2 cores), most of it Streamlit starting."""
    pytest.importorskip("streamlit")
    port = _serve.free_port()
    flag = f"--server.port={port}"  # unique on this machine: finds the server by its command line
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open(tmp_path / "app.log", "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dpcore",
                "app",
                flag,
                "--server.headless=true",
                "--server.address=127.0.0.1",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while not _healthy(f"http://127.0.0.1:{port}/_stcore/health"):
            assert proc.poll() is None and time.monotonic() < deadline, (
                tmp_path / "app.log"
            ).read_text()[-2000:]
            time.sleep(0.2)
        server = [p for p in _processes_with(flag) if p != proc.pid]
        assert server, "no Streamlit process found"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
        assert _processes_with(flag) == [], "the Streamlit server outlived dpcore app"
        assert not _healthy(f"http://127.0.0.1:{port}/_stcore/health")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _processes_with(flag):
            os.kill(pid, signal.SIGKILL)


def test_serve_without_nginx_says_how_to_install_it(monkeypatch, capsys):
    pytest.importorskip("streamlit")
    from dpcore import cli

    monkeypatch.setattr(_serve, "find_nginx", lambda given=None: None)
    assert cli.main(["serve", "--replicas", "2"]) == cli.EXIT_MISSING
    assert "apt-get install nginx-light" in capsys.readouterr().err
