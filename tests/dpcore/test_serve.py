"""The processes of ``dpcore app`` and ``dpcore serve``: nginx's configuration, and no server
left running after its command is stopped. The whole of ``dpcore serve`` through a browser is
tests/e2e/test_serve.py."""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from dpcore._serve import nginx, processes
from dpcore._serve import options as serve_options
from dpcore._serve import server as serve_server

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "dpcore_app" / "deploy" / nginx.TEMPLATE
NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").is_file() else None)


def test_the_config_routes_by_cookie_to_every_replica_and_passes_websockets(tmp_path):
    conf = nginx.nginx_config(TEMPLATE.read_text(), tmp_path, "127.0.0.1:8080", [9001, 9002])
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


def assert_nginx_accepts(conf, tmp_path):
    """``nginx -t`` accepts the configuration ``conf`` with ``tmp_path`` as its prefix."""
    if os.geteuid() == 0:
        tmp_path.chmod(0o711)
    out = subprocess.run(
        [NGINX, "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "error.log")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx-light)")
def test_nginx_accepts_the_config(tmp_path):
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        nginx.nginx_config(
            TEMPLATE.read_text(),
            tmp_path,
            f"127.0.0.1:{processes.free_port()}",
            [processes.free_port()],
        )
    )
    assert_nginx_accepts(conf, tmp_path)


def test_a_template_must_have_exactly_the_fields_serve_fills_in():
    with pytest.raises(processes.ServeError, match="fields"):
        nginx.render("listen {{ listen }}; {{ typo }}", {"listen": "80"})
    assert nginx.render("listen {{ listen }};", {"listen": "80"}) == "listen 80;"


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


def _family(pid):
    """``pid`` and every live process below it (parent pids read from /proc)."""
    parents = {}
    for proc in Path("/proc").iterdir():
        try:
            parents[int(proc.name)] = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    family, grew = {pid}, True
    while grew:
        more = {p for p, parent in parents.items() if parent in family} - family
        family |= more
        grew = bool(more)
    return family


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
    port = processes.free_port()
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

    monkeypatch.setattr(nginx, "find_nginx", lambda given=None: None)
    assert cli.main(["serve", "--replicas", "2"]) == cli.EXIT_MISSING
    assert "apt-get install nginx-light" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Secure by default: the loopback unless authentication is configured


def test_the_app_listens_on_the_loopback_unless_told_otherwise(monkeypatch):
    """`streamlit run app.py` (the root config links to the app's) and `dpcore app` bind
    127.0.0.1; `dpcore app --server.address X` still overrides it (the later flag wins)."""
    import tomllib

    from dpcore import cli

    for config in (
        ROOT / ".streamlit" / "config.toml",
        ROOT / "dpcore_app" / ".streamlit" / "config.toml",
    ):
        assert tomllib.loads(config.read_text())["server"]["address"] == "127.0.0.1"
    pytest.importorskip("streamlit")
    ran = []
    monkeypatch.setattr(processes, "run_app", lambda command, cwd: ran.append(command) or 0)
    assert cli.main(["app"]) == 0
    assert "--server.address=127.0.0.1" in ran[-1]
    assert cli.main(["app", "--server.address", "10.1.2.3"]) == 0
    given = [a for a in ran[-1] if a.startswith("--server.address")]
    assert ran[-1].index("--server.address") > ran[-1].index(given[0])  # the user's comes last


def test_serve_defaults_to_the_loopback_and_refuses_to_expose_an_unauthenticated_app(
    tmp_path, capsys
):
    from dpcore import cli

    assert serve_options.ServeOptions().address == "127.0.0.1"
    assert cli.build_parser().parse_args(["serve"]).address == "127.0.0.1"
    for address in ("127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"):
        assert serve_options.is_loopback(address), address
    for address in ("0.0.0.0", "::", "10.0.0.5", "stats.example.org"):
        assert not serve_options.is_loopback(address), address

    assert cli.main(["serve", "--address", "0.0.0.0"]) != 0
    err = capsys.readouterr().err
    assert "not a loopback address" in err and "--auth" in err and "--insecure-no-auth" in err

    users = tmp_path / "users"
    users.write_text("ann:$apr1$x$y\n")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_text("-")
    key.write_text("-")
    check = serve_options.check_exposure
    Options = serve_options.ServeOptions
    # Basic authentication on the network without TLS would send the passwords in clear.
    with pytest.raises(processes.ServeError, match="in clear"):
        check(Options(address="0.0.0.0", auth="htpasswd", htpasswd=users))
    assert (
        check(
            Options(address="0.0.0.0", auth="htpasswd", htpasswd=users, tls_cert=cert, tls_key=key)
        )
        is None
    )
    assert check(Options(auth="htpasswd", htpasswd=users)) is None  # loopback: a proxy in front
    # A header anyone could send names no one off the loopback.
    with pytest.raises(processes.ServeError, match="loopback"):
        check(Options(address="0.0.0.0", auth="header", insecure_no_auth=True))
    with pytest.raises(processes.ServeError, match="needs --auth"):
        check(Options(keepers=("kim",)))
    with pytest.raises(processes.ServeError, match="together"):
        check(Options(auth="htpasswd", htpasswd=users, tls_cert=cert))
    with pytest.raises(processes.ServeError, match="does not exist"):
        check(Options(auth="htpasswd", htpasswd=tmp_path / "nobody"))
    # Knowingly insecure: it starts, with a loud warning.
    warning = check(Options(address="0.0.0.0", insecure_no_auth=True))
    assert warning and warning.startswith("WARNING") and "no authentication" in warning
    assert "TLS" in check(
        Options(address="0.0.0.0", auth="htpasswd", htpasswd=users, insecure_no_auth=True)
    )
    assert cli.main(["serve", "--auth", "htpasswd"]) != 0
    assert "--auth takes" in capsys.readouterr().err


