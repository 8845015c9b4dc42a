"""Offline handouts: a one-page HTML of a page's current view for a board or a stakeholder, and
CSV downloads that carry their settings and a short data dictionary.

Everything is inline (plotly's JavaScript included), so a handout opens without a network; it
prints on one A4 page (its print styles size the chart and tables for it).
"""

from __future__ import annotations

import datetime
import html
import os
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

import streamlit as st

import dpcore
from dpcore.data.csv_safe import write_csv
from dpcore_app.ui.common.controls import details, link_params

DICTIONARY = {
    "n": "patients in the simulated trial",
    "epsilon": "privacy budget ε (inf: the non-private fit)",
    "gamma": "regularization γ in use",
    "rep": "repetition: one simulated trial",
    "accuracy": "% of new patients given their truly better treatment",
    "value": "average outcome under the rule (outcome units)",
    "value_paper": "the same on the authors' test-shifted scale",
    "concordance": "% agreement with the non-private rule at the same γ",
    "kappa": "Cohen's κ of that agreement",
    "disagreement": "% of new patients a second release of the same trial (fresh noise) treats "
    "otherwise",
    "noise_norm": "length of the added noise (scaled space)",
    "clipped_share": "share of weights clipped at W",
    "_same_gamma": "suffix: the noiseless rule at the same γ",
    "_mean/_sd/_se/_lo/_hi": "suffixes: mean, standard deviation, standard error, 95% interval over reps",
    "reps": "repetitions behind a summary row",
}


@dataclass
class Report:
    """What a handout shows; ``figure`` is a plotly figure or None, ``table`` a DataFrame or None;
    ``scenario`` says in words what was simulated and how (the reader never saw the app)."""

    title: str
    verdict: str
    cards: list
    answer: str
    privacy: str
    link: str
    settings: dict
    figure: object = None
    table: object = None
    notes: list = field(default_factory=list)
    scenario: str = ""


PUBLIC_URL = "DPCORE_PUBLIC_URL"  # e.g. https://stats.example.org/privacy behind a proxy


def app_base():
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


def loopback(base):
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


def lan_address():
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


def loopback_notice(base):
    """What a lecturer must know before printing links that point at this computer only, and
    how to print links a class can open; None when ``base`` is reachable by others."""
    if not loopback(base):
        return None
    port = urlsplit(base).port or st.get_option("server.port")
    lan = lan_address()
    where = f"http://{lan}:{port}" if lan else "http://ADDRESS:PORT"
    return (
        f"The links and QR codes printed here point at {base}, this computer's own address: "
        "students' phones and computers cannot open them. To print links a class can open, "
        f"start the app with {PUBLIC_URL}={where} and on an address others can reach, e.g. "
        f"`{PUBLIC_URL}={where} dpcore app --server.address 0.0.0.0`"
        + ("" if lan else " (ADDRESS: this computer's address on the class's network)")
        + ". Anyone on that network can then open the app: no one signs in "
        "(docs/deploy.md serves a class with sign-in)."
    )


def absolute(url_path, params):
    """The absolute link to ``url_path`` with ``params`` (URL names and values as the widgets
    write them)."""
    query = urlencode(params, doseq=True)
    return f"{app_base()}/{url_path.strip('/')}" + (f"?{query}" if query else "")


def link(url_path):
    """The current view's link, complete: every control of the page named with its value, so
    it reproduces the view whatever the defaults become. Build it while the page runs (a
    download's callback has no address to read)."""
    return absolute(url_path, link_params(complete=True))


def share(url_path):
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


def share_key(url_path):
    """The session-state key of a page's "Link to this view" expander (open: True)."""
    return f"share_{url_path}"


def csv(df, **to_csv):
    """A teaching table as CSV, through the project's formula guard (every CSV it writes)."""
    return write_csv(df, **to_csv)


def with_settings(df, settings, dictionary=DICTIONARY):
    """A CSV whose first lines (# comments) give the settings and a data dictionary."""
    head = ["# settings"] + [f"# {k} = {v}" for k, v in settings.items()]
    used = [
        (k, v)
        for k, v in dictionary.items()
        if k.startswith("_") and any(k.split("/")[0] in c for c in df.columns) or k in df.columns
    ]
    head += ["# data dictionary"] + [f"# {k}: {v}" for k, v in used]
    return "\n".join(head) + "\n" + write_csv(df)


#: The handout's chart, in CSS px: it fits the A4 page's printable width (210 mm less 2 × 12 mm
#: margins is 703 px at 96 px per inch) and leaves the page room for the tables.
CHART_PX = (680, 320)

_STYLE = """body{font-family:system-ui,sans-serif;max-width:44rem;margin:1.5rem auto;padding:0 1rem;color:#222;
font-size:11pt;line-height:1.3}h1{font-size:17pt;margin:0 0 .2rem}h2{font-size:12pt;margin:.7rem 0 .2rem}
p{margin:.3rem 0}.meta{font-size:9pt;color:#555;margin:0 0 .4rem}
.verdict{padding:.5rem .8rem;border-left:.35rem solid #0072B2;background:#eef5fb}
.cards{display:flex;flex-wrap:wrap;gap:.5rem;margin:.5rem 0}.card{flex:1 1 9rem;border:1px solid #ccc;
padding:.35rem .5rem;border-radius:.3rem}.l{font-size:9pt;color:#555}.v{font-size:14pt}
.s{font-size:9pt;color:#555}table{border-collapse:collapse;font-size:9pt}th,td{text-align:left;
padding:.05rem .45rem;border-bottom:1px solid #ddd;vertical-align:top}a{word-break:break-all}
th,td{font-variant-numeric:tabular-nums}.chart,table,.cards,.verdict{break-inside:avoid}
@page{size:A4;margin:11mm 12mm}
tbody th{white-space:nowrap}
@media print{body{max-width:none;margin:0;padding:0;font-size:8.5pt}.s,.l,table{font-size:8pt}h1{font-size:15pt}
h2{font-size:10.5pt;margin:.4rem 0 .1rem}.v{font-size:11.5pt}.card{padding:.2rem .4rem}
.cards{margin:.35rem 0}a{color:#000}}"""


