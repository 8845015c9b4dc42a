"""Offline handouts: a one-page HTML of a page's current view for a board or a stakeholder, and
the lessons worksheet for a class (the links they print come from
:mod:`dpcore_app.ui.common.address`; CSV downloads from :mod:`dpcore_app.ui.common.downloads`).

Everything is inline (plotly's JavaScript included), so a handout opens without a network; it
prints on one A4 page in every view (a layout of fixed widths and bounded heights, the chart
sized for paper), and the lessons worksheet on two.
"""

from __future__ import annotations

import datetime
import html
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import dpcore
from dpcore_app.ui.common.address import loopback_notice, qr_svg

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go


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
    figure: go.Figure | None = None
    table: pd.DataFrame | None = None
    notes: list = field(default_factory=list)
    scenario: str = ""


#: The printed sheet: A4 less the margins of ``@page``, in mm (96 CSS px to the inch: 190 mm is
#: 718 px). Every block of a handout has a fixed width on it and a height bounded by its text's
#: longest form, so the page fits one sheet in every view (tests/e2e/test_handout_print.py).
SHEET_MM = (190, 281)
_MARGIN_MM = (8, 10)  # top and bottom, left and right: (297 - 281) / 2, (210 - 190) / 2
#: The handout's chart, in CSS px: the sheet's width, and its plot a fifth of the sheet's height
#: whatever the legend's rows (:func:`chart_height`); its texts are set for paper
#: (:data:`PRINT_TEXT_PX`), not for a projector as on the page.
CHART_WIDTH_PX, CHART_BASE_PX, LEGEND_ROW_PX = 716, 290, 20
PRINT_TEXT_PX, PRINT_TITLE_PX = 11, 13
QR_MM = 28  # the link's QR code: 0.36 mm a module for the longest links (450 characters)

_STYLE = (
    f"@page{{size:A4;margin:{_MARGIN_MM[0]}mm {_MARGIN_MM[1]}mm}}"
    f".sheet{{max-width:{SHEET_MM[0]}mm}}"
    """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:1.5rem auto;padding:0 1rem;color:#222;font-size:8.5pt;
line-height:1.22}
.sheet{margin:0 auto}
h1{font-size:15pt;margin:0}h2{font-size:10pt;margin:0 0 .1rem}p{margin:0 0 .25rem}
.meta{font-size:7.5pt;color:#555;margin:0 0 .35rem}
.verdict{padding:.3rem .6rem;border-left:.3rem solid #0072B2;background:#eef5fb;margin:0 0 .35rem}
.cards{display:grid;grid-auto-flow:column;grid-auto-columns:minmax(0,1fr);gap:.3rem;margin:0 0 .35rem}
.card{border:1px solid #ccc;padding:.15rem .35rem;border-radius:.2rem}
.l,.s{font-size:7pt;color:#555;line-height:1.2}.v{font-size:11.5pt;font-weight:600}
.cols{column-count:2;column-gap:1.2rem;margin:0 0 .2rem}h2{break-after:avoid}
.chart{overflow:hidden;margin:0 0 .25rem}
table{border-collapse:collapse;table-layout:fixed;width:100%;font-size:7pt;margin:0 0 .3rem}
th,td{text-align:left;padding:0 .2rem;border-bottom:1px solid #ddd;vertical-align:top;
font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
tr>:first-child{width:5.6rem}thead th{overflow-wrap:normal}
.repro{display:grid;grid-template-columns:auto 1fr;gap:.6rem;align-items:start;font-size:7pt;
line-height:1.25;color:#333}
.repro svg{display:block;width:"""
    f"{QR_MM}mm;height:{QR_MM}mm"
    """}.repro p{margin:0 0 .2rem}
.repro a{word-break:break-all;color:#000}
.verdict,.cards,.cols,.chart,table,.repro{break-inside:avoid}
@media print{body{margin:0;padding:0}.sheet{max-width:none}}"""
)