def test_the_proxy_authenticates_names_the_user_and_keeps_uploads_off_the_disk(tmp_path):
    users = tmp_path / "users"
    conf = nginx.nginx_config(
        TEMPLATE.read_text(),
        tmp_path,
        "127.0.0.1:8080",
        [9001],
        auth="htpasswd",
        htpasswd=users,
        secret="s3cret",
    )
    assert 'auth_basic "dpcore";' in conf and f'auth_basic_user_file "{users}";' in conf
    # nginx's own user, never the client's header of that name (proxy_set_header replaces it)
    assert "proxy_set_header X-Dpcore-User $remote_user;" in conf
    assert "proxy_set_header X-Dpcore-Proxy s3cret;" in conf
    assert "proxy_request_buffering off;" in conf
    size = conf.split("client_body_buffer_size ")[1].split(";")[0]
    assert size.endswith("m") and int(size[:-1]) >= 100  # the app's maxUploadSize (100 MB)
    assert "proxy_max_temp_file_size 0;" in conf
    # Without authentication no header names anyone, and no secret is sent.
    plain = nginx.nginx_config(TEMPLATE.read_text(), tmp_path, "127.0.0.1:8080", [9001])
    assert 'proxy_set_header X-Dpcore-User "";' in plain and 'auth_basic "' not in plain
    assert "X-Dpcore-Proxy" not in plain
    with pytest.raises(processes.ServeError, match="secret"):
        nginx.nginx_config(TEMPLATE.read_text(), tmp_path, "x:1", [9001], auth="header")
    with pytest.raises(processes.ServeError, match="cannot be given the path"):
        nginx.nginx_config(
            TEMPLATE.read_text(),
            tmp_path,
            "x:1",
            [1],
            auth="htpasswd",
            htpasswd=Path("/a$b"),
            secret="s",
        )
    assert serve_server._host("::1") == "[::1]" and serve_server._host("127.0.0.1") == "127.0.0.1"


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx-light)")
@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test certificate")
def test_nginx_accepts_the_config_with_basic_auth_and_tls(tmp_path):
    (tmp_path / "my certs").mkdir()  # a space in a path: quoted for nginx
    cert, key = tmp_path / "my certs" / "cert.pem", tmp_path / "my certs" / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    users = tmp_path / "users"
    users.write_text("ann:$apr1$abcdefgh$0123456789abcdefghijkl\n")
    conf = tmp_path / "nginx.conf"
    text = nginx.nginx_config(
        TEMPLATE.read_text(),
        tmp_path,
        f"127.0.0.1:{processes.free_port()}",
        [processes.free_port()],
        auth="htpasswd",
        htpasswd=users,
        tls=(cert, key),
        secret="s",
    )
    assert " ssl;" in text and f'ssl_certificate "{cert}";' in text
    conf.write_text(text)
    assert_nginx_accepts(conf, tmp_path)


