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
