"""The release path of a rule and its private evaluation (``fit_and_evaluate``) as the tests
run it: its settings, and the draws it asks of OpenDP's sampler."""

import numpy as np

from dpcore.owl.evaluation_fit import fit_and_evaluate
from dpcore.owl.simulate import PAPER_TRIAL

BOUNDS = (-10.0, 10.0)

#: The settings of the release path's tests (``fit_and_evaluate``): ε = 1 to fit and to evaluate.
RELEASE = dict(
    epsilon_fit=1.0,
    epsilon_eval=1.0,
    gamma=50.0,
    outcome_bounds=BOUNDS,
    feature_bounds=PAPER_TRIAL.feature_bounds,
    weight_bound=40.0,
    larger_is_better=True,
)


def opendp_draws(monkeypatch, settings):
    """The draws (ε, sensitivity, size) a release on 300 patients of the paper's trial asks of
    OpenDP's sampler (replaced by one that records them and adds zeros), with ``settings`` and
    ε_eval = 0.5; and the release's evaluation."""
    import dpcore.privacy.mechanisms as mech

    calls = []
    monkeypatch.setattr(
        mech,
        "opendp_laplace_noise",
        lambda e, s, size: calls.append((e, s, size)) or np.zeros(size),
    )
    t = PAPER_TRIAL.sample(300, rng=3)
    _, ev, _ = fit_and_evaluate(
        t["X"], t["A"], t["B"], 0.5, sampler="opendp", rng=0, **{**settings, "epsilon_eval": 0.5}
    )
    return calls, ev
