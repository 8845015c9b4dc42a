"""Chart functions and sentences of the private CVaR page: pure data in, figure or words out."""

import math

import numpy as np
import pytest

from dpcore.cvar.learning_study import class_study, convex_study
from dpcore.cvar.sweep import cvar_sweep, sweep_summary
from dpcore.cvar.tail_risk import rule_tail_risk
from dpcore.montecarlo import summarize
from dpcore_app.ui.cvar import charts
from dpcore_app.ui.cvar.compute import curve
from tests.ui.slider_steps import check_steps


@pytest.fixture(scope="module")
def summary():
    runs = cvar_sweep("uniform", (200, 1000), (0.05, 0.5), (0.1, 1.0, math.inf), 1.0, 20, 0)
    return sweep_summary(runs, 1.0)


def names(fig):
    return [t.name for t in fig.data if t.name]


@pytest.mark.parametrize("x_axis,current", [("epsilon", 1.0), ("n", 1000), ("tau", 0.05)])
def test_error_curves_draw_the_parts_and_the_rate(summary, x_axis, current):
    rows = curve(summary, x_axis, 1000, 0.05, 1.0)
    fig = charts.error_curves(rows, x_axis, current, 1.0)
    assert [n.split(" ")[0] for n in names(fig)] == ["total", "privacy", "statistical", "rate"]
    total = next(t for t in fig.data if (t.name or "").startswith("total"))
    np.testing.assert_allclose(total.y, rows.total_mean)
    np.testing.assert_allclose(total.x, rows[x_axis])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert (
        fig.layout.title.text
        and fig.layout.xaxis.title.text
        and "B = 1" in fig.layout.yaxis.title.text
    )
    assert (
        fig.layout.legend.yref == "container" and fig.layout.legend.y == 0
    )  # under the x title, however long
    assert any(
        a.text == f"{charts.X_AXES[x_axis][1]} = {current:g}" for a in fig.layout.annotations
    )


def test_non_private_view_has_no_privacy_part(summary):
    fig = charts.error_curves(curve(summary, "n", 1000, 0.05, math.inf), "n", 1000, 1.0)
    assert not any(n.startswith("privacy") for n in names(fig))


def test_collapse_has_one_curve_per_tau_and_the_reference(summary):
    rows = curve(summary, "eps_n_tau", 1000, 0.05, 1.0)
    fig = charts.error_curves(rows, "eps_n_tau", None, 1.0)
    assert names(fig) == ["τ = 0.05", "τ = 0.5", "B·min{1, 1/(εnτ)}"]
    np.testing.assert_allclose(fig.data[0].x, [5.0, 50.0])  # eps n tau at n = 1000, tau = 0.05
    ref = fig.data[-1]
    np.testing.assert_allclose(ref.y, np.minimum(1.0, 1.0 / np.asarray(ref.x)))


def test_zero_errors_become_gaps_on_log_axes():
    assert np.isnan(charts._positive([0.0, -1.0])).all()
    assert charts._positive([0.5])[0] == 0.5


def test_exponential_mechanism_charts():
    study = class_study(500, 0.1, 11, (0.5, 5.0, math.inf))
    fig = charts.selection_probabilities(study, 1)
    np.testing.assert_allclose(fig.data[0].y, study.probs[1])
    assert "ε = 5" in fig.layout.title.text
    assert "non-private" in charts.selection_probabilities(study, 2).layout.title.text
    ex = charts.class_excess(study, 0.5)
    assert len(ex.data) == 4 and len(ex.data[0].x) == 2  # the non-private point is left out
    np.testing.assert_allclose(ex.data[1].y, study.excess_emp[:2])
    tiny = class_study(2000, 0.5, 5, (1000.0,))  # an excess of ~1e-300: a gap, not 10^-300
    assert np.isnan(charts.class_excess(tiny, 1000.0).data[1].y).all()


def test_phase_transition_chart():
    runs = convex_study(500, 0.2, (2, 4), (1.0, 100.0), reps=3, steps=10)
    fig = charts.phase_transition(summarize(runs, ("d", "ratio"), ("excess",)), 28.1)
    assert names(fig) == ["d = 2", "d = 4"]
    assert fig.layout.xaxis.type == "log"
    lines = {s.x0 for s in fig.layout.shapes if s.x0 == s.x1}  # vertical lines only
    assert lines == {1.0, 28.1}  # Corollary 6.6's scale and the measured transition
    assert any(a.text == "measured: halves at ≈ 28" for a in fig.layout.annotations)


def test_rates_beyond_their_proven_range_are_marked():
    study = class_study(500, 0.1, 11, (0.5, 5.0, 1000.0))
    shaded = [s for s in charts.class_excess(study, 0.5).layout.shapes if s.type == "rect"]
    assert len(shaded) == 1 and shaded[0].x0 == 1.0 and shaded[0].x1 == 1000.0
    small = class_study(500, 0.1, 11, (0.05, 0.5))
    assert not [s for s in charts.class_excess(small, 0.5).layout.shapes if s.type == "rect"]


@pytest.mark.parametrize("eps_cvar", [1.0, math.inf])
def test_rule_tail_chart(eps_cvar):
    res = rule_tail_risk(300, 0.1, 2.0, eps_cvar)
    fig = charts.rule_tail(res, 2.0, eps_cvar)
    bars = fig.data[0]
    np.testing.assert_allclose(
        bars.x, [res.best_rule, res.nonprivate_rule, res.private_rule, res.released]
    )
    assert bars.error_x.array[-1] == res.halfwidth
    assert "10%" in fig.layout.title.text


@pytest.mark.parametrize("x_axis", ["epsilon", "n", "tau"])
def test_the_error_chart_carries_every_eps_as_a_step_of_its_own(summary, x_axis):
    """Against n or τ each step draws the errors at its ε; against ε it moves the mark."""
    grid, n, tau = (0.1, 1.0, math.inf), 1000, 0.05
    curves = {e: curve(summary, x_axis, n, tau, e) for e in grid}
    mark = lambda e: {"epsilon": e, "n": n, "tau": tau}[x_axis]  # noqa: E731
    static = {e: charts.error_curves(curves[e], x_axis, mark(e), 1.0, e) for e in grid}
    fig = charts.error_curves_steps(curves, x_axis, n, tau, 1.0, 1.0)
    assert check_steps(fig, static, 1.0) == ["0.1", "1", "non-private"]