def page(report: Report, today: datetime.date | None = None) -> str:
    """The handout as one self-contained HTML page for a reader who never saw the app: the
    verdict, its numbers, the answer to "at what ε?", what ε promises one patient, the
    scenario, the chart and its numbers, and the link to the exact view (text and QR code) with
    the date and dpcore's version. It prints on one A4 page in every view: each block has a
    fixed width and a bounded height (:data:`SHEET_MM`; ``today``: the date it states, default
    today)."""
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
    if report.figure is not None:  # printed on white, whatever the app's theme; sized for paper
        fig = printed(report.figure)
        chart = (
            f"<div class='chart' style='height:{fig.layout.height}px'>"
            + fig.to_html(
                full_html=False,
                include_plotlyjs=True,
                config={"displaylogo": False, "displayModeBar": False, "responsive": False},
            )
            + "</div>"
        )
    table = _wide_table(report.table) if report.table is not None else ""
    notes = "".join(f"<p class='s'>{e(n)}</p>" for n in report.notes)
    scenario = f"<h2>The scenario</h2><p>{e(report.scenario)}</p>" if report.scenario else ""
    day = (today or datetime.date.today()).isoformat()
    url = e(report.link, quote=True)
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{e(report.title)}</title>
<style>{_STYLE}</style></head><body><div class="sheet">
<h1>{e(report.title)}</h1>
<p class="meta">Prepared {day} with dpcore {e(dpcore.__version__)}. Simulated data only: Monte-Carlo
averages over repeated simulated trials, with 95% intervals.</p>
<p class="verdict">{e(report.verdict)}</p><div class="cards">{cards}</div>
<div class="cols"><h2>At what ε can we publish?</h2><p>{e(report.answer)}</p>
<p><b>Privacy.</b> {e(report.privacy)}</p>{scenario}{notes}</div>
{chart}{table}
<div class="repro">{qr_svg(report.link, error="l")}<div><p><b>To reproduce these numbers</b>, scan
the code or open this link in the dashboard; it sets every setting and seed:
<a href="{url}">{e(report.link)}</a></p>
<p><b>Study settings:</b> {settings}.</p></div></div>
</div></body></html>"""


def printed(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` for paper: on white whatever the app's theme, the sheet's width and
    :func:`chart_height`, and every text at :data:`PRINT_TEXT_PX` (the page's are sized for a
    projector)."""
    small = {"size": PRINT_TEXT_PX}
    fig = _editable(fig).update_layout(
        template="plotly_white",
        width=CHART_WIDTH_PX,
        height=chart_height(fig),
        font=small,
        title_font_size=PRINT_TITLE_PX,
        legend_font=small,
        hoverlabel_font=small,
        margin={"l": 55, "r": 10, "t": 48, "b": 10},  # the ε label above the plot
    )
    fig.update_xaxes(title_font=small, tickfont=small)
    fig.update_yaxes(title_font=small, tickfont=small)
    return fig.update_annotations(font_size=PRINT_TEXT_PX)


def chart_height(fig: go.Figure) -> int:
    """The printed chart's height in CSS px: :data:`CHART_BASE_PX` and a row for each of its
    legend's rows at the sheet's width (entries packed in trace order, about 0.6 em a character
    beside a 40 px symbol), so that the plot keeps its height when a view compares many n."""
    names = list(
        dict.fromkeys(
            trace.legendgroup or trace.name
            for trace in fig.data
            if trace.name and trace.showlegend is not False
        )
    )
    if not names or fig.layout.showlegend is False:
        return CHART_BASE_PX
    rows, used = 1, 0.0
    for name in names:
        width = 40 + 0.6 * PRINT_TEXT_PX * len(name)
        if used and used + width > CHART_WIDTH_PX - 20:
            rows, used = rows + 1, 0.0
        used += width
    return CHART_BASE_PX + LEGEND_ROW_PX * rows


