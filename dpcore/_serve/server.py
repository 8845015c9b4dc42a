"""``dpcore serve``: nginx in front of N Streamlit replicas, and optionally a local Dask
scheduler and its workers for the replicas' uncached sweeps, started in order, watched, and
stopped in the reverse order.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from .nginx import NO_NGINX, USER_HEADER, default_template, find_nginx, nginx_config
from .options import WARM_UP_ENV, ServeOptions, check_exposure
from .processes import POSIX, Child, ServeError, free_port, on_signals, start, stop

__all__ = ["Server", "serve"]


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


def _host(address: str) -> str:
    """``address`` as nginx's ``listen`` and a URL write it: an IPv6 address in brackets."""
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


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
