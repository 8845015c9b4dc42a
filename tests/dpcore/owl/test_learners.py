"""The three private learners side by side (dpcore.owl.learners), as the benchmark and the
DP-OWL page call them."""

import math

import numpy as np
import pytest

from dpcore.owl.learners import (
    DESIGNS,
    check_against_the_estimators,
    compare_learners,
    learner_summary,
)


def test_without_noise_each_vectorized_learner_is_its_estimator():
    X, A, B = DESIGNS[0].sample(200, 2, np.random.default_rng(0))
    check_against_the_estimators(X, A, B)


def test_a_cell_does_not_depend_on_the_grids_around_it():
    small, _ = compare_learners([200], [1.0], reps=3, seed=4, test_size=200)
    large, _ = compare_learners([300, 200], [math.inf, 1.0], reps=3, seed=4, test_size=200)
    cell = large[(large.n == 200) & (large.epsilon == 1.0)].reset_index(drop=True)
    np.testing.assert_array_equal(cell.agreement, small.agreement)
    np.testing.assert_array_equal(cell.value, small.value)


def test_rows_and_summary():
    runs, refs = compare_learners([200], [0.5, math.inf], reps=4, test_size=300)
    assert len(runs) == 2 * 3 * 4
    assert runs.agreement.between(0, 100).all()
    assert refs["paper"]["optimal"] > refs["paper"]["treat all"]
    summary = learner_summary(runs)
    assert len(summary) == 6
    assert (summary.agreement_lo <= summary.agreement_mean).all()
    assert (summary.agreement_mean <= summary.agreement_hi).all()


@pytest.mark.parametrize(
    "kwargs, message",
    [({"designs": ["nope"]}, "designs"), ({"reps": 1}, "reps")],
)
def test_bad_arguments_name_themselves(kwargs, message):
    with pytest.raises(ValueError, match=message):
        compare_learners([200], [1.0], **{"reps": 3, **kwargs})


def test_paired_differences_are_taken_repetition_by_repetition():
    from dpcore.owl.learners import learner_differences

    runs, _ = compare_learners([200], [1.0], reps=4, test_size=300)
    diffs = learner_differences(runs)
    assert len(diffs) == 3
    row = diffs[(diffs["first"] == "plug-in") & (diffs["second"] == "DP-OWL objective")]
    if row.empty:
        row = diffs[(diffs["first"] == "DP-OWL objective") & (diffs["second"] == "plug-in")]
        sign = -1.0
    else:
        sign = 1.0
    a = runs[runs.learner == "plug-in"].agreement.to_numpy()
    b = runs[runs.learner == "DP-OWL objective"].agreement.to_numpy()
    assert sign * row.difference_mean.iloc[0] == pytest.approx(np.mean(a - b))
