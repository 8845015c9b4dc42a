"""Private evaluation of a rule over K arms by the public sample split of the binary rule.

As in :mod:`dpcore.owl.evaluation` (whose split, budget split and intervals this reuses), the
rule is fitted on the first part of a public seeded split and evaluated on the second, so the
dataset spends max(ε_fit, ε_eval) (parallel composition).

Notes
-----
**The statistic.** Outcomes are clipped to the public bounds [lo, hi] and centred at their
midpoint c, y = clip(B) - c in [-R/2, R/2]. With the design's public arm probabilities
p_1..p_K (p_min their smallest), each row's term is T_i = y_i / p_{A_i}, |T_i| <= b =
R / (2 p_min). With r_i = 1 for a complete row (``include``) and d the released rule, the
released vector holds the rule's sum and one sum per arm, over the public size m of the part::

    V_rule = (1/m) sum_i r_i 1(A_i = d(X_i)) T_i,    V_k = (1/m) sum_i r_i 1(A_i = k) T_i,

their second moments (T_i^2 in place of T_i) and, with ``include``, the count N = sum_i r_i.
The value of a policy among complete rows is c + E[T 1(A = policy) | r = 1]
(Horvitz-Thompson: E[1(A = d(X)) y / p_A] = E[y(d(X))] under a constant design), estimated by
the ratio c + V~ / q~, q~ = N~ / m, as for two arms; the gain over giving everyone arm k is
V_rule - V_k (sign flipped when smaller outcomes are better).

**Sensitivity.** Replacing one row (the rule is fixed: fitted on the other part) moves its
term in V_rule by at most 2b/m and, in the arm sums, out of one V_a and into one V_a' (or
into none when the new row is incomplete), at most 2b/m in all: the L1 sensitivity of
(V_rule, V_1..V_K) is Delta_1 = 4b/m = 2R / (m p_min), whatever K. The squared terms lie in
[0, b^2], so the moments' is Delta_2 = 3 b^2 / m. The count's is 1. Laplace noise at
Delta_k / ε_k on each part, with ε_1 + ε_2 + ε_3 = ε_eval
(:func:`dpcore.owl.evaluation.evaluation_budget`): sequential composition on the same rows.

**Intervals.** :func:`dpcore.owl.evaluation_interval.fieller_interval`, which takes the
numerator's noise to be the sum of two Laplace draws at scale s = Delta_1 / ε_1. A gain's
numerator V_rule - V_k has exactly that noise; a value's has one draw, and treating it as two
only widens the interval (adding an independent symmetric unimodal term makes |noise|
stochastically larger: Anderson's theorem). The sampling part uses the released second
moments as for two arms, with public caps (R/2)^2 / p_min for a value and
2 (R/2)^2 / p_min for a gain (E[(1(A = d) + 1(A = k)) T^2] <= (R/2)^2 (1/p_d + 1/p_k)); a
gain's second moment is taken as M_rule + M_k, an upper bound of E[(1(A = d) - 1(A = k))^2 T^2].

**Verdict.** "better" when every gain's interval lies above 0 (a false "better" needs one
gain's lower bound above a true gain <= 0: probability at most (1 - level)/2); "worse" when
one lies below 0; otherwise "inconclusive".
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtri

from .._validation import check_bounds, check_epsilon, check_real
from ..privacy.mechanisms import sample_laplace
from .evaluation import COUNT_SENSITIVITY, Estimate, evaluation_budget, noisy_count, public_split
from .evaluation_interval import fieller_interval, two_laplace_quantile

__all__ = [
    "ArmsEvaluation",
    "arm_sums",
    "arms_sensitivity",
    "evaluate_arms_rule",
    "fit_and_evaluate_arms",
]


def arms_sensitivity(outcome_bounds, min_probability, m):
    """(Delta_1, Delta_2): L1 sensitivities 2R / (m p_min) of the sums and 3 b^2 / m of the
    second moments, b = R / (2 p_min) (see the module's Notes)."""
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    p_min = check_real(min_probability, "min_probability", low=0.0, high=1.0, low_open=True)
    b = (hi - lo) / (2.0 * p_min)
    return 4.0 * b / int(m), 3.0 * b * b / int(m)


def arm_sums(recommend, A, B, arm_probabilities, outcome_bounds, include=None, power=1):
    """The exact (noiseless) vector (V_rule, V_1, ..., V_K); ``power=2``: second moments.

    ``recommend`` and ``A`` are arm indices 0..K-1; ``arm_probabilities`` the design's.
    """
    p = np.asarray(arm_probabilities, dtype=float)
    A, d = np.asarray(A, dtype=int), np.asarray(recommend, dtype=int)
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    t = ((np.clip(np.asarray(B, dtype=float), lo, hi) - (lo + hi) / 2.0) / p[A]) ** power
    if include is not None:
        t = np.where(np.asarray(include, dtype=bool), t, 0.0)
    m = A.shape[0]
    rows = [A == d] + [A == k for k in range(p.size)]
    return np.array([np.sum(np.where(r, t, 0.0)) / m for r in rows])


@dataclass(frozen=True)
class ArmsEvaluation:
    """The released evaluation of a K-arm rule (all releasable).

    ``values``: "rule" and one entry per arm (everyone given that arm), outcome scale;
    ``gains``: the rule's improvement over giving everyone each arm (positive is better for
    patients); ``verdict``: "better", "worse" or "inconclusive".
    """

    epsilon: float
    m: int
    sensitivity: float
    level: float
    sums: tuple
    moments: tuple
    values: dict
    gains: dict
    verdict: str
    arms: tuple
    complete: float | None = None
    budget: tuple = ()

    def summary(self):
        pct = f"{100 * self.level:g}%"
        head = {
            "better": "The private rule beats giving everyone any one arm",
            "worse": "The private rule does worse than giving everyone one of the arms",
            "inconclusive": "This evaluation cannot tell whether the private rule beats "
            "giving everyone the best single arm",
        }[self.verdict]
        gains = "; ".join(
            f"over '{a}' {g.value:+.3g} [{g.lower:.3g}, {g.upper:.3g}]"
            for a, g in self.gains.items()
        )
        return (
            f"{head} ({pct} confidence, ε_eval = {self.epsilon:g}, {self.m} patients held "
            f"out). Its gains, in the outcome's units (positive is better for patients): "
            f"{gains}."
        )

    def to_dict(self):
        as_dict = lambda e: {"value": e.value, "lower": e.lower, "upper": e.upper}  # noqa: E731
        names = ["rule", *(str(a) for a in self.arms)]
        return {
            "epsilon_eval": self.epsilon,
            "patients": self.m,
            "level": self.level,
            "sensitivity_l1": self.sensitivity,
            "sums": dict(zip(names, self.sums)),
            "second_moments": dict(zip(names, self.moments)),
            "complete_rows_noisy": self.complete,
            "epsilon_split": dict(zip(("sums", "second_moments", "complete_count"), self.budget)),
            "values": {str(k): as_dict(v) for k, v in self.values.items()},
            "gains": {str(k): as_dict(v) for k, v in self.gains.items()},
            "verdict": self.verdict,
            "summary": self.summary(),
        }


def evaluate_arms_rule(
    recommend,
    A,
    B,
    arm_probabilities,
    *,
    outcome_bounds,
    epsilon,
    arms,
    larger_is_better=True,
    include=None,
    level=0.95,
    moment_share=0.25,
    count_share=0.1,
    rng=None,
    sampler="numpy",
):
    """Release the IPW values of a K-arm rule and of each single arm, with ε_eval-DP.

    Parameters
    ----------
    recommend, A : arrays (m,) of arm indices 0..K-1
        The rule's recommendations on the evaluation part and the arms received.
    B : array (m,)
    arm_probabilities : sequence of K floats, public
    outcome_bounds : (lo, hi), public
    epsilon : float, ε_eval
    arms : K labels, for the names of the values and gains
    larger_is_better, include, level, moment_share, count_share, rng, sampler
        As in :func:`dpcore.owl.evaluation.evaluate_rule`.

    Returns
    -------
    ArmsEvaluation

    Notes
    -----
    Draw order (one Generator): the K + 1 sums' Laplace, the K + 1 moments', then (with
    ``include``) the count's. Every field but the noisy numbers depends on public values only.
    """
    epsilon = check_epsilon(epsilon)
    level = check_real(level, "level", low=0.0, high=1.0)
    if level == 1.0:
        raise ValueError("level must be < 1, got 1.0")
    rng = np.random.default_rng(rng)
    lo, hi = (float(v[0]) for v in check_bounds(outcome_bounds, 1, "outcome_bounds"))
    p = np.asarray(arm_probabilities, dtype=float)
    m, p_min, k = int(np.shape(A)[-1]), float(p.min()), p.size
    delta1, delta2 = arms_sensitivity((lo, hi), p_min, m)
    counted = include is not None
    eps1, eps2, eps3 = evaluation_budget(epsilon, moment_share, count_share, counted)
    args = (recommend, A, B, p, (lo, hi), include)
    sums = arm_sums(*args) + sample_laplace(eps1, delta1, k + 1, rng=rng, sampler=sampler)
    moments = arm_sums(*args, power=2) + sample_laplace(
        eps2, delta2, k + 1, rng=rng, sampler=sampler
    )
    count = noisy_count(include, eps3, rng, sampler) if counted else None
    R, centre = hi - lo, (lo + hi) / 2.0
    s = 0.0 if np.isinf(eps1) else delta1 / eps1
    raise2 = (0.0 if np.isinf(eps2) else delta2 / eps2) * two_laplace_quantile(level)
    z = float(ndtri(0.5 + level / 2.0))
    r = z * z * (R / (2.0 * p_min)) / (6.0 * m)  # Bernstein's range term, b = R / (2 p_min)
    share = 1.0 if count is None else count / m
    count_scale = 0.0 if count is None or np.isinf(eps3) else COUNT_SENSITIVITY / (m * eps3)
    sign = 1.0 if larger_is_better else -1.0
    # (name, numerator, second moment, bound, offset, flip): the rule, each arm, each gain
    rows = [("rule", sums[0], moments[0], R / 2, centre, 1.0, (R / 2) ** 2 / p_min)]
    rows += [
        (j, sums[1 + j], moments[1 + j], R / 2, centre, 1.0, (R / 2) ** 2 / p_min) for j in range(k)
    ]
    rows += [
        (
            ("gain", j),
            sums[0] - sums[1 + j],
            moments[0] + moments[1 + j],
            R,
            0.0,
            sign,
            2 * (R / 2) ** 2 / p_min,
        )
        for j in range(k)
    ]
    num = np.array([row[1] for row in rows])
    second = np.array([min(max(row[2], 0.0) + raise2, row[6]) for row in rows])
    bound, offset, flip = (np.array([row[i] for row in rows]) for i in (3, 4, 5))
    sigma = (r + np.sqrt(r * r + z * z * second / m)) / z
    a, b = fieller_interval(num, np.full(num.shape, share), sigma, s, count_scale, bound, level)
    point = np.clip(num / max(share, 1.0 / m), -bound, bound)
    a, b = flip * a, flip * b
    est = [
        Estimate(float(o + f * v), float(o + min(x, y)), float(o + max(x, y)))
        for o, f, v, x, y in zip(offset, flip, point, a, b)
    ]
    values = {"rule": est[0], **{arms[j]: est[1 + j] for j in range(k)}}
    gains = {arms[j]: est[1 + k + j] for j in range(k)}
    if all(g.lower > 0 for g in gains.values()):
        verdict = "better"
    elif any(g.upper < 0 for g in gains.values()):
        verdict = "worse"
    else:
        verdict = "inconclusive"
    return ArmsEvaluation(
        epsilon=epsilon,
        m=m,
        sensitivity=delta1,
        level=level,
        sums=tuple(map(float, sums)),
        moments=tuple(map(float, moments)),
        values=values,
        gains=gains,
        verdict=verdict,
        arms=tuple(arms),
        complete=count,
        budget=(float(eps1), float(eps2), float(eps3)),
    )


def fit_and_evaluate_arms(
    trial: Any,
    *,
    epsilon_fit,
    epsilon_eval,
    fit_share=0.8,
    split_seed=0,
    level=0.95,
    rng=None,
    sampler="numpy",
    ledger=None,
    **karm,
):
    """Fit :class:`dpcore.owl.karm.KArmOWL` on the public split's first part of a trial from
    :func:`dpcore.read_arms_trial` and evaluate it privately on the second.

    ``karm`` are KArmOWL's keyword arguments (outcome_bounds required). ``ledger`` records
    ``{"fit": epsilon_fit, "evaluation": epsilon_eval}`` as parallel parts, once both are
    computed. Only the weight-clipping warning is silenced (clipping to the public W is the
    method).

    Returns
    -------
    (model, evaluation, (fit_rows, eval_rows))
    """
    from .._estimator import WEIGHT_CLIPPING_MESSAGE, ClippingWarning
    from ..privacy.composition import record_release
    from .dpowl import outcome_direction
    from .dpwerm import _seeded
    from .karm import KArmOWL, arm_indices

    if trial.arm_probabilities is None:
        raise ValueError("the trial has no arm probabilities (read it with read_arms_trial)")
    fit_rows, eval_rows = public_split(trial.n, fit_share, split_seed)
    seeded = _seeded(rng)
    rng = np.random.default_rng(rng)
    direction = outcome_direction(
        karm.get("larger_is_better"), trial.larger_is_better, karm.get("outcome_bounds")
    )
    model = KArmOWL(epsilon=epsilon_fit, rng=rng, **{**karm, "larger_is_better": direction})
    B = trial.B if trial.complete is None else trial.outcomes_for_fit(model._bounds(), direction)
    labels = np.asarray(trial.arms, dtype=object)[np.asarray(trial.A, dtype=int)]
    X = np.asarray(trial.X)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=WEIGHT_CLIPPING_MESSAGE, category=ClippingWarning)
        model.fit(
            X[fit_rows], labels[fit_rows], B[fit_rows], trial.arm_probabilities, arms=trial.arms
        )
    codes = arm_indices(model.recommend(X[eval_rows]), trial.arms)
    evaluation = evaluate_arms_rule(
        codes,
        np.asarray(trial.A, dtype=int)[eval_rows],
        np.asarray(trial.B)[eval_rows],
        trial.arm_probabilities,
        outcome_bounds=model._bounds(),
        epsilon=epsilon_eval,
        arms=trial.arms,
        larger_is_better=direction,
        include=None if trial.complete is None else np.asarray(trial.complete)[eval_rows],
        level=level,
        rng=rng,
        sampler=sampler,
    )
    if ledger is not None:
        reasons = [
            r
            for r, hit in (
                ("feature bounds read from the data", model.bounds_from_data_),
                ("seeded noise (rng is an int seed)", seeded),
            )
            if hit
        ]
        record_release(
            ledger,
            "K-arm DP-OWL rule + private evaluation",
            {"fit": epsilon_fit, "evaluation": epsilon_eval},
            reasons,
        )
    return model, evaluation, (fit_rows, eval_rows)
