"""What the DP-OWL page decides from a sweep, as pure functions: the share of single releases
meeting a target, paired with the same simulated trial where the target is relative."""

import math

import numpy as np
import pytest

from dpcore.montecarlo import wilson_interval
from dpcore_app.ui.owl import decide
from dpcore_app.ui.owl import decide_compute as targets
from tests.app.conftest import page_sweep

REPS = 40


@pytest.fixture(scope="module")
def runs():
    """The page's own sweep at n = 200 (paper-tuned γ, public bounds, W auto, seed 0)."""
    return page_sweep([200], [1.0, 10.0, math.inf], REPS).runs


@pytest.mark.parametrize("p", [1, 2, 5])
def test_without_privacy_every_release_is_within_p_points_of_its_own_nonprivate_fit(runs, p):
    """At ε = ∞ the release is the non-private fit: paired, 100% are within p points (the
    Wilson bound as high as 40 repetitions allow); against the non-private rules' average, as
    before, the trial-to-trial spread of the non-private rule itself counted as misses."""
    target = targets.Target("points", p)
    best = targets.per_trial(runs)
    share = targets.share_at(runs, math.inf, target.threshold(best))
    assert share.share == 1.0 and share.releases == REPS
    assert share.lo == pytest.approx(REPS / (REPS + 1.959964**2))  # the most 40 can show
    assert share.lo == pytest.approx(float(wilson_interval(REPS, REPS)[0]))
    unpaired = targets.share_at(runs, math.inf, target.threshold(best.mean()))
    assert unpaired.share < 1.0  # the old comparison with the average
    if p == 1:
        assert unpaired.share < 0.9


def test_a_paired_share_counts_each_release_against_its_own_trial(runs):
    target = targets.Target("points", 5)
    best = targets.per_trial(runs)
    private = runs[runs.epsilon == 10.0].sort_values("rep")
    expected = np.mean(private.accuracy.to_numpy() >= best[private.rep.to_numpy()] - 5)
    assert targets.share_at(runs, 10.0, target.threshold(best)).share == pytest.approx(expected)
    # "k of 100" is the same bar for every trial, whatever the best rule did
    assert targets.Target("patients", 80).threshold(best) == 80.0


def test_the_fixed_gamma_reference_is_paired_with_the_very_trials_of_the_sweep(runs):
    """In fixed-γ mode the best non-private rule is a separate simulation: its accuracy on each
    trial must be that of the paper-mode sweep's ε = ∞ fit on the same trial."""
    s = dict(mode="free", h=0.5, W="auto", seed=0, prep="public", n=200)
    summary, per_trial = targets.best_nonprivate(200, 0.5, "auto", REPS, 0, "public")
    assert np.allclose(per_trial, targets.per_trial(runs))
    assert summary["accuracy_mean"] == pytest.approx(per_trial.mean())
    assert np.allclose(decide.best_per_trial(s, None, REPS), per_trial)
    paper = dict(s, mode="paper")
    assert np.allclose(decide.best_per_trial(paper, runs, REPS), per_trial)


def test_the_target_says_what_it_is_compared_with():
    points, patients = targets.Target("points", 5), targets.Target("patients", 80)
    assert points.words(85.34) == (
        "within 5 percentage points of the accuracy of the best non-private rule learned from "
        "the same patients (85.3% on average)"
    )
    assert patients.words(80.0) == (
        "at least 80 of 100 new patients get the better treatment (80.0%)"
    )
    assert points.reach(85.3).startswith("come within 5 points of the best non-private rule")
    assert patients.reach(80.0) == "reach 80.0%"


# ---- too few repetitions to show the assurance -------------------------------------------------


@pytest.mark.parametrize("reps", [20, 500])  # the repetitions control's extremes
def test_the_repetitions_floor_at_the_extremes_of_the_repetitions_control(reps):
    from dpcore_app.ui.owl.decide import ASSURANCE

    floors = {0.5: 4, 0.8: 16, 0.9: 35, 0.95: 73}
    assert set(ASSURANCE.options) == set(floors)
    for assurance, floor in floors.items():
        expected = floor if reps < floor else None
        assert targets.reps_needed(reps, assurance) == expected
        # where it is enough, a perfect record does show it
        if expected is None:
            assert float(wilson_interval(reps, reps)[0]) >= assurance
    # the settings offered on the control (20, 40, ... 500)
    assert targets.control_setting(35, 20, 20, 500) == 40
    assert targets.control_setting(73, 20, 20, 500) == 80
    assert targets.control_setting(20, 20, 20, 500) == 20
    assert targets.control_setting(900, 20, 20, 500) == 500