def _wide_table(table: pd.DataFrame) -> str:
    """``table`` (its first column the chart's x, e.g. ε) turned a page wide: one column per
    row, a few lines tall, its corner naming the x."""
    e = html.escape
    x, *rest = table.columns
    head = "".join(f"<th>{e(str(v))}</th>" for v in table[x])
    body = "".join(
        f"<tr><th>{e(str(c))}</th>" + "".join(f"<td>{e(str(v))}</td>" for v in table[c]) + "</tr>"
        for c in rest
    )
    return f"<table><thead><tr><th>{e(str(x))}</th>{head}</tr></thead><tbody>{body}</tbody></table>"


def _editable(fig: go.Figure) -> go.Figure:
    """A copy of a (possibly shared, read-only) figure that may be changed."""
    import plotly.graph_objects as go

    return go.Figure(fig.to_dict())


#: The worksheet's QR codes and answer boxes: three lessons to an A4 page, so six print on two.
LESSON_QR_MM, ANSWER_BOX_MM = 24, 28

_LESSONS_STYLE = (
    f"@page{{size:A4;margin:{_MARGIN_MM[0]}mm {_MARGIN_MM[1]}mm}}"
    f".sheet{{max-width:{SHEET_MM[0]}mm}}.qr svg{{width:{LESSON_QR_MM}mm;height:{LESSON_QR_MM}mm}}"
    f".box{{height:{ANSWER_BOX_MM}mm}}"
    """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:1.5rem auto;padding:0 1rem;color:#222;font-size:9.5pt;
line-height:1.3}
.sheet{margin:0 auto}h1{font-size:15pt;margin:0 0 .3rem}h2{font-size:11pt;margin:0 0 .15rem}
p{margin:0 0 .2rem}.s{font-size:8pt;color:#555}a{word-break:break-all}
section{break-inside:avoid;border-top:1px solid #ccc;padding-top:.35rem;margin-top:.4rem}
.lesson{display:grid;grid-template-columns:1fr auto;gap:0 .8rem;align-items:start}
.qr svg{display:block}.box{border:1px dashed #999;margin-top:.1rem}
.warn{background:#fde8e8;padding:.35rem .5rem;font-size:8.5pt}
@media print{body{margin:0;padding:0}.sheet{max-width:none}}"""
)


def lessons_page(lessons: Iterable[Any], base: str) -> str:
    """The lessons as one printable, self-contained HTML worksheet on two A4 pages: each link
    absolute (``base`` is :func:`~dpcore_app.ui.common.address.app_base`, taken while the page
    runs), as text and as a QR code, and a box for the student's prediction; when ``base`` is
    this computer only, the worksheet says so first
    (:func:`~dpcore_app.ui.common.address.loopback_notice`)."""
    e = html.escape
    notice = loopback_notice(base)
    warn = (  # the command between backticks as code, as on the page
        f"<p class='warn'><b>Before printing.</b> {_code(e(notice))}</p>" if notice else ""
    )
    items = []
    for k, lesson in enumerate(lessons, start=1):
        url = lesson.link(base)
        caveat = f"<p class='s'>Caveat: {e(lesson.caveat)}</p>" if lesson.caveat else ""
        items.append(
            f"<section><h2>{k}. {e(lesson.title)}</h2><div class='lesson'><div>"
            f"<p><b>Question.</b> {e(lesson.question)}</p>"
            f"<p><b>Open.</b> <a href='{e(url, quote=True)}'>{e(url)}</a></p>"
            f"<p><b>Look at.</b> {e(lesson.look)}</p>{caveat}</div>"
            f"<div class='qr'>{qr_svg(url)}</div></div>"
            "<p><b>Your prediction, then the answer:</b></p><div class='box'></div></section>"
        )
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Lessons: what privacy costs</title>
<style>{_LESSONS_STYLE}</style></head><body><div class="sheet">
<h1>Lessons: what privacy costs in learning</h1>
{warn}
<p>Each link (typed, clicked or scanned) opens the dashboard with the whole experiment set.
Predict, then check.</p>
{"".join(items)}</div></body></html>"""


def _code(text: str) -> str:
    """Markdown's `code` spans of ``text`` (already escaped) as HTML <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
