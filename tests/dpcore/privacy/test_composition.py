"""The one rule for a release without a guarantee (:func:`void_reasons`) every learner's ledger
entry applies: bounds read from the data, an infinite ε, noise drawn from an int seed."""

import math

import numpy as np

from dpcore.privacy.composition import seeded_noise, void_reasons


def test_a_private_release_has_no_reason():
    assert void_reasons(False, 1.0, np.random.default_rng(0)) == []
    assert void_reasons((), {"fit": 1.0, "evaluation": 0.5}.values(), None) == []


def test_each_reason_in_the_ledger_words():
    assert void_reasons(True) == ["feature bounds read from the data"]
    assert void_reasons(["feature bounds", "outcome bounds", "feature bounds"]) == [
        "feature bounds read from the data",
        "outcome bounds read from the data",
    ]
    assert void_reasons(epsilon=math.inf) == ["epsilon = inf (no noise)"]
    assert void_reasons(epsilon=[1.0, np.inf]) == ["epsilon = inf (no noise)"]
    assert void_reasons(rng=7) == ["seeded noise (seed 7)"]
    assert void_reasons(rng=np.random.SeedSequence(7)) == ["seeded noise (a SeedSequence)"]


def test_a_seed_is_anything_numpy_makes_a_generator_from_never_none_or_a_generator():
    # numpy draws the same noise from True or [1, 2] every time, as from an int
    seeds = (0, np.int64(3), True, [1, 2], np.array([4, 5]), np.random.SeedSequence(1))
    assert all(seeded_noise(r) for r in seeds)
    made = (np.random.default_rng(0), np.random.PCG64(0), np.random.RandomState(0))
    assert not any(seeded_noise(r) for r in (None, *made))
    assert void_reasons(rng=True) == ["seeded noise (seed True)"]
    assert void_reasons(rng=[1, 2]) == ["seeded noise (seed [1, 2])"]