def hit(at, mean=85.0):
    return targets.Hit(at, mean, mean - 2, mean + 2)


def test_too_few_repetitions_are_said_as_such_not_as_a_failure_of_the_rule():
    from dpcore_app.ui.owl.decide_explain import cannot_show, eps_answer_sentence, verdict

    text = cannot_show(20, 35, 0.9)
    assert text.startswith("20 simulated trials cannot show that 9 of 10 single releases reach")
    assert "would be 83.9%, below 90%" in text and "at least 35 repetitions" in text
    mean_answer = targets.EpsAnswer(80.0, hit(5.0), None, None)
    for eps in (1.0, math.inf):
        answer = eps_answer_sentence(
            None, mean_answer, 1000, eps, None, [200, 1000], 90.0, 80.0, 0.9, needed=35, reps=20
        )
        assert answer.startswith("For n = 1000, " + text)
        assert "at no ε" not in answer and "none of the simulated sizes" not in answer
        assert "On average the rule reaches 80.0% from ε = 5" in answer
    enough = eps_answer_sentence(None, mean_answer, 1000, 1.0, None, [200, 1000], 90.0, 80, 0.9)
    assert "at no ε on the grid up to 1000 do 9 of 10 single releases reach 80.0%" in enough
    cell = {"accuracy_mean": 85.0, "accuracy_lo": 83.0, "accuracy_hi": 87.0}
    share = targets.Share(1.0, 1.0, 0.839, 1.0, 86.0, 20)
    best = {"accuracy_mean": 90.0}
    kind, said = verdict(1.0, 1000, cell, best, 80.0, "t", share, 0.9, needed=35)
    assert kind == "warning" and said.endswith(
        "The target is met on average; whether 9 of 10 single releases reach it cannot be "
        "shown with 20 simulated trials (it takes at least 35)."
    )
    kind, said = verdict(1.0, 1000, cell, best, 80.0, "t", share, 0.9)
    assert kind == "warning" and "one release may miss it" in said


@pytest.mark.parametrize("eps", [0.1, 1.0, math.inf])
def test_the_one_line_verdict_at_too_few_repetitions_names_no_eps_and_claims_none_fails(eps):
    """Below the repetitions that can show 9 of 10 (20 < 35), no ε on the grid can be named:
    the one-line verdict says the repetitions cannot show it at any ε, for each judgement,
    and never that no private ε gets there (a claim these trials cannot make)."""
    from dpcore_app.ui.owl.decide_explain import headline, judge

    best = {"accuracy_mean": 90.0, "accuracy_lo": 89.0, "accuracy_hi": 91.0}
    cases = {  # judgement: (cell, threshold, share) at 20 simulated trials
        "coin": ((51.0, 50.04, 52.3), 50.0, targets.Share(eps, 0.5, 0.3, 0.7, 51.0, 20)),
        "unshown": ((85.0, 83.0, 87.0), 80.0, targets.Share(eps, 1.0, 0.839, 1.0, 86.0, 20)),
        "not met": ((70.0, 68.0, 72.0), 80.0, targets.Share(eps, 0.1, 0.03, 0.3, 70.0, 20)),
    }
    for said, ((mean, lo, hi), threshold, share) in cases.items():
        here = {"accuracy_mean": mean, "accuracy_lo": lo, "accuracy_hi": hi}
        assert judge(here, threshold, share, 0.9, needed=35) == said
        _, line = headline(eps, here, best, threshold, share, 0.9, needed=35, assured=None)
        assert "No private ε" not in line and "Smallest ε" not in line
        assert line.endswith("cannot show 9 of 10 at any ε (that takes at least 35).")
        # with enough repetitions, "average" (the same numbers as "unshown") names the grid
        _, enough = headline(eps, here, best, threshold, share, 0.9, assured=None)
        assert "No private ε on the grid gets 9 of 10 releases there" in enough
    here = {"accuracy_mean": 85.0, "accuracy_lo": 83.0, "accuracy_hi": 87.0}
    assert judge(here, 80.0, cases["unshown"][2], 0.9) == "average"
