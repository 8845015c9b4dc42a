"""The offline handouts of the DP-OWL and CVaR pages: one self-contained page each, with the
verdict, the cards with intervals, the "at what ε" answer, the privacy statement and the link."""

import math
import re

from dpcore_app.ui.common import handout
from dpcore_app.ui.owl.handout import owl_report


def test_the_cvar_page_offers_its_handout(open_fresh):
    from dpcore_app.ui.cvar import compute
    from dpcore_app.ui.cvar import handout as cvar_handout

    at = open_fresh("dpcore_app/app_pages/cvar.py")
    assert not at.exception and any("cvar_handout" in b.proto.id for b in at.get("download_button"))
    spec = {"eps": 1.0, "n": 2000, "tau": 0.05, "loss": "uniform", "B": 1.0, "reps": 200, "seed": 0}
    work = compute.workload(200)
    link = "http://localhost:8501/cvar?eps=1&n=2000"
    page = handout.page(
        cvar_handout._report(
            spec, work.reps, compute.scalar_summary("uniform", 1.0, work.reps, 0), link
        )
    )
    assert "smallest ε on the grid at which privacy adds no more error than sampling" in page
    assert not re.search(r"<script[^>]+src=", page)  # plotly inline: offline
    text = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    assert "http" not in text.split("To reproduce these numbers")[0]  # the one link is the view's


def test_the_dp_owl_handout_is_one_offline_page():
    from dpcore_app.ui.owl import compute

    s = dict(eps=0.1, n=1000, mode="paper", gamma=75, h=0.5, W="auto", prep="public", seed=0)
    results = compute.sweeps([1000], "paper", 75, 0.5, "auto", 40, 0, "public")
    summary = compute.stack_summaries(results)
    here, best = compute.cell(summary, 0.1), compute.cell(summary, math.inf)
    report = owl_report(
        s,
        here,
        best,
        "For n = 1000, the smallest ε …",
        summary,
        [1000],
        40,
        "At ε = 0.1 and 1000 patients …",
        "An attacker 50% sure …",
        view_link="http://localhost:8501/dp-owl?eps=0.1",
    )
    page = handout.page(report)
    assert "At ε = 0.1 and 1000 patients" in page and "At what ε can we publish?" in page
    assert f"95% interval {here.accuracy_lo:.1f}–{here.accuracy_hi:.1f}%" in page
    assert "An attacker 50% sure" in page and "To reproduce these numbers" in page
    assert "Two releases on the same trial disagree on" in page  # beside the share of releases
    assert f"{here.disagreement_mean:.1f}%" in page
    assert 'href="http://localhost:8501/dp-owl?eps=0.1"' in page
    assert "<script" in page and not re.search(r"<script[^>]+src=", page)  # plotly inline: offline


def test_the_printed_chart_is_sized_for_paper_and_keeps_its_plot_whatever_its_legend():
    """The page's chart is sized for a projector (14 px texts, a height for a phone's legend);
    the handout's is the sheet's width, its texts set for paper, and one legend row taller for
    each row its legend takes, so the plot keeps its height when a view compares every n."""
    import plotly.graph_objects as go

    def chart(names):
        fig = go.Figure([go.Scatter(x=[1, 2], y=[1, 2], name=name) for name in names])
        return fig.update_layout(height=900, font_size=14, legend_font_size=14)

    one, many = chart(["private, n = 1000"]), chart([f"private, n = {n}" for n in range(12)])
    small = handout.printed(one)
    assert small.layout.width == handout.CHART_WIDTH_PX and small.layout.font.size < 14
    assert small.layout.legend.font.size == handout.PRINT_TEXT_PX
    rows = (handout.chart_height(many) - handout.CHART_BASE_PX) // handout.LEGEND_ROW_PX
    assert handout.chart_height(one) == handout.CHART_BASE_PX + handout.LEGEND_ROW_PX
    assert 3 <= rows <= 4  # 12 names of 17 characters on the sheet's width
    assert one.layout.height == 900  # the page's figure is left as it was


def test_a_handout_carries_its_link_as_text_and_as_a_qr_code():
    report = handout.Report(
        "Title", "Verdict.", [("a", "1", "b")], "Answer.", "Privacy.", "http://x.org/p?a=1", {}
    )
    page = handout.page(report)
    repro = page.split('class="repro"')[1]
    assert repro.startswith("><svg") and 'href="http://x.org/p?a=1"' in repro
