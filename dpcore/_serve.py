"""The processes behind ``dpcore app`` and ``dpcore serve`` (used only by :mod:`dpcore.cli`).

``dpcore app`` runs one Streamlit server; ``dpcore serve`` runs several behind nginx, and
optionally a Dask scheduler and its workers for the replicas' uncached sweeps. Both pass
SIGTERM, SIGINT and SIGHUP on to what they started and exit once it has stopped: no server is
left running without the command that started it. Each child runs in a process group of its
own (a Ctrl-C at the terminal reaches this process only, which then stops the children in
order) and, on Linux, is sent SIGTERM by the kernel if this process dies without a chance to
stop it (SIGKILL).

Nothing here imports Streamlit, nginx or Dask: they are programs started as subprocesses.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

POSIX = os.name == "posix"  # process groups; elsewhere (Windows) the child alone is signalled
SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, n))
STOP_SECONDS = 10.0  # a child's time to stop after SIGTERM before its group gets SIGKILL
TEMPLATE = "nginx.conf.template"


class ServeError(Exception):
    """Something ``dpcore serve`` could not start, in words for the user."""


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, before exec
    """SIGTERM to this child when its parent dies (Linux's PR_SET_PDEATHSIG; kept across exec)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def start(command: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """``Popen`` in a process group of its own, stopped with its parent."""
    if POSIX:
        kwargs.update(process_group=0, preexec_fn=_die_with_parent)
    return subprocess.Popen(list(command), **kwargs)


def stop(children: Sequence[subprocess.Popen[bytes]], seconds: float = STOP_SECONDS) -> None:
    """SIGTERM each child's process group, wait up to ``seconds``, then SIGKILL what is left.

    The whole group: a Streamlit server's pool of simulation processes or a Dask worker's
    nanny processes go with it."""
    for child in children:
        _signal_group(child, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    for child in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(timeout=max(deadline - time.monotonic(), 0.0))
    for child in children:
        _signal_group(child, None)  # a straggler, or a grandchild left in the group
        if child.poll() is None:
            child.wait()


def _signal_group(child: subprocess.Popen[bytes], signum: int | None) -> None:
    """Send ``signum`` (None: kill) to the child's process group, or to the child alone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if POSIX:
            os.killpg(child.pid, signal.SIGKILL if signum is None else signum)
        elif signum is None:
            child.kill()
        else:
            child.terminate()


@contextlib.contextmanager
def on_signals(handler: Callable[[int], None]) -> Iterator[None]:
    """Call ``handler(signum)`` on SIGTERM, SIGINT and SIGHUP inside the block."""
    previous = {s: signal.signal(s, lambda signum, frame: handler(signum)) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _exit_code(code: int) -> int:
    """A shell's exit code for a child's return code (-N: killed by signal N)."""
    return 128 - code if code < 0 else code


def run_app(command: Sequence[str], cwd: Path) -> int:
    """Run one Streamlit server (``dpcore app``) until it exits; forward stop signals to it."""
    child = start(command, cwd=cwd)
    try:
        # The server stops itself on SIGTERM or SIGINT (Streamlit's own handlers).
        with on_signals(lambda signum: _signal_group(child, signum)):
            code = child.wait()
    finally:
        stop([child])  # after an error here, or whatever it left in its group
    return _exit_code(code)


# --------------------------------------------------------------------------------------------
# dpcore serve


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on ``host`` now (the OS's pick)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _answers(url: str) -> bool:
    # The proxy's own address, asked by this process: its certificate may be a test's
    # self-signed one, and nothing but "ok" is read back.
    unchecked = ssl._create_unverified_context() if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(url, timeout=2, context=unchecked) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _listening(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex((host, port)) == 0


NO_NGINX = "nginx is not installed (Debian: apt-get install nginx-light); or give --nginx PATH"


def find_nginx(given: str | None = None) -> str | None:
    """The nginx program: ``given``, else nginx on PATH, else Debian's /usr/sbin/nginx (not on
    a user's PATH)."""
    if given:
        return given
    return shutil.which("nginx") or (
        "/usr/sbin/nginx" if Path("/usr/sbin/nginx").is_file() else None
    )


def default_template(app: Path) -> Path:
    """The nginx template: ``deploy/`` beside app.py, in the source tree as in the installed
    dashboard (the wheel puts it inside ``dpcore_app``, whatever the install scheme)."""
    path = app.parent / "deploy" / TEMPLATE
    if path.is_file():
        return path
    raise ServeError(f"the nginx template {TEMPLATE} is not installed ({path}); give --template")


def render(template: str, fields: dict[str, str]) -> str:
    """``template`` with each ``{{ name }}`` replaced by ``fields[name]``; every field is needed."""
    import re

    names = set(re.findall(r"\{\{ (\w+) \}\}", template))
    if names != set(fields):
        raise ServeError(
            f"the nginx template's fields {sorted(names)} are not "
            f"{sorted(fields)}, which dpcore serve fills in"
        )
    return re.sub(r"\{\{ (\w+) \}\}", lambda m: fields[m.group(1)], template)


#: The header that names the signed-in user to the app: only the proxy sets it.
USER_HEADER = "X-Dpcore-User"
#: The header that carries the run's secret from nginx to the replicas, so that a request
#: made to a replica's loopback port past nginx (another account on the machine) is not
#: taken for a signed-in user.
PROXY_HEADER = "X-Dpcore-Proxy"
AUTH_MODES = ("htpasswd", "header")


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP address or ``localhost``) is on this machine only."""
    host = address.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


def _host(address: str) -> str:
    """``address`` as nginx's ``listen`` and a URL write it: an IPv6 address in brackets."""
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


def _quoted(path: Path) -> str:
    """``path`` as a quoted nginx string; a character nginx would read otherwise (a quote, a
    backslash, ``$`` of a variable, a control character) is refused."""
    text = str(path)
    if any(c in text for c in '"\\$') or any(ord(c) < 32 for c in text):
        raise ServeError(f"nginx cannot be given the path {text!r}: rename or move the file")
    return f'"{text}"'


def _auth_lines(auth: str | None, htpasswd: Path | None, secret: str) -> str:
    """nginx's directives for the user header (and basic authentication): ``auth`` is None,
    "htpasswd" (nginx checks each request against the ``htpasswd`` file) or "header" (a proxy
    on the loopback in front, such as oauth2-proxy, has signed the user in and sets it)."""
    pad = "        "
    if auth is None:
        # No authentication: no header names a user (a client's own is replaced by nothing).
        return f'{pad}proxy_set_header {USER_HEADER} "";'
    lines = []
    if auth == "htpasswd":
        lines += [
            f'{pad}auth_basic "dpcore";',
            f"{pad}auth_basic_user_file {_quoted(Path(str(htpasswd)))};",
            # proxy_set_header replaces whatever header of that name the client sent: the app
            # sees only the user nginx has checked.
            f"{pad}proxy_set_header {USER_HEADER} $remote_user;",
            f'{pad}proxy_set_header Authorization "";  # the password stops here',
        ]
    elif auth == "header":
        lines.append(f"{pad}proxy_set_header {USER_HEADER} $http_x_dpcore_user;")
    else:
        raise ServeError(f"--auth must be one of {', '.join(AUTH_MODES)}, got {auth!r}")
    lines.append(f"{pad}proxy_set_header {PROXY_HEADER} {secret};")
    return "\n".join(lines)


def _tls_lines(tls: tuple[Path, Path] | None) -> str:
    if tls is None:
        return ""
    cert, key = tls
    return (
        f"        ssl_certificate {_quoted(cert)};\n"
        f"        ssl_certificate_key {_quoted(key)};\n"
        "        ssl_protocols TLSv1.2 TLSv1.3;"
    )


def nginx_config(
    template: str,
    prefix: Path,
    listen: str,
    ports: Sequence[int],
    *,
    auth: str | None = None,
    htpasswd: Path | None = None,
    tls: tuple[Path, Path] | None = None,
    secret: str = "",
) -> str:
    """The nginx configuration: ``listen`` (``host:port``) in front of replicas on ``ports``;
    with ``auth`` ("htpasswd" and its file, or "header"), the signed-in user in
    :data:`USER_HEADER` and ``secret`` in :data:`PROXY_HEADER`; with ``tls`` (certificate,
    key) nginx listens with ``ssl``."""
    if auth is not None and not secret:
        raise ServeError("an authenticating proxy needs its secret for the replicas")
    user = ""
    if POSIX and os.geteuid() == 0:
        import grp
        import pwd

        # As root, nginx's workers drop to a user; its default "nobody nobody" names a group
        # Debian does not have, so name the user's own group.
        who = pwd.getpwnam("nobody")
        user = f"user {who.pw_name} {grp.getgrgid(who.pw_gid).gr_name};"
    servers = "\n".join(
        f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=10s;" for p in ports
    )
    # Health answers "ok" and nothing else: it needs no password (dpcore serve and a load
    # balancer ask it).
    health = "\n".join(
        f"        location = /_replica/{k}/health {{\n"
        f"            auth_basic off;\n"
        f"            proxy_pass http://127.0.0.1:{p}/_stcore/health;\n"
        f"        }}"
        for k, p in enumerate(ports, start=1)
    )
    numbers = "\n".join(f"        127.0.0.1:{p} {k};" for k, p in enumerate(ports, start=1))
    return render(
        template,
        {
            "user": user,
            "prefix": str(prefix),
            "listen": listen + (" ssl" if tls else ""),
            "tls": _tls_lines(tls),
            "auth": _auth_lines(auth, htpasswd, secret),
            "servers": servers,
            "health": health,
            "numbers": numbers,
        },
    )


@dataclass
class Child:
    """A started program, with the name the messages give it and its log file."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 15) -> str:
        text = self.log.read_text(errors="replace") if self.log.is_file() else ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class ServeOptions:
    """What ``dpcore serve`` runs: see its ``--help``."""

    replicas: int = 2
    port: int = 8501
    address: str = "127.0.0.1"
    auth: str | None = None  # "htpasswd" (with htpasswd) or "header"
    htpasswd: Path | None = None
    keepers: tuple[str, ...] = ()
    tls_cert: Path | None = None
    tls_key: Path | None = None
    insecure_no_auth: bool = False
    dask_workers: int = 0
    scheduler: str | None = None
    nginx: str | None = None
    template: Path | None = None
    log_dir: Path | None = None
    timeout: float = 90.0
    warm_up: bool = True  # each replica builds the class's first view before ready


#: The file a replica writes once it has built the class's first view (dpcore_app.replica).
WARM_UP_ENV = "DPCORE_WARM_UP"
INSECURE = (
    "WARNING: dpcore serve listens on {address}, beyond this machine, {what}. Anyone who can "
    "reach it {who}. Use --auth htpasswd FILE with --tls-cert and --tls-key (docs/deploy.md)."
)


def check_exposure(o: ServeOptions) -> str | None:
    """Refuse a server that others could reach without authentication (or whose passwords
    would cross the network in clear); return the loud warning to print when
    ``--insecure-no-auth`` lets it start anyway, else None."""
    if o.auth not in (None, *AUTH_MODES):
        raise ServeError(f"--auth must be one of {', '.join(AUTH_MODES)}, got {o.auth!r}")
    if o.auth == "htpasswd":
        if o.htpasswd is None:
            raise ServeError("--auth htpasswd needs the users file: --auth htpasswd FILE")
        if not Path(o.htpasswd).is_file():
            raise ServeError(f"the users file {o.htpasswd} does not exist")
    elif o.htpasswd is not None:
        raise ServeError("a users file goes with --auth htpasswd only")
    if (o.tls_cert is None) != (o.tls_key is None):
        raise ServeError("give --tls-cert and --tls-key together")
    for path in (o.tls_cert, o.tls_key):
        if path is not None and not Path(path).is_file():
            raise ServeError(f"the TLS file {path} does not exist")
    if o.keepers and o.auth is None:
        raise ServeError("--keeper names a signed-in user: it needs --auth")
    if is_loopback(o.address):
        return None
    if o.auth == "header":
        raise ServeError(
            f"--auth header trusts the {USER_HEADER} header of whoever connects: nginx must "
            f"listen on a loopback address (127.0.0.1) behind the proxy that signs users in, "
            f"not on {o.address}"
        )
    if o.auth is None:
        if not o.insecure_no_auth:
            raise ServeError(
                f"--address {o.address} is not a loopback address and there is no --auth: "
                "anyone who can reach it could use the app and spend the privacy budget of "
                "every dataset. Give --auth htpasswd FILE (and --tls-cert, --tls-key), or "
                "--insecure-no-auth if that is really what you want"
            )
        return INSECURE.format(
            address=o.address,
            what="with no authentication",
            who="uses the app and spends the privacy budget of every dataset",
        )
    if o.tls_cert is None:
        if not o.insecure_no_auth:
            raise ServeError(
                f"--auth htpasswd on {o.address} without --tls-cert and --tls-key would send "
                "every password in clear over the network: give a certificate, or "
                "--insecure-no-auth if that is really what you want"
            )
        return INSECURE.format(
            address=o.address,
            what="with basic authentication and no TLS",
            who="on the way can read every password and every page",
        )
    return None


class Server:
    """nginx in front of N Streamlit replicas, and optionally a local Dask cluster.

    ``start()`` brings everything up in order (Dask, the replicas, their health, nginx, its
    health); ``stop()`` takes it down in the reverse order. Not thread-safe: one per process.
    """

    def __init__(
        self,
        app: Path,
        flags: Sequence[str],
        options: ServeOptions,
        say: Callable[[str], None] = print,
    ) -> None:
        self.app, self.flags, self.options, self.say = app, list(flags), options, say
        self.run_dir = Path(tempfile.mkdtemp(prefix="dpcore-serve-"))
        self.log_dir = Path(options.log_dir or self.run_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.dask: list[Child] = []
        self.replicas: list[Child] = []
        self.ports: list[int] = []
        self.proxy: Child | None = None
        self.stopping = threading.Event()
        self.env = dict(os.environ)
        # One cookie secret for every replica: Streamlit signs its XSRF cookie with it, so an
        # upload still works when a session moves to another replica.
        self.env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
        # Who is signed in: the replicas trust the user header only when this run's nginx
        # authenticates and sends its secret with it; otherwise no header names anyone.
        self.secret = secrets.token_hex(32)
        for name in ("DPCORE_AUTH_HEADER", "DPCORE_PROXY_SECRET", "DPCORE_KEEPERS"):
            self.env.pop(name, None)
        if options.auth is not None:
            self.env["DPCORE_AUTH_HEADER"] = USER_HEADER
            self.env["DPCORE_PROXY_SECRET"] = self.secret
            self.env["DPCORE_KEEPERS"] = ",".join(options.keepers)

    def _start(
        self,
        name: str,
        command: Sequence[str],
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> Child:
        log = self.log_dir / f"{name.replace(' ', '-')}.log"
        with open(log, "ab") as out:
            process = start(
                command,
                cwd=cwd,
                env=self.env if env is None else env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        return Child(name, process, log)

    def _wait(self, child: Child, ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + self.options.timeout
        while not ready():
            if self.stopping.is_set():
                raise ServeError("stopped while starting")
            if child.process.poll() is not None:
                raise ServeError(
                    f"{child.name} exited with code {child.process.returncode} "
                    f"before {what}:\n{child.tail()}"
                )
            if time.monotonic() > deadline:
                raise ServeError(
                    f"{child.name} did not {what} within {self.options.timeout:g} "
                    f"s:\n{child.tail()}"
                )
            time.sleep(0.2)

    def start(self) -> None:
        """Start everything, or raise :class:`ServeError` (what did start is then stopped by
        :meth:`stop`)."""
        o = self.options
        if o.replicas < 1:
            raise ServeError(f"--replicas must be at least 1, got {o.replicas}")
        check_exposure(o)
        nginx = find_nginx(o.nginx)
        if nginx is None:
            raise ServeError(NO_NGINX)
        template = (o.template or default_template(self.app)).read_text()
        if o.dask_workers:
            self._start_dask(o.dask_workers)
        elif o.scheduler:
            self.env["DPCORE_SCHEDULER"] = o.scheduler
        # With the warm-up, dpcore_app.replica runs `streamlit run` and builds the first view.
        streamlit = [
            sys.executable,
            "-m",
            "dpcore_app.replica" if o.warm_up else "streamlit",
            "run",
            str(self.app),
            *self.flags,
            "--server.address",
            "127.0.0.1",
            "--server.headless",
            "true",
        ]
        warm_files = []
        for k in range(1, o.replicas + 1):
            port = free_port()
            self.ports.append(port)
            env = self.env
            if o.warm_up:
                warm_files.append(self.run_dir / f"replica-{k}.warm")
                env = dict(self.env, **{WARM_UP_ENV: str(warm_files[-1])})
            self.replicas.append(
                self._start(
                    f"replica {k}",
                    [*streamlit, "--server.port", str(port)],
                    cwd=self.app.parent,
                    env=env,
                )
            )
        for child, port in zip(self.replicas, self.ports):
            health = f"http://127.0.0.1:{port}/_stcore/health"
            self._wait(child, functools.partial(_answers, health), "answer /_stcore/health")
        for k, (child, done) in enumerate(zip(self.replicas, warm_files), start=1):
            self._wait(child, done.exists, "build the first view (DP-OWL's default link)")
            text = done.read_text().strip()
            if not text.startswith("ok"):
                self.say(f"dpcore serve: replica {k} did not build its first view ({text})")
        conf = self.run_dir / "nginx.conf"
        if POSIX and os.geteuid() == 0:
            self.run_dir.chmod(0o711)  # nginx's workers (user nobody) reach their temp paths
        tls = None if o.tls_cert is None or o.tls_key is None else (o.tls_cert, o.tls_key)
        text = nginx_config(
            template,
            self.run_dir,
            f"{_host(o.address)}:{o.port}",
            self.ports,
            auth=o.auth,
            htpasswd=self._users_file(),
            tls=None if tls is None else (Path(tls[0]).resolve(), Path(tls[1]).resolve()),
            secret=self.secret,
        )
        # The config holds the proxy's secret: for this user (and root's nginx master) only.
        conf.touch(mode=0o600)
        conf.write_text(text)
        self.proxy = self._start(
            "nginx",
            [
                nginx,
                "-p",
                str(self.run_dir),
                "-c",
                str(conf),
                "-e",
                str(self.run_dir / "error.log"),
                "-g",
                "daemon off;",
            ],
        )
        self.proxy.log = self.run_dir / "error.log"  # nginx writes its errors there
        host = "127.0.0.1" if o.address in ("0.0.0.0", "::", "[::]") else _host(o.address)
        base = f"{self.scheme}://{host}:{o.port}"
        self._wait(
            self.proxy,
            lambda: _answers(f"{base}/_stcore/health"),
            f"answer on port {o.port}",
        )
        for k in range(1, o.replicas + 1):
            if not _answers(f"{base}/_replica/{k}/health"):
                raise ServeError(
                    f"replica {k} does not answer through nginx (/_replica/{k}/health)"
                )

    def _users_file(self) -> Path | None:
        """The htpasswd file nginx's workers read at each request (a user added or removed
        counts at once). As root they run as ``nobody``, who cannot read a file private to
        root: they get a copy of their own in the run's directory (then a change to the
        users takes a restart)."""
        if self.options.htpasswd is None:
            return None
        given = Path(self.options.htpasswd).resolve()
        if not (POSIX and os.geteuid() == 0):
            return given
        import pwd

        who = pwd.getpwnam("nobody")
        copy = self.run_dir / "htpasswd"
        copy.touch(mode=0o400)
        copy.write_bytes(given.read_bytes())
        os.chown(copy, who.pw_uid, who.pw_gid)
        return copy

    def _start_dask(self, workers: int) -> None:
        port = free_port()
        address = f"tcp://127.0.0.1:{port}"
        scheduler = self._start(
            "dask scheduler",
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--no-dashboard",
                # Even without its dashboard the scheduler serves HTTP (health, metrics) on
                # the dashboard's address, by default every interface at :8787: keep it on
                # the loopback, on a free port (two servers on one machine never clash).
                "--dashboard-address",
                "127.0.0.1:0",
            ],
        )
        self.dask.append(scheduler)
        self._wait(scheduler, lambda: _listening("127.0.0.1", port), f"listen on {port}")
        # The workers import dpcore beside app.py, the same version as the replicas'.
        self.dask.append(
            self._start(
                "dask workers",
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_worker",
                    address,
                    "--nworkers",
                    str(workers),
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    # Each worker's own ports (peers, nanny, HTTP): the loopback only.
                    "--host",
                    "127.0.0.1",
                    "--dashboard-address",
                    "127.0.0.1:0",
                ],
                cwd=self.app.parent,
            )
        )
        self.env["DPCORE_SCHEDULER"] = address

    @property
    def scheme(self) -> str:
        return "https" if self.options.tls_cert else "http"

    def describe(self) -> str:
        """What runs where, for the person who started it."""
        o = self.options
        lines = [
            f"dpcore serve: {o.replicas} app process(es) behind nginx at "
            f"{self.scheme}://{_host(o.address)}:{o.port}/"
        ]
        if o.auth == "htpasswd":
            lines.append(f"  users: nginx basic authentication against {o.htpasswd}")
        elif o.auth == "header":
            lines.append(f"  users: named by the {USER_HEADER} header of the proxy in front")
        else:
            lines.append("  users: no authentication (one local user: every dataset)")
        if o.keepers:
            lines.append(f"  keepers (see every dataset): {', '.join(o.keepers)}")
        for k, (child, port) in enumerate(zip(self.replicas, self.ports), start=1):
            lines.append(
                f"  replica {k}: 127.0.0.1:{port} (pid {child.process.pid}), health "
                f"/_replica/{k}/health, log {child.log}"
            )
        if self.dask:
            lines.append(
                f"  dask scheduler {self.env['DPCORE_SCHEDULER']} with {o.dask_workers} worker(s)"
            )
        elif self.env.get("DPCORE_SCHEDULER"):
            lines.append(f"  sweeps on the dask scheduler {self.env['DPCORE_SCHEDULER']}")
        lines.append(f"  nginx config {self.run_dir / 'nginx.conf'}")
        lines.append("Stop with Ctrl-C or SIGTERM.")
        return "\n".join(lines)

    def watch(self) -> int:
        """Serve until a stop signal (0) or until nginx or every replica has exited (1).

        A replica that exits on its own is reported and not restarted: its sessions move to
        the others at their next request."""
        gone: set[int] = set()
        while not self.stopping.wait(0.5):
            assert self.proxy is not None
            if self.proxy.process.poll() is not None:
                self.say(
                    f"dpcore serve: nginx exited with code {self.proxy.process.returncode}:"
                    f"\n{self.proxy.tail()}"
                )
                return 1
            for k, child in enumerate(self.replicas, start=1):
                if k not in gone and child.process.poll() is not None:
                    gone.add(k)
                    self.say(
                        f"dpcore serve: replica {k} exited with code "
                        f"{child.process.returncode}; {len(self.replicas) - len(gone)} "
                        "left (its sessions move to them)"
                    )
            if len(gone) == len(self.replicas):
                return 1
        return 0

    def stop(self) -> None:
        """nginx first (no new sessions), then the replicas, then Dask; remove the run's files."""
        if self.proxy is not None:
            stop([self.proxy.process])
        stop([c.process for c in self.replicas])
        stop([c.process for c in reversed(self.dask)])
        shutil.rmtree(self.run_dir, ignore_errors=True)


def serve(app: Path, flags: Sequence[str], options: ServeOptions) -> int:
    """Run ``dpcore serve`` until a stop signal; its exit code."""
    try:
        warning = check_exposure(options)
    except ServeError as exc:
        print(f"dpcore serve: error: {exc}", file=sys.stderr)
        return 1
    if warning:
        print(f"\n{'!' * 78}\n{warning}\n{'!' * 78}\n", file=sys.stderr, flush=True)
    server = Server(app, flags, options)
    with on_signals(lambda signum: server.stopping.set()):
        try:
            server.start()
            print(server.describe(), flush=True)
            return server.watch()
        except ServeError as exc:
            if server.stopping.is_set():
                return 0
            print(f"dpcore serve: error: {exc}", file=sys.stderr)
            return 1
        finally:
            server.stop()
