"""What ``dpcore serve`` runs (:class:`ServeOptions`) and who could reach it: a server others
could reach without authentication, or whose passwords would cross the network in clear, is
refused unless ``--insecure-no-auth`` says so (and then it starts with a loud warning).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from .nginx import AUTH_MODES, USER_HEADER
from .processes import ServeError

__all__ = ["INSECURE", "WARM_UP_ENV", "ServeOptions", "check_exposure", "is_loopback"]


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP address or ``localhost``) is on this machine only."""
    host = address.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


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
