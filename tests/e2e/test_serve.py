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
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from dpcore._serve import processes
from tests.e2e.conftest import APP_READY
from tests.e2e.servers import (
    REPO_ROOT,
    STOP_SECONDS,
    free_port,
    healthy,
    serve_command,
    wait_until_serving,
)

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


def _serve(command, folder, log, **env):
    """Start ``command`` (a ``dpcore serve``) in ``folder`` with this checkout's packages and
    ``env``, writing to ``log``; in a process group of its own, as ``dpcore serve`` starts its
    servers."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        **env,
    }
    with open(log, "wb") as out:
        return processes.start(command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)


def test_two_replicas_behind_nginx_serve_a_page_and_stop_cleanly(browser, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    proc = _serve(serve_command(port, 2, "--nginx", NGINX), tmp_path, log)
    started = []
    try:
        wait_until_serving(proc, log, 90)
        # ready only once each replica has built the class's first view (dpcore_app.replica)
        assert "did not build its first view" not in log.read_text(errors="replace")
        started = _descendants(proc.pid)
        assert len(started) >= 4, started  # two replicas, nginx's master and its worker
        for path in ("/_stcore/health", "/_replica/1/health", "/_replica/2/health"):
            assert healthy(base + path), path
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
        assert not healthy(base + "/_stcore/health")
    finally:
        processes.stop([proc], STOP_SECONDS)  # after a failed check: as a user would, then for good
        for pid in started:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _htpasswd(path, users):
    """An htpasswd file of ``{user: password}`` (``openssl passwd -apr1``, as docs/deploy.md
    says to make one)."""
    lines = []
    for user, password in users.items():
        hashed = subprocess.run(
            ["openssl", "passwd", "-apr1", password],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()
        lines.append(f"{user}:{hashed}\n")
    path.write_text("".join(lines))
    return path


def _status(url, auth=None, headers=()):
    import ssl

    unchecked = ssl._create_unverified_context()  # the test's self-signed certificate
    request = urllib.request.Request(url, headers=dict(headers))
    if auth:
        import base64

        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(request, timeout=10, context=unchecked) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _upload_and_release(browser, base, user, trial, dictionary, forged=None):
    """``user`` signs in (basic authentication), uploads ``trial`` with its dictionary on Your
    data and releases a rule at ε = 1; returns the sidebar's text of the datasets they see."""
    from playwright.sync_api import expect

    from tests.e2e.conftest import AppDriver

    context = browser.new_context(
        http_credentials={"username": user, "password": f"pw-{user}"},
        extra_http_headers={"X-Dpcore-User": forged} if forged else None,
        ignore_https_errors=True,  # the test's self-signed certificate
        viewport={"width": 1400, "height": 1000},
    )
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        app = AppDriver(page, base, None)
        app.goto("/your-data")
        sidebar = page.locator("[data-testid='stSidebar']")
        expect(sidebar.get_by_text(f"Signed in as {user}")).to_be_visible()
        if trial is not None:
            uploaders = page.locator("[data-testid='stFileUploader']")
            uploaders.filter(has_text="Trial CSV").locator(
                "[data-testid='stFileUploaderDropzoneInput']"
            ).set_input_files(str(trial))
            app.wait_rerun()
            uploaders.filter(has_text="Public data dictionary").locator(
                "[data-testid='stFileUploaderDropzoneInput']"
            ).set_input_files(str(dictionary))
            app.wait_rerun()
            page.get_by_role("button", name="Fill in from the data dictionary").click()
            app.wait_rerun()
            page.get_by_role("button", name="Release private rule at ε = 1").click()
            app.wait_rerun()
            app.expect_no_exception()
            expect(sidebar.get_by_text("ε = 1 over 1 release", exact=True)).to_be_visible()
        sidebar.get_by_text("Datasets you may see").click()
        app.wait_idle()
        return sidebar.inner_text()
    finally:
        context.close()