def test_the_replicas_learn_the_user_header_only_with_authentication(tmp_path, monkeypatch):
    app = ROOT / "dpcore_app" / "app.py"
    monkeypatch.setenv("DPCORE_AUTH_HEADER", "X-Forged")  # an environment left over: not trusted
    monkeypatch.setenv("DPCORE_KEEPERS", "eve")
    plain = serve_server.Server(app, [], serve_options.ServeOptions())
    users = tmp_path / "users"
    users.write_text("")
    authed = serve_server.Server(
        app, [], serve_options.ServeOptions(auth="htpasswd", htpasswd=users, keepers=("ann", "kim"))
    )
    try:
        assert not {"DPCORE_AUTH_HEADER", "DPCORE_KEEPERS", "DPCORE_PROXY_SECRET"} & set(plain.env)
        assert authed.env["DPCORE_AUTH_HEADER"] == "X-Dpcore-User"
        assert authed.env["DPCORE_KEEPERS"] == "ann,kim"
        assert authed.env["DPCORE_PROXY_SECRET"] == authed.secret and len(authed.secret) == 64
        assert "users: nginx basic authentication" in authed.describe()
        assert "keepers (see every dataset): ann, kim" in authed.describe()
    finally:
        plain.stop()
        authed.stop()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_dask_scheduler_listens_on_the_loopback_only(tmp_path):
    """``--dask-workers``' scheduler (and its workers) accept connections on 127.0.0.1 only:
    nothing off this machine can reach them. 5-7 s at a load of 6 on 2 cores: a scheduler
    and a worker start, which is what it tests."""
    pytest.importorskip("distributed")
    from tests.e2e.conftest import listening

    server = serve_server.Server(
        ROOT / "dpcore_app" / "app.py", [], serve_options.ServeOptions(timeout=60)
    )
    try:
        server._start_dask(1)
        scheduler = server.dask[0].process.pid
        assert server.env["DPCORE_SCHEDULER"].startswith("tcp://127.0.0.1:")
        port = int(server.env["DPCORE_SCHEDULER"].rsplit(":", 1)[1])
        found = listening([scheduler])
        assert ("127.0.0.1", port) in found
        assert {host for host, _ in found} == {"127.0.0.1"}, found
        # The worker (its nanny, then the worker process) listens once it has joined.
        workers = server.dask[1].process.pid
        deadline = time.monotonic() + 60
        while len(listening(_family(workers))) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        found = listening(_family(workers))
        assert found and {host for host, _ in found} == {"127.0.0.1"}, found
    finally:
        server.stop()


def test_insecure_no_auth_starts_with_a_loud_warning(monkeypatch, capsys):
    """--insecure-no-auth lets a non-loopback server start, and says so on stderr first."""
    started = []

    class Server:  # what would start: here it only records that it was asked to
        def __init__(self, app, flags, options):
            self.stopping = threading.Event()

        def start(self):
            started.append(True)
            raise processes.ServeError("not started in this test")

        def stop(self):
            pass

    monkeypatch.setattr(serve_server, "Server", Server)
    options = serve_options.ServeOptions(address="0.0.0.0", insecure_no_auth=True)
    assert serve_server.serve(ROOT / "app.py", [], options) == 1
    err = capsys.readouterr().err
    assert started and "!" * 78 in err and "WARNING: dpcore serve listens on 0.0.0.0" in err
    assert (
        serve_server.serve(ROOT / "app.py", [], serve_options.ServeOptions(address="0.0.0.0")) == 1
    )
    assert len(started) == 1 and "not a loopback address" in capsys.readouterr().err


FAKE_REPLICA = """
import os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass

done = Path(os.environ["DPCORE_WARM_UP"])

def warm_up():
    time.sleep(1.0)  # health answers at once; the first view takes a while
    done.write_text("failed: RuntimeError: no store\\n" if "-2." in done.name else "ok 1.00\\n")

threading.Thread(target=warm_up, daemon=True).start()
ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Health).serve_forever()
"""


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed")
def test_serve_is_ready_only_once_every_replica_has_built_its_first_view(tmp_path, monkeypatch):
    """Each replica answers its health at once and says a second later that it has built the
    class's first view (its warm-up file); ``Server.start`` returns only after both files, and
    says which replica could not build it. Fake replicas (a few lines of http.server) and the
    real nginx: about 3 s."""
    fake = tmp_path / "fake_replica.py"
    fake.write_text(FAKE_REPLICA)
    real_start = serve_server.start

    def start(command, **kwargs):
        if "dpcore_app.replica" in command:
            command = [sys.executable, str(fake), command[command.index("--server.port") + 1]]
        return real_start(command, **kwargs)

    monkeypatch.setattr(serve_server, "start", start)
    said = []
    options = serve_options.ServeOptions(
        replicas=2, port=processes.free_port(), nginx=NGINX, timeout=30
    )
    server = serve_server.Server(ROOT / "dpcore_app" / "app.py", [], options, say=said.append)
    try:
        server.start()
        files = sorted(server.run_dir.glob("replica-*.warm"))
        assert [f.name for f in files] == ["replica-1.warm", "replica-2.warm"]
        assert said == [
            "dpcore serve: replica 2 did not build its first view (failed: RuntimeError: no store)"
        ]
    finally:
        server.stop()


def test_the_configs_nested_tables_become_streamlits_flags():
    """[theme.light] in config.toml is a table inside a table: each of its options is one
    flag (Streamlit refuses ``--theme.light={...}``)."""
    from dpcore.cli.serve import config_flags

    assert config_flags(
        {"server": {"headless": True}, "theme": {"light": {"textColor": "#161413"}}}
    ) == ["--server.headless=True", "--theme.light.textColor=#161413"]
