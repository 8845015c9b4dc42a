"""Three private learners of a two-arm treatment rule, side by side on simulated trials.

DP-OWL released by output perturbation (the paper's learner), DP-OWL released by objective
perturbation, and the private plug-in rule (per-arm linear outcome models from
Laplace-noised sufficient statistics), each run as a release would run it
(:class:`dpcore.DPOWL` and :class:`dpcore.PrivatePlugInRule` with their defaults, public
bounds [0, 1] for the covariates and (-12, 12) for the outcome, the known propensity 0.5),
vectorized over the repetitions through the functions the estimators call. The benchmark
``benchmarks/learners.py`` (docs/findings.md) and the DP-OWL page both call
:func:`compare_learners`.

Designs (x ~ U[0, 1]^4, A = ±1 with probability 1/2, B = 0.01 + 0.02 x4 + 3 A f(x) + N(0, 0.5²),
so the treated minus control mean outcome is 6 f(x) and the better arm is sign f(x)):

* paper: f(x) = 1 + x1 + x2 - 1.8 x3 - 2.2 x4 (the DP-wERM paper's trial, docs/spec/dp_owl.md §7);
* constant effect: f(x) = 0.5, no heterogeneity (the best rule treats everyone);
* middle benefit: f(x) = 12 (0.25 - |x1 - 0.5|), treatment helps only when 0.25 < x1 < 0.75,
  a boundary no linear rule can draw;
* threshold effect: f(x) = 2.5 if x1 > 0.7 else -0.5: the best rule is linear but the
  effect is not, so a linear outcome model misplaces the boundary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..montecarlo import key, summarize
from ..privacy.mechanisms import output_perturbation, sample_laplace
from .dpowl import DPOWL
from .outcome_model import statistics_sensitivity
from .owl import owl_weights
from .paper import default_gamma
from .plugin import PrivatePlugInRule, plugin_statistics, score_from_statistics
from .preprocessing import FeatureScaling
from .simulate import PAPER_TRIAL
from .werm import solve_werm
from .werm_release import objective_release, sensitivity

P = 4
BOUNDS = (np.zeros(P), np.ones(P))
OUTCOME_BOUNDS = (-12.0, 12.0)
PROPENSITY = 0.5
W = (OUTCOME_BOUNDS[1] - OUTCOME_BOUNDS[0]) / PROPENSITY  # DPOWL's default weight bound
TEST_SIZE = 5000
# L1 sensitivity of the plug-in's statistics, d (d + 3) = 40 with the intercept: d = P + 1
PLUGIN_SENSITIVITY = float(statistics_sensitivity(P + 1))


@dataclass(frozen=True)
class Design:
    """A simulated two-arm trial: ``f`` is half the treatment effect's sign-carrying part."""

    name: str
    f: Callable[[np.ndarray], np.ndarray]

    def baseline(self, X: np.ndarray) -> np.ndarray:
        return 0.01 + 0.02 * X[..., 3]

    def sample(
        self, n: int, size: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X = rng.random((size, n, P))
        A = np.where(rng.random((size, n)) < PROPENSITY, 1.0, -1.0)
        B = self.baseline(X) + 3.0 * A * self.f(X) + 0.5 * rng.standard_normal((size, n))
        return X, A, B


DESIGNS = (
    Design("paper", PAPER_TRIAL.f),
    Design("constant effect", lambda X: np.full(X.shape[:-1], 0.5)),
    Design("middle benefit", lambda X: 12.0 * (0.25 - np.abs(X[..., 0] - 0.5))),
    Design("threshold effect", lambda X: np.where(X[..., 0] > 0.7, 2.5, -0.5)),
)


def dpowl_scores(X, A, B, eps, rng, Xtest):
    """DP-OWL's decision values on the test sets, (reps, test), as DPOWL releases them."""
    scaling = FeatureScaling.from_bounds(BOUNDS, P)
    w, _ = owl_weights(B, A, PROPENSITY, W, OUTCOME_BOUNDS, True)
    gamma = default_gamma(eps, X.shape[-2], W)
    theta_hat, _ = solve_werm(scaling.transform(X), A, w, gamma, "huber", 0.5)
    theta = output_perturbation(theta_hat, eps, sensitivity(W, gamma), rng=rng)
    return np.einsum("rtd,rd->rt", scaling.transform(Xtest), theta), theta


def objective_scores(X, A, B, eps, rng, Xtest):
    """DP-OWL's decision values with objective perturbation, (reps, test)."""
    scaling = FeatureScaling.from_bounds(BOUNDS, P)
    w, _ = owl_weights(B, A, PROPENSITY, W, OUTCOME_BOUNDS, True)
    gamma = default_gamma(eps, X.shape[-2], W)
    theta, _ = objective_release(
        scaling.transform(X), A, w, gamma, "huber", 0.5, eps, W, size=(X.shape[0],), rng=rng
    )
    return np.einsum("rtd,rd->rt", scaling.transform(Xtest), theta), theta


def plugin_scores(X, A, B, eps, rng, Xtest):
    """The plug-in rule's decision values on the test sets, (reps, test)."""
    stats = plugin_statistics(X, A, B, BOUNDS, OUTCOME_BOUNDS)
    noisy = stats + sample_laplace(eps, PLUGIN_SENSITIVITY, stats.shape, rng=rng)
    intercept, coef, _ = score_from_statistics(
        noisy,
        n=X.shape[-2],
        epsilon=eps,
        feature_bounds=BOUNDS,
        outcome_bounds=OUTCOME_BOUNDS,
        larger_is_better=True,
    )
    return intercept[:, None] + np.einsum("rtp,rp->rt", Xtest, coef), (intercept, coef)


#: (name, scores) in the order that keys each learner's noise stream.
LEARNERS = (
    ("DP-OWL", dpowl_scores),
    ("plug-in", plugin_scores),
    ("DP-OWL objective", objective_scores),
)


def check_against_the_estimators(X, A, B) -> None:
    """At ε = inf, repetition 0 of each vectorized learner is the estimator's own fit."""
    Xtest = X[:1]
    _, theta = dpowl_scores(X[:1], A[:1], B[:1], np.inf, None, Xtest)
    fit = DPOWL(
        epsilon=np.inf,
        outcome_bounds=OUTCOME_BOUNDS,
        feature_bounds=BOUNDS,
        larger_is_better=True,
    ).fit(X[0], A[0], B[0], PROPENSITY)
    np.testing.assert_allclose(theta[0], fit.theta_, atol=1e-6)
    _, theta = objective_scores(X[:1], A[:1], B[:1], np.inf, None, Xtest)
    np.testing.assert_allclose(theta[0], fit.theta_, atol=1e-6)
    _, (intercept, coef) = plugin_scores(X[:1], A[:1], B[:1], np.inf, None, Xtest)
    plug = PrivatePlugInRule(
        epsilon=np.inf,
        outcome_bounds=OUTCOME_BOUNDS,
        feature_bounds=BOUNDS,
        larger_is_better=True,
    ).fit(X[0], A[0], B[0])
    np.testing.assert_allclose(coef[0], plug.coef_, atol=1e-9)
    np.testing.assert_allclose(intercept[0], plug.intercept_, atol=1e-9)


def compare_learners(
    n_grid: Sequence[int],
    eps_grid: Sequence[float],
    reps: int = 20,
    seed: int = 0,
    designs: Sequence[str] = ("paper",),
    test_size: int = TEST_SIZE,
    check: bool = False,
) -> tuple[pd.DataFrame, dict[str, dict[str, float]]]:
    """Agreement with the better arm and value of the three private learners, per repetition.

    All learners are fitted on the same training trials (paired) and scored on a fresh test
    set per repetition, against the truth the simulation knows.

    Parameters
    ----------
    n_grid : sequence of int
        Training sizes.
    eps_grid : sequence of float
        Privacy budgets; ``np.inf`` is the non-private fit of each learner.
    reps : int
        Repetitions: independent training trial, noise and test set.
    seed : int
        Every draw comes from ``np.random.default_rng([seed, k, ...])`` keyed by the design's
        index ``k`` in :data:`DESIGNS`, n, ε and the learner, so a cell's numbers do not
        depend on the rest of the grids.
    designs : sequence of str
        Names of :data:`DESIGNS`.
    test_size : int
        Test patients per repetition.
    check : bool
        At the first n, check each vectorized learner against its estimator at ε = inf.

    Returns
    -------
    runs : DataFrame
        One row per (design, n, ε, learner, repetition) with columns design, n, epsilon,
        learner ("DP-OWL", "plug-in", "DP-OWL objective"), rep, agreement (percent of test
        patients given the better arm) and value (their mean true outcome under the rule).
    refs : dict
        Per design, the mean outcome under the optimal rule ("optimal") and under treating
        everyone ("treat all").

    Examples
    --------
    >>> runs, refs = compare_learners([200], [1.0], reps=3, test_size=100)
    >>> sorted(runs.learner.unique())
    ['DP-OWL', 'DP-OWL objective', 'plug-in']
    """
    by_name = {d.name: (k, d) for k, d in enumerate(DESIGNS)}
    unknown = [d for d in designs if d not in by_name]
    if unknown:
        raise ValueError(f"designs must be among {sorted(by_name)}, got {unknown}")
    reps, test_size = int(reps), int(test_size)
    if reps < 2:
        raise ValueError(f"reps must be at least 2, got {reps}")
    parts: list[pd.DataFrame] = []
    refs: dict[str, dict[str, float]] = {}
    for name in designs:
        k, design = by_name[name]
        Xtest = np.random.default_rng([seed, k, 0]).random((reps, test_size, P))
        f = design.f(Xtest)
        best = np.where(f > 0, 1.0, -1.0)
        base = design.baseline(Xtest)
        refs[name] = {
            "optimal": float(np.mean(base + 3.0 * np.abs(f))),
            "treat all": float(np.mean(base + 3.0 * f)),
        }
        for i, n in enumerate(int(v) for v in n_grid):
            X, A, B = design.sample(n, reps, np.random.default_rng([seed, k, 1, n]))
            if check and i == 0:
                check_against_the_estimators(X, A, B)
            for eps in (float(e) for e in eps_grid):
                for j, (learner, scores) in enumerate(LEARNERS):
                    rng = np.random.default_rng([seed, k, 2, n, key(eps), j])
                    s, _ = scores(X, A, B, eps, rng, Xtest)
                    d = np.where(s > 0, 1.0, -1.0)
                    parts.append(
                        pd.DataFrame(
                            {
                                "design": name,
                                "n": n,
                                "epsilon": eps,
                                "learner": learner,
                                "rep": np.arange(reps),
                                "agreement": 100.0 * np.mean(d == best, axis=1),
                                "value": np.mean(base + 3.0 * d * f, axis=1),
                            }
                        )
                    )
    return pd.concat(parts, ignore_index=True), refs


def learner_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean, Monte-Carlo standard error and 95% interval of agreement and value per cell
    (design, n, ε, learner); see :func:`dpcore.montecarlo.summarize`."""
    return summarize(runs, ("design", "n", "epsilon", "learner"), ("agreement", "value"))


def learner_differences(runs: pd.DataFrame) -> pd.DataFrame:
    """Paired differences of agreement between every two learners, per (design, n, ε).

    The learners share each repetition's training trial and test set, so the difference is
    taken repetition by repetition; columns ``first``, ``second`` (learner names, first minus
    second) and difference_mean, _se, _lo, _hi (95% interval), as
    :func:`dpcore.montecarlo.summarize` writes them.
    """
    wide = runs.pivot_table(
        index=["design", "n", "epsilon", "rep"], columns="learner", values="agreement"
    )
    names = [name for name, _ in LEARNERS if name in wide.columns]
    parts = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            diff = (wide[first] - wide[second]).rename("difference").reset_index()
            part = summarize(diff, ("design", "n", "epsilon"), ("difference",))
            parts.append(part.assign(first=first, second=second))
    return pd.concat(parts, ignore_index=True)


__all__ = [
    "DESIGNS",
    "LEARNERS",
    "Design",
    "check_against_the_estimators",
    "compare_learners",
    "learner_differences",
    "learner_summary",
]
