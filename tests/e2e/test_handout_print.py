"""The DP-OWL and CVaR handouts print on exactly one A4 page: Chromium's PDF of each handout,
loaded from a file as a reader opens it, counted page by page. One browser (the run's shared
one), no server.

Over 10 s (about 15 s on the shared 2-core machine): the two handouts' simulations at the page's
default view (four trial sizes; the results store shares them with tests/ui/test_chart_style.py)
and Chromium parsing the 4 MB of inline plotly.js twice; a smaller view would not test the page a
board prints.
"""

from __future__ import annotations

import math
import re

import pytest

from dpcore_app.ui.common import handout
from dpcore_app.ui.common.explain import privacy_statement
from dpcore_app.ui.owl import decide_compute as targets
from dpcore_app.ui.owl import decide_explain as explain
from dpcore_app.ui.owl.handout import owl_report

pytestmark = pytest.mark.e2e

CHART = ".main-svg"


def owl_handout():
    """The DP-OWL page's default view (ε = 1, n = 1000 beside 200, 500, 2500; the default target)
    at the quick estimate's repetitions, with the sentences the page writes for a board."""
    from dpcore_app.ui.owl import compute

    s = dict(eps=1.0, n=1000, mode="paper", gamma=75, h=0.5, W="auto", prep="public", seed=0)
    sizes, reps = (200, 500, 1000, 2500), compute.QUICK_REPS
    results = compute.sweeps(sizes, "paper", 75, 0.5, "auto", reps, 0, "public")
    summary, runs = compute.stack_summaries(results), {m: r for m, (r, _, _) in results.items()}
    here, best = (
        compute.cell(summary[summary.n == 1000], 1.0),
        compute.cell(summary[summary.n == 1000], math.inf),
    )
    target, assurance = targets.Target("patients", 80), 0.9
    threshold = target.threshold(best.accuracy_mean)
    share = targets.share_at(runs[1000], 1.0, threshold)
    _, sentence = explain.verdict(
        1.0, 1000, here, best, threshold, target.words(threshold), share, assurance
    )
    assured = targets.smallest_assured_eps(runs[1000], threshold, assurance)
    answer = explain.eps_answer_sentence(
        assured,
        targets.smallest_eps(summary, 1000, threshold),
        1000,
        1.0,
        targets.smallest_assured_n(runs, 1.0, dict.fromkeys(sizes, threshold), assurance),
        sizes,
        best.accuracy_mean,
        threshold,
        assurance,
        board=True,
    )
    mark = (threshold, targets.hit_at(summary, 1000, assured.at if assured else None))
    report = owl_report(
        s,
        here,
        best,
        answer,
        summary,
        sizes,
        reps,
        sentence,
        privacy_statement(1.0),
        mark,
        (share, assurance),
        view_link="http://localhost:8501/dp-owl?" + "&".join(f"k{i}=v{i}" for i in range(25)),
    )
    return handout.page(report)


def cvar_handout():
    from dpcore_app.ui.cvar import compute
    from dpcore_app.ui.cvar import handout as cvar_handout

    spec = {"eps": 1.0, "n": 2000, "tau": 0.05, "loss": "uniform", "B": 1.0, "reps": 200, "seed": 0}
    work = compute.workload(200)
    summary = compute.scalar_summary("uniform", 1.0, work.reps, 0)
    return handout.page(
        cvar_handout._report(spec, work.reps, summary, "http://localhost:8501/cvar?eps=1&n=2000")
    )


def pages_of(pdf):
    return len(re.findall(rb"/Type\s*/Page[^s]", pdf))


def test_each_handout_prints_on_one_a4_page(browser, tmp_path):
    for name, build in (("dp_owl", owl_handout), ("cvar", cvar_handout)):
        text = build()
        assert "Prepared " in text and "with dpcore " in text and "The scenario" in text
        words = re.sub(r"<script.*?</script>", "", text, flags=re.S)  # what the reader reads
        assert not re.search(r"slider|under “Also show n”|press |click |this page", words, re.I)
        path = tmp_path / f"{name}_handout.html"
        path.write_text(text, encoding="utf-8")
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(path.as_uri())
            page.locator(CHART).first.wait_for(timeout=20_000)  # plotly drawn before printing
            pdf = page.pdf(format="A4", print_background=True)
        finally:
            context.close()
        assert pages_of(pdf) == 1, f"the {name} handout prints on {pages_of(pdf)} A4 pages"
