"""``dpcore app``, ``dpcore serve`` and ``dpcore warm``: the dashboard, for one user or a
department (behind nginx), and its views computed ahead."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from .._extras import install_hint
from .common import EXIT_MISSING, CliError


def app_files() -> tuple[Path, list[str]]:
    """app.py and Streamlit's flags from the app's .streamlit/config.toml beside it.

    The files are found with importlib.resources in the ``dpcore_app`` package (any install
    scheme: a venv, ``pip install --user``, ``--target``, a system install) or, in a source
    checkout, at the repository's root. The config's options are passed as flags too, so they
    hold whatever directory Streamlit is started from.
    """
    try:
        import dpcore_app
    except ImportError:
        raise CliError(
            "the dashboard's files are not installed (no dpcore_app package)", EXIT_MISSING
        ) from None
    root = dpcore_app.root()
    app, config = root / "app.py", root / ".streamlit" / "config.toml"
    if not app.is_file():
        raise CliError(f"the dashboard's app.py is missing from {root}", EXIT_MISSING)
    flags: list[str] = []
    if config.is_file():
        import tomllib

        flags = config_flags(tomllib.loads(config.read_text(encoding="utf-8")))
    return app, flags


def config_flags(options: dict, prefix: str = "") -> list[str]:
    """Streamlit's command-line flags for a parsed config.toml: one ``--section.option=value``
    per option, nested tables (``[theme.light]``) included."""
    flags: list[str] = []
    for key, value in options.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flags += config_flags(value, f"{name}.")
        else:
            flags.append(f"--{name}={value}")
    return flags


def cmd_app(args: argparse.Namespace) -> int:
    """Start the dashboard with Streamlit (the ``app`` extra)."""
    import importlib.util

    if importlib.util.find_spec("streamlit") is None:
        raise CliError("the dashboard needs the app extra: " + install_hint("app"), EXIT_MISSING)
    from .._serve.processes import run_app

    app, flags = app_files()
    command = [sys.executable, "-m", "streamlit", "run", str(app), *flags, *args.streamlit_args]
    return run_app(command, cwd=app.parent)  # SIGTERM and Ctrl-C stop the server, then us


def cmd_serve(args: argparse.Namespace) -> int:
    """Several app processes behind nginx, optionally with a Dask cluster (the ``app`` extra)."""
    import importlib.util

    from .._serve.nginx import NO_NGINX, find_nginx
    from .._serve.options import ServeOptions, check_exposure
    from .._serve.processes import ServeError
    from .._serve.server import serve

    auth, htpasswd = _auth_option(args.auth)
    options = ServeOptions(
        replicas=args.replicas,
        port=args.port,
        address=args.address,
        auth=auth,
        htpasswd=htpasswd,
        keepers=tuple(dict.fromkeys(k.strip() for k in args.keeper)),
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        insecure_no_auth=args.insecure_no_auth,
        dask_workers=args.dask_workers,
        scheduler=args.scheduler,
        nginx=args.nginx,
        template=args.template,
        log_dir=args.log_dir,
        timeout=args.timeout,
        warm_up=not args.no_warm_up,
    )
    if any(not k or "," in k for k in options.keepers):
        raise CliError(f"--keeper takes one user name, got {args.keeper}")
    try:
        check_exposure(options)  # a server others could reach unprotected never starts
    except ServeError as exc:
        raise CliError(str(exc)) from None
    if importlib.util.find_spec("streamlit") is None:
        raise CliError(
            "serving the dashboard needs the app extra: " + install_hint("app"), EXIT_MISSING
        )
    if args.dask_workers and importlib.util.find_spec("distributed") is None:
        raise CliError("--dask-workers needs the dask extra: " + install_hint("dask"), EXIT_MISSING)
    if args.replicas < 1 or args.dask_workers < 0:
        raise CliError(
            f"--replicas must be at least 1 and --dask-workers at least 0, got "
            f"{args.replicas} and {args.dask_workers}"
        )
    if find_nginx(args.nginx) is None:
        raise CliError(NO_NGINX, EXIT_MISSING)
    if args.scheduler and args.dask_workers:
        raise CliError(
            "give --dask-workers (a cluster started here) or --scheduler (one "
            "running elsewhere), not both"
        )
    app, flags = app_files()
    return serve(app, flags, options)


def _auth_option(given: list[str] | None) -> tuple[str | None, Path | None]:
    """``--auth htpasswd FILE`` or ``--auth header`` as (mode, users file)."""
    if not given:
        return None, None
    if given[0] == "htpasswd" and len(given) == 2:
        return "htpasswd", Path(given[1])
    if given == ["header"]:
        return "header", None
    raise CliError(f"--auth takes 'htpasswd FILE' or 'header', got {' '.join(given)!r}")


def cmd_warm(args: argparse.Namespace) -> int:
    """Precompute the dashboard's views into the shared results store (the ``app`` extra)."""
    import importlib.util

    if importlib.util.find_spec("streamlit") is None:
        raise CliError(
            "warming the dashboard's views needs the app extra: " + install_hint("app"),
            EXIT_MISSING,
        )
    app, _ = app_files()
    command = [sys.executable, "-m", "dpcore_app.warm", *args.warm_args]  # runs dpcore_app.warm
    return subprocess.call(command, cwd=app.parent)
