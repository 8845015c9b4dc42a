"""The printed materials fit their paper: the DP-OWL and CVaR handouts on one A4 page in every
view, the lessons worksheet on two. Chromium prints each to PDF, loaded from a file as a reader
opens it, and the PDF's pages are counted.

Each handout is the one the page offers for a view: built by the page's own functions from the
view's controls, with the link the page writes (every control named, as ``address.link`` does)
at its real length. The views are the default and the longest texts found over a search of the
controls (the longest verdict, the longest answer to "at what ε?", every trial size compared and
a public address behind a proxy, the smallest ε and n, no privacy). Before the print layout six
of the seven DP-OWL views printed on two pages, and the CVaR handout's table was wider than the
page (Chromium then shrinks the whole page to fit): the width is checked too.

Cheap by design: the quick estimate's repetitions (``compute.QUICK_REPS``) and the shared
results store, one browser and one tab for every PDF of a process (each handout written to the
same file: Chromium then reuses the inline plotly.js it has compiled, 0.4 s a handout instead of
1.3 s), one test per view for pytest-xdist to spread.
"""

from __future__ import annotations

import html
import math
import re

import pytest

from dpcore_app.ui.common import address, handout
from dpcore_app.ui.common.grids import N_OPTIONS

pytestmark = pytest.mark.e2e

#: The address a browser on the lecturer's own computer uses (Streamlit's default port), and one
#: behind a proxy (DPCORE_PUBLIC_URL), longer than most.
LOCAL = "http://localhost:8501"
PUBLIC = "https://dpcore.teaching.example-university.org/courses/privacy-in-learning"
#: The sheet Chromium prints on: A4 less the handout's @page margins, in CSS px (96 to the inch).
SHEET_PX = tuple(round(mm / 25.4 * 96) for mm in handout.SHEET_MM)

OWL_VIEWS = {  # the controls that differ from the page's defaults (the link names them all)
    "default": {},
    "non_private": dict(eps=math.inf),
    "smallest_eps": dict(eps=0.05, k=55),
    "largest_eps_within_1_point": dict(eps=1000.0, target="points", p=1),
    "smallest_n_alone_shift_within_20_points": dict(
        eps=1000.0, n=100, compare=(), prep="paper", target="points", p=20, assurance=0.5
    ),
    "fixed_gamma_shift_points_longest_verdict": dict(
        gamma_mode="free",
        gamma=75,
        eps=1000.0,
        n=2500,
        compare=(),
        prep="paper",
        target="points",
        p=20,
        assurance=0.5,
    ),
    "every_n_longest_answer_public_address": dict(
        base=PUBLIC,
        eps=500.0,
        n=3000,
        compare=tuple(m for m in N_OPTIONS if m != 3000),
        prep="paper",
        target="points",
        p=5,
        assurance=0.5,
        metric="value",
        scale="paper",
    ),
}
CVAR_VIEWS = {
    "default": {},
    "tau_1": dict(tau=1.0),
    "non_private": dict(eps=math.inf, n=100),
    "smallest_n_tau_eps_hard_instance": dict(
        n=100, tau=0.01, eps=0.05, loss="two-point", B=100.0, reps=20
    ),
    "largest_n_eps": dict(n=5000, eps=1000.0, B=0.5, reps=20),
    "every_dimension_public_address": dict(
        base=PUBLIC, x="eps_n_tau", M=301, d=(1, 2, 5, 10, 20, 50), eps_rule=1000.0
    ),
}


def state(controls, given):
    """Every control of a page at its value in the view ``given`` (others at their defaults),
    each one a value the page's link accepts back."""
    values = {c.key: c.default for c in controls}
    assert set(given) <= set(values), set(given) - set(values)
    values.update(given)
    for c in controls:
        raw = c.to_url(values[c.key])
        assert c.from_url(raw if isinstance(raw, list) else [raw]) == (values[c.key], None), c.key
    return values


def view_link(controls, url_path, values, base):
    """The link the page writes for the view: ``address.link`` (every control) at ``base``."""
    params = {c.key: c.to_url(values[c.key]) for c in controls}
    return address.absolute(url_path, params, base=base)


def owl_handout(given):
    """The DP-OWL page's handout for the view: its sweeps, verdict and sentences for a board."""
    from dpcore_app.ui.owl import compute, view_model
    from dpcore_app.ui.owl import decide_compute as targets
    from dpcore_app.ui.owl.controls import CONTROLS
    from dpcore_app.ui.owl.handout import view_report

    given = dict(given)
    base = given.pop("base", LOCAL)
    v = state(CONTROLS, {"reps": compute.QUICK_REPS, **given})
    s = {k: v[k] for k in ("eps", "n", "compare", "gamma", "prep", "h", "W", "reps", "seed")}
    s["mode"] = v["gamma_mode"]
    work, args = view_model.workload(s)
    view = view_model.view(s, compute.sweeps(work.sizes, *args), work.reps)
    level = v["k"] if v["target"] == "patients" else v["p"]
    d = view_model.decision(
        s, view, (targets.Target(v["target"], level), float(v["assurance"])), work.reps
    )
    d |= view_model.words(s, view, d, work.reps)
    link = view_link(CONTROLS, "dp-owl", v, base)
    return view_report(s, view, d, work.sizes, work.reps, view_link=link)