def page(report, today=None):
    """The handout as one self-contained HTML page for a reader who never saw the app: the
    scenario, the verdict and its numbers, the chart, the settings, the date and dpcore's
    version; it prints on one A4 page (``today``: the date it states, default today)."""
    e = html.escape
    cards = "".join(
        f"<div class='card'><div class='l'>{e(a)}</div><div class='v'>{e(b)}</div>"
        f"<div class='s'>{e(c)}</div></div>"
        for a, b, c in report.cards
    )
    settings = " · ".join(
        f"{e(str(k))} <b>{e(str(v))}</b>"
        for k, v in report.settings.items()
        if k not in ("link", "page")
    )
    chart = ""
    if report.figure is not None:  # printed on white, whatever the app's theme; sized for the page
        width, height = CHART_PX
        fig = _editable(report.figure).update_layout(
            template="plotly_white", width=width, height=height
        )
        chart = (
            "<div class='chart'>"
            + fig.to_html(
                full_html=False,
                include_plotlyjs=True,
                config={"displaylogo": False, "displayModeBar": False, "responsive": False},
            )
            + "</div>"
        )
    table = ""
    if (
        report.table is not None
    ):  # one column per row of the table: a page's width, a few lines tall
        wide = report.table.set_index(report.table.columns[0]).T
        table = "<p class='s'><b>The numbers behind the chart</b></p>" + wide.to_html(
            border=0, index_names=False
        )
    notes = "".join(f"<p class='s'>{e(n)}</p>" for n in report.notes)
    scenario = f"<p><b>The scenario.</b> {e(report.scenario)}</p>" if report.scenario else ""
    day = (today or datetime.date.today()).isoformat()
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{e(report.title)}</title>
<style>{_STYLE}</style></head><body>
<h1>{e(report.title)}</h1>
<p class="meta">Prepared {day} with dpcore {e(dpcore.__version__)}. Simulated data only: Monte-Carlo
averages over repeated simulated trials, with 95% intervals.</p>
<p class="verdict">{e(report.verdict)}</p>{scenario}<div class="cards">{cards}</div>
<h2>At what ε can we publish?</h2><p>{e(report.answer)}</p>
<p><b>Privacy.</b> {e(report.privacy)}</p>{notes}{chart}{table}
<p class="s"><b>Study settings:</b> {settings}.</p>
<p class="s"><b>To reproduce these numbers</b>, open this link in the dashboard; it sets every setting and
seed: <a href="{e(report.link, quote=True)}">{e(report.link)}</a></p>
</body></html>"""


def _editable(fig):
    """A copy of a (possibly shared, read-only) figure that may be changed."""
    import plotly.graph_objects as go

    return go.Figure(fig.to_dict())


def qr_svg(url):
    """The link as an inline SVG QR code (segno: pure Python, no dependencies), for a printed
    page a phone can scan; medium error correction survives a smudge."""
    import segno

    return segno.make(url, error="m").svg_inline(scale=2, border=2)


def lessons_page(lessons, base):
    """The lessons as one printable, self-contained HTML page: each link absolute (``base`` is
    :func:`app_base`, taken while the page runs), as text and as a QR code; when ``base`` is
    this computer only, the page says so first (:func:`loopback_notice`)."""
    e = html.escape
    notice = loopback_notice(base)
    warn = f"<p class='warn'><b>Before printing.</b> {e(notice)}</p>" if notice else ""
    items = []
    for k, lesson in enumerate(lessons, start=1):
        url = lesson.link(base)
        caveat = f"<p class='s'>Caveat: {e(lesson.caveat)}</p>" if lesson.caveat else ""
        items.append(
            f"<section><h2>{k}. {e(lesson.title)}</h2><p><b>Question.</b> {e(lesson.question)}</p>"
            f"<div class='open'>{qr_svg(url)}<p><b>Open.</b> <a href='{e(url, quote=True)}'>{e(url)}</a></p></div>"
            f"<p><b>Look at.</b> {e(lesson.look)}</p>{caveat}"
            "<p><b>Your prediction, then the answer:</b></p><div class='box'></div></section>"
        )
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Lessons: what privacy costs</title>
<style>body{{font-family:system-ui,sans-serif;max-width:48rem;margin:1.5rem auto;padding:0 1rem;color:#222}}
section{{break-inside:avoid;border-top:1px solid #ccc;padding-top:.5rem}}.s{{font-size:.85rem;color:#555}}
.box{{border:1px dashed #999;height:4rem}}a{{word-break:break-all}}
.open{{display:flex;gap:1rem;align-items:center}}.open svg{{flex:none}}
.warn{{background:#fde8e8;padding:.5rem}}</style></head><body>
<h1>Lessons: what privacy costs in learning</h1>
{warn}
<p>Each link (typed, clicked or scanned) opens the dashboard with the whole experiment set.
Predict, then check.</p>
{"".join(items)}</body></html>"""
