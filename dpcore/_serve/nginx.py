"""nginx in front of ``dpcore serve``'s replicas: where the program is, its configuration from
the shipped template, and the headers that carry who is signed in.

With authentication (``htpasswd``: nginx checks each request; ``header``: a proxy on the
loopback in front has signed the user in), nginx names the user in :data:`USER_HEADER` and
sends the run's secret in :data:`PROXY_HEADER`, so a request made to a replica past nginx is
never taken for a signed-in user; without it, no header names anyone.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from .processes import POSIX, ServeError

__all__ = [
    "AUTH_MODES",
    "NO_NGINX",
    "PROXY_HEADER",
    "TEMPLATE",
    "USER_HEADER",
    "default_template",
    "find_nginx",
    "nginx_config",
    "render",
]

TEMPLATE = "nginx.conf.template"
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
