"""DP-OWL charts as pure functions: what each draws, and that it draws what its caption says."""

import math

import numpy as np
import pytest

from dpcore import expected_noise_radius
from dpcore.owl.experiments import owl_monte_carlo
from dpcore_app.ui.common.charts import GREY
from dpcore_app.ui.owl import charts
from tests.ui.slider_steps import check_steps


@pytest.fixture(scope="module")
def summary():
    return owl_monte_carlo(
        [200, 500], [0.5, 5.0, np.inf], gamma="paper", reps=10, test_size=300, seed=1
    ).summary


def names(fig):
    return [t.name for t in fig.data if t.name]


def test_curves_draw_both_nonprivate_references_in_one_colour(summary):
    fig = charts.curves_vs_epsilon(summary, "accuracy", [200, 500], 0.5)
    assert names(fig).count("best non-private rule") == 2  # one per n, one legend entry
    assert (
        sum(t.showlegend is not False for t in fig.data if t.name == "best non-private rule") == 1
    )
    references = [t for t in fig.data if t.name and t.name.startswith("non-private")]
    assert {t.line.color for t in references} == {GREY}
    same = next(t for t in fig.data if t.name == "non-private at the same γ")
    rows = summary[(summary.n == 200) & np.isfinite(summary.epsilon)].sort_values("epsilon")
    np.testing.assert_allclose(same.y, rows.accuracy_same_gamma_mean)
    texts = [a.text for a in fig.layout.annotations]
    assert any("coin flip" in t for t in texts) and any("ε = 0.5" in t for t in texts)


def test_agreement_has_no_nonprivate_level_and_value_no_coin_flip(summary):
    fig = charts.curves_vs_epsilon(summary, "concordance", [200], 5.0)
    assert not any(n.startswith("non-private") for n in names(fig))
    value = charts.curves_vs_epsilon(summary, "value", [200], 5.0)
    assert not any("coin flip" in (a.text or "") for a in value.layout.annotations)


def test_the_nonprivate_state_draws_no_private_band(summary):
    fig = charts.curve_vs_n(summary, "accuracy", math.inf)
    assert names(fig) == ["non-private"]
    dist = charts.distribution(None, np.arange(10.0), "accuracy", math.inf)
    assert names(dist) == ["non-private"] and dist.data[0].marker.color == GREY
    bars = charts.coefficients(("a", "b"), np.ones(2))
    assert names(bars) == ["non-private"]


def test_the_noise_picture_and_its_circle_describe_the_same_thing():
    theta_hat, noise = np.zeros(5), np.array([0.1, 0.2, -0.3, 4.0, -3.0])
    radius = expected_noise_radius(5, 1.0, 0.5, k=2)
    fig = charts.noise_vector(theta_hat, noise, radius)
    circle = fig.data[0]
    np.testing.assert_allclose(np.hypot(circle.x, circle.y), radius)  # centred on θ̂, that radius
    x0, x1 = fig.layout.xaxis.range
    y0, y1 = fig.layout.yaxis.range
    for x, y in ((noise[3], noise[4]), (radius, 0.0)):  # the released point and the circle fit
        assert x0 <= x <= x1 and y0 <= y <= y1


def test_gamma_curve_marks_the_pick_and_the_best_mean():
    import pandas as pd

    curve = pd.DataFrame(
        {
            "gamma": [1.0, 21.0, 41.0],
            "value_mean": [1.0, 3.0, 2.9],
            "value_lo": [0.5, 2.5, 2.4],
            "value_hi": [1.5, 3.5, 3.4],
        }
    )
    fig = charts.gamma_curve(curve, 41.0, "value", top=21.0, paper_value=75.0)
    texts = [a.text for a in fig.layout.annotations]
    assert texts == ["picked γ = 41", "best mean γ = 21", "paper table γ = 75"]


def test_the_eps_chart_names_what_it_draws_in_fixed_mode_and_marks_the_target(summary):
    from dpcore_app.ui.owl.decide_compute import Hit

    fixed = owl_monte_carlo(
        [200, 500], [0.5, 5.0, np.inf], gamma=1000.0, reps=10, test_size=300, seed=1
    ).summary
    fig = charts.curves_vs_epsilon(
        fixed,
        "accuracy",
        [200, 500],
        0.5,
        mode="free",
        gamma=1000,
        best={500: 88.0},
        reference_ns=(500,),
        target=(80.0, Hit(5.0, 81.0, 79.0, 83.0)),
    )
    grey = [
        t
        for t in fig.data
        if t.name in ("best non-private rule", "non-private at the fixed γ = 1000")
    ]
    assert len(grey) == 2 and {t.name for t in grey} == {
        "best non-private rule",
        "non-private at the fixed γ = 1000",
    }
    assert list(next(t for t in grey if t.name == "best non-private rule").y) == [88.0, 88.0]
    assert any(t.name == "ε to publish at: 5" and list(t.x) == [5.0] for t in fig.data)
    assert any(a.text == "target: 80.0%" for a in fig.layout.annotations)


def test_the_n_caption_says_what_the_noise_does_in_each_mode():
    """With the paper's table γ changes with n, so the noise's length does too: the caption
    gives the lengths the page uses, and says "the same at every n" only for a fixed γ."""
    from dpcore_app.ui.owl.compute import noise_lengths
    from dpcore_app.ui.owl.explain import n_curve_caption

    lengths = noise_lengths([200, 1000], 1.0, "paper", 75, "auto")
    assert round(lengths[200], 1) == 3.2 and round(lengths[1000], 1) == 6.4
    paper = n_curve_caption(1.0, "paper", lengths)
    assert "3.2 at n = 200, 6.4 at n = 1000" in paper and "does not grow" not in paper
    assert "the same at every n" in n_curve_caption(1.0, "free")
    fixed = noise_lengths([200, 1000], 1.0, "free", 75, "auto")
    assert fixed[200] == fixed[1000]


def test_the_n_chart_carries_every_eps_of_the_sweep_as_a_step_of_its_own(summary):
    """The chart against n redraws at every ε of the sweep in the browser: each step is the
    chart the page draws at that ε, and the page's ε is the active step."""
    refs = {"treat_all": 49.9, "treat_none": 50.1}
    grid = (0.5, 5.0, math.inf)  # the fixture's sweep
    static = {e: charts.curve_vs_n(summary, "accuracy", e, refs, "non-private") for e in grid}
    fig = charts.curve_vs_n_steps(summary, "accuracy", 5.0, refs, "non-private")
    assert check_steps(fig, static, 5.0) == ["0.5", "5", "non-private"]
    # Without privacy the chart draws no private band: at load it is hidden, then shown.
    check_steps(charts.curve_vs_n_steps(summary, "accuracy", math.inf, refs), static, math.inf)
    value = {e: charts.curve_vs_n(summary, "value", e) for e in grid}
    check_steps(charts.curve_vs_n_steps(summary, "value", 0.5), value, 0.5)