@pytest.mark.slow
def test_a_department_server_signs_users_in_and_each_sees_only_their_datasets(browser, tmp_path):
    """``dpcore serve --auth htpasswd FILE --keeper kim --tls-cert C --tls-key K`` on its
    default address (TLS with a self-signed certificate made as docs/deploy.md says).

    Nothing listens off the loopback; a request without (or with wrong) credentials gets 401;
    ann and bob sign in in Chromium, each uploads a trial of their own and releases on it,
    and each sees only their own dataset in the sidebar, while kim (a keeper) sees both; the
    ledger records who registered and who released each; bob's forged X-Dpcore-User header
    (naming the keeper) is ignored; the uploads left no file in nginx's client_body/.
    One function, because it is expensive: about 25 s at a load average of 6 on 2 cores (a
    replica and nginx start, three browser sessions walk Your data through the proxy and two
    releases run); the server's start is what each check needs, so they share it.
    """
    import pandas as pd

    from dpcore.privacy.accounting import PrivacyLedger
    from tests.e2e.conftest import listening

    demo = REPO_ROOT / "dpcore_app" / "demo_data"
    rows = pd.read_csv(demo / "paper_trial.csv")
    ann_trial, bob_trial = tmp_path / "ann_trial.csv", tmp_path / "bob_trial.csv"
    rows.iloc[:500].to_csv(ann_trial, index=False)  # over 16 KB: nginx would buffer it to disk
    rows.iloc[500:].to_csv(bob_trial, index=False)
    users = _htpasswd(tmp_path / "users", {u: f"pw-{u}" for u in ("ann", "bob", "kim")})
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        + [
            "-nodes",
            "-days",
            "1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-subj",
            "/CN=localhost",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    ledger_file = tmp_path / "ledger.sqlite"
    port = free_port()
    base = f"https://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    command = serve_command(
        port,
        1,
        *("--auth", "htpasswd", str(users), "--keeper", "kim"),
        *("--tls-cert", str(cert), "--tls-key", str(key), "--nginx", NGINX),
        address=None,  # its default address, which is what it checks
    )
    proc = _serve(command, tmp_path, log, DPCORE_LEDGER=str(ledger_file))
    try:
        wait_until_serving(proc, log, 90)
        # The default address is the loopback: nginx and the replica listen there only.
        found = listening(_descendants(proc.pid))
        assert ("127.0.0.1", port) in found
        assert {host for host, _ in found} == {"127.0.0.1"}, found
        conf = log.read_text().split("nginx config ")[1].split()[0]
        client_body = Path(conf).parent / "client_body"
        before = client_body.stat().st_mtime_ns  # nginx made it at start; a file would touch it

        assert _status(base + "/") == 401
        assert _status(base + "/", auth=("ann", "wrong")) == 401
        assert _status(base + "/", auth=("ann", "pw-ann")) == 200
        assert _status(base + "/_stcore/health") == 200  # "ok" only, for the health checks
        assert _status(f"http://127.0.0.1:{port}/") == 400  # plain HTTP on the TLS port

        ann = _upload_and_release(browser, base, "ann", ann_trial, demo / "paper_trial.json")
        bob = _upload_and_release(
            browser, base, "bob", bob_trial, demo / "paper_trial.json", forged="kim"
        )
        kim = _upload_and_release(browser, base, "kim", None, None)
        assert "Datasets you may see (1)" in ann and "ann_trial.csv" in ann
        assert "bob_trial.csv" not in ann
        assert "Datasets you may see (1)" in bob and "bob_trial.csv" in bob
        assert "ann_trial.csv" not in bob and "keeper" not in bob  # the forged header: ignored
        assert "Datasets you may see (2)" in kim and "a keeper of the ledger" in kim
        assert "ann_trial.csv" in kim and "bob_trial.csv" in kim

        listed = {d.name: d for d in PrivacyLedger.list_datasets(ledger_file)}
        assert {n: d.owner for n, d in listed.items()} == {
            "ann_trial.csv": "ann",
            "bob_trial.csv": "bob",
        }
        for name, who in (("ann_trial.csv", "ann"), ("bob_trial.csv", "bob")):
            entries = PrivacyLedger.open(ledger_file, listed[name].dataset).entries
            assert [e.who for e in entries] == [who]

        # The uploads went to the replica unbuffered: nothing was ever written in client_body/.
        assert list(client_body.iterdir()) == []
        assert client_body.stat().st_mtime_ns == before

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0, log.read_text()[-3000:]
    finally:
        processes.stop([proc], STOP_SECONDS)
