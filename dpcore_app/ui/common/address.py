"""The app's address and the links it writes: the public address (``$DPCORE_PUBLIC_URL``, else the
one the browser used), whether it names this computer only and what a lecturer must then know,
the absolute link to a page's current view, its "Link to this view" expander and its QR code.
Every link the app writes is absolute and reproduces the view it was taken from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

import streamlit as st

from dpcore_app.ui.common.controls import details
from dpcore_app.ui.common.link import link_params

PUBLIC_URL = "DPCORE_PUBLIC_URL"  # e.g. https://stats.example.org/privacy behind a proxy


def app_base() -> str:
    """The app's public address, with no trailing slash: ``$DPCORE_PUBLIC_URL`` when set (a
    deployment behind a proxy whose outside address the server cannot see), else the address
    the browser used for this session (scheme, host and port, plus server.baseUrlPath), else
    this server on localhost. Never empty: every link the app writes is absolute."""
    public = os.environ.get(PUBLIC_URL, "").strip()
    if public:
        return public.rstrip("/")
    path = "/" + str(st.get_option("server.baseUrlPath") or "").strip("/")
    seen = urlsplit(str(st.context.url or ""))
    if seen.scheme in ("http", "https") and seen.netloc:
        return f"{seen.scheme}://{seen.netloc}{path}".rstrip("/")
    host = st.context.headers.get("Host") if st.context.headers else None
    return (
        f"http://{host}" if host else f"http://localhost:{st.get_option('server.port')}"
    ) + path.rstrip("/")


def loopback(base: str) -> bool:
    """Whether ``base`` (:func:`app_base`) names this computer only (localhost, 127.x, ::1):
    links and QR codes to it open nothing on anyone else's device."""
    import ipaddress

    host = urlsplit(base).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def lan_address() -> str | None:
    """This computer's address on its local network, or None (no packet is sent: a UDP socket
    is pointed at a private address only to read the interface the system would use)."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") else address


def loopback_notice(base: str) -> str | None:
    """What a lecturer must know before printing links that point at this computer only, and
    how to print links a class can open; None when ``base`` is reachable by others."""
    if not loopback(base):
        return None
    port = urlsplit(base).port or st.get_option("server.port")
    lan = lan_address()
    where = f"http://{lan or 'ADDRESS'}:{port}"
    return (
        f"The links and QR codes printed here point at {base}, this computer's own address: "
        "students' phones and computers cannot open them. To print links a class can open, "
        f"start the app with {PUBLIC_URL}={where} and on an address others can reach, e.g. "
        f"`{PUBLIC_URL}={where} dpcore app --server.address 0.0.0.0`"
        + ("" if lan else " (ADDRESS: this computer's address on the class's network)")
        + ". Anyone on that network can then open the app: no one signs in "
        "(docs/deploy.md serves a class with sign-in)."
    )


def absolute(url_path: str, params: Mapping[str, Any], base: str | None = None) -> str:
    """The absolute link to ``url_path`` with ``params`` (URL names and values as the widgets
    write them); ``base``: the app's address, default :func:`app_base`."""
    query = urlencode(params, doseq=True)
    base = app_base() if base is None else base.rstrip("/")
    return f"{base}/{url_path.strip('/')}" + (f"?{query}" if query else "")


def link(url_path: str) -> str:
    """The current view's link, complete: every control of the page named with its value, so
    it reproduces the view whatever the defaults become. Build it while the page runs (a
    download's callback has no address to read)."""
    return absolute(url_path, link_params(complete=True))


def share(url_path: str) -> None:
    """The view's link, with a copy button, written only while its expander is open: the code
    block's highlighter is 1.5 MB of script that a browser would otherwise load and run before
    the page's first chart (0.4-0.7 s of it at 1440 px)."""
    box = details(
        "Link to this view (copy, print, mail)", share_key(url_path), icon=":material/link:"
    )
    if box.open:
        with box:
            st.code(link(url_path), language=None, wrap_lines=True)
            st.caption(
                "The link sets every control of the page; opening it reproduces this view "
                f"(the same seeds, the same numbers). Behind a proxy, set {PUBLIC_URL} to "
                "the address people use."
            )


def share_key(url_path: str) -> str:
    """The session-state key of a page's "Link to this view" expander (open: True)."""
    return f"share_{url_path}"


def qr_svg(url: str, error: str = "m") -> str:
    """The link as an inline SVG QR code (segno: pure Python, no dependencies) for a printed
    page a phone can scan, drawn at the size its style sets (a viewBox, no size of its own):
    medium error correction survives a smudge; low keeps the modules of a long link large."""
    import segno

    return segno.make(url, error=error).svg_inline(omitsize=True, border=2)