def cvar_handout(given):
    from dpcore_app.ui.cvar import compute
    from dpcore_app.ui.cvar import handout as cvar
    from dpcore_app.ui.cvar.controls import CONTROLS

    given = dict(given)
    base = given.pop("base", LOCAL)
    v = state(CONTROLS, given)
    work = compute.workload(v["reps"])
    summary = compute.scalar_summary(v["loss"], v["B"], work.reps, v["seed"])
    return cvar._report(v, work.reps, summary, view_link(CONTROLS, "cvar", v, base))


def pages_of(pdf):
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf))


#: The content's height, and its width: the page's, or a drawing's right edge where a box clips it
#: (Chromium shrinks a page wider than the sheet; a clipped chart would print cut off).
_EXTENT = """() => [document.body.scrollHeight, Math.max(document.documentElement.scrollWidth,
    ...[...document.querySelectorAll("svg")].map((e) => Math.ceil(e.getBoundingClientRect().right)))]"""


@pytest.fixture(scope="module")
def sheet(browser, tmp_path_factory):
    """One tab for every PDF, laid out as for print on the sheet's width, and the one file each
    handout is written to in turn; returns print(html) -> (PDF, content height in px, width)."""
    context = browser.new_context(viewport={"width": SHEET_PX[0], "height": SHEET_PX[1]})
    tab = context.new_page()
    tab.emulate_media(media="print")
    path = tmp_path_factory.mktemp("print") / "handout.html"

    def print_(text, ready=None):
        path.write_text(text, encoding="utf-8")
        tab.goto(path.as_uri())
        if ready:  # e.g. this file's chart drawn, not the last one's
            tab.locator(ready).first.wait_for(timeout=20_000)
        height, width = tab.evaluate(_EXTENT)
        return tab.pdf(format="A4", print_background=True), height, width

    try:
        yield print_
    finally:
        context.close()


def check(sheet, report, name):
    text = handout.page(report)
    for said in (
        "Prepared ",
        " with dpcore ",
        "The scenario",
        "At what ε can we publish?",
        "<b>Privacy.</b>",
        "<svg",  # the QR code of the view's link
        f'href="{html.escape(report.link, quote=True)}"',
        "Study settings:",
    ):
        assert said in text, said
    words = re.sub(r"<script.*?</script>", "", text, flags=re.S)  # what the reader reads
    assert not re.search(r"slider|under “Also show n”|press |click |this page", words, re.I)
    ready = f".verdict:has-text({report.verdict[:40]!r}) ~ .chart .main-svg"  # this view's chart
    pdf, height, width = sheet(text, ready)
    assert width <= SHEET_PX[0], f"the {name} handout is {width} px wide, the sheet {SHEET_PX[0]}"
    assert pages_of(pdf) == 1, (
        f"the {name} handout prints on {pages_of(pdf)} A4 pages ({height} px of {SHEET_PX[1]})"
    )


@pytest.mark.parametrize("view", list(OWL_VIEWS))
def test_the_dp_owl_handout_prints_on_one_a4_page(sheet, view):
    check(sheet, owl_handout(OWL_VIEWS[view]), f"DP-OWL {view}")


@pytest.mark.parametrize("view", list(CVAR_VIEWS))
def test_the_cvar_handout_prints_on_one_a4_page(sheet, view):
    check(sheet, cvar_handout(CVAR_VIEWS[view]), f"CVaR {view}")


@pytest.mark.parametrize("base", [LOCAL, PUBLIC], ids=["this_computer", "public_address"])
def test_the_lessons_worksheet_prints_on_two_a4_pages(sheet, base, monkeypatch):
    """With the notice before printing (this computer's address, no network address known: its
    longest form) and without it (a public address)."""
    from dpcore_app.ui.lessons.catalog import LESSONS

    monkeypatch.setattr(address, "lan_address", lambda: None)
    text = handout.lessons_page(LESSONS, base)
    assert ("Before printing." in text) == (base == LOCAL)
    assert text.count("<section>") == text.count("<svg") == len(LESSONS)
    pdf, height, width = sheet(text)
    assert width <= SHEET_PX[0], f"the worksheet is {width} px wide, the sheet {SHEET_PX[0]}"
    assert pages_of(pdf) <= 2, f"the worksheet prints on {pages_of(pdf)} A4 pages"
