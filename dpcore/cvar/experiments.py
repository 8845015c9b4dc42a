"""Monte-Carlo studies of private CVaR for the dashboard: scalar estimation, a finite class,
convex learning and the tail risk of a private treatment rule.

Every random draw comes from a stream keyed by the values that define its cell
(:func:`dpcore.montecarlo.stream`), so a cell's numbers do not depend on the grid around it,
and repetitions are vectorised along a leading axis.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._estimator import ClippingWarning
from .._validation import check_epsilon, check_real
from ..montecarlo import Stream, key, local_executor, stream, summarize
from ..owl.dpowl import DPOWL
from ..owl.paper import PAPER_W, resolve_gamma
from ..owl.simulate import PAPER_TRIAL
from ..privacy.accounting import PrivacyLedger
from ..privacy.mechanisms import laplace_interval_halfwidth
from ..theory.bounds import (
    cvar_regime_name,
    effective_sizes,
    em_gap_bound,
    finite_class_rate,
    scalar_cvar_rate,
)
from .estimation import (
    check_bound,
    check_tau,
    cvar_sensitivity,
    demo_losses,
    demo_population_cvar,
    empirical_cvar,
    laplace_privacy_error,
    laplace_release,
    private_cvar,
)
from .learning import (
    dp_gd_cvar,
    em_probabilities,
    minority_regression,
    slope_class_losses,
)

__all__ = [
    "KINDS",
    "ClassStudy",
    "RuleTailRisk",
    "class_study",
    "convex_study",
    "cvar_regime",
    "cvar_sweep",
    "method_comparison",
    "rule_tail_risk",
    "sweep_summary",
]

KINDS = ("uniform", "beta", "two-point", "heavy-tailed")
SCALAR_METRICS = ("statistical", "privacy", "privacy_exact", "total")
SCALAR_CELL = ("kind", "n", "tau", "epsilon")


def _kind_key(kind):
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return KINDS.index(kind) + 1


def _whole(value, name, low=1):
    value = check_real(value, name, low=low - 1e-9, low_open=False)
    if not float(value).is_integer():
        raise ValueError(f"{name} must be a whole number, got {value}")
    return int(value)


# --------------------------------------------------------------------------------------------
# Scalar CVaR: the Laplace plug-in against the truth, split into its two parts


@functools.lru_cache(maxsize=256)
def _truth(kind, tau, bound):
    """Population CVaR of a demo law; cached, since the quadrature takes ~0.1 s."""
    return demo_population_cvar(kind, tau, bound, p=tau / 2)


def cvar_sweep(kind, n_grid, tau_grid, eps_grid, bound=1.0, reps=200, seed=0, executor=None):
    """Error of the Laplace plug-in private CVaR on demo losses, over a grid of (n, tau, epsilon).

    Parameters
    ----------
    kind : {"uniform", "beta", "two-point", "heavy-tailed"}
        Loss law (:func:`dpcore.cvar.demo_losses`); "two-point" is the hard instance
        B Bernoulli(tau/2) of spec §5.2, whose law depends on tau.
    n_grid, tau_grid, eps_grid : sequences
        Sample sizes, tail levels in (0, 1] and budgets (``np.inf``: non-private).
    bound : float
        Public loss bound B.
    reps : int
        Independent data sets per n (shared by every tau and epsilon at that n, so curves
        compare like with like), each with its own noise per (tau, epsilon).
    seed : int
    executor : concurrent.futures.Executor, optional
        Runs one task per n; by default a thread pool sized to the machine. The streams are
        keyed by each cell's values, so the result is bit-identical whatever runs it.

    Returns
    -------
    DataFrame with one row per (n, tau, epsilon, rep): truth (population CVaR), rho_hat
    (empirical CVaR), released, and the errors statistical = |rho_hat - truth|, privacy =
    |released - rho_hat|, privacy_exact = E|released - rho_hat| given rho_hat (spec §2.1,
    :func:`dpcore.cvar.laplace_privacy_error`) and total = |released - truth|.
    """
    _kind_key(kind)  # validates the law's name
    bound = check_bound(bound)
    reps, seed = _whole(reps, "reps", low=2), int(seed)
    taus = [check_tau(t) for t in np.atleast_1d(tau_grid)]
    eps = np.array([check_epsilon(e) for e in np.atleast_1d(eps_grid)], dtype=float)
    ns = list(dict.fromkeys(_whole(v, "n") for v in np.atleast_1d(n_grid)))
    with local_executor(executor) as (pool, _):
        futures = [pool.submit(_sweep_n, kind, n, taus, eps, bound, reps, seed) for n in ns]
        frames = [frame for fut in futures for frame in fut.result()]
    return pd.concat(frames, ignore_index=True)


def _sweep_n(kind, n, taus, eps, bound, reps, seed):
    """cvar_sweep's rows at one n, one DataFrame per tau."""
    kind_key, frames, x = _kind_key(kind), [], None
    for tau in taus:
        if x is None or kind == "two-point":  # a fresh stream: same uniforms, new law
            x = demo_losses(
                kind, (reps, n), bound, p=tau / 2, rng=stream(seed, Stream.CVAR_DATA, kind_key, n)
            )
        truth = _truth(kind, tau, bound)
        rho = empirical_cvar(x, tau)
        released = np.stack(
            [
                laplace_release(
                    rho, n, tau, e, bound, rng=stream(seed, Stream.CVAR_NOISE, kind_key, n, tau, e)
                )
                for e in eps
            ]
        )
        exact = np.stack([laplace_privacy_error(rho, n, tau, e, bound) for e in eps])
        frames.append(
            pd.DataFrame(
                {
                    "kind": kind,
                    "n": n,
                    "tau": tau,
                    "epsilon": np.repeat(eps, reps),
                    "rep": np.tile(np.arange(reps), eps.size),
                    "truth": truth,
                    "rho_hat": np.tile(rho, eps.size),
                    "released": released.ravel(),
                    "statistical": np.tile(np.abs(rho - truth), eps.size),
                    "privacy": np.abs(released - rho).ravel(),
                    "privacy_exact": exact.ravel(),
                    "total": np.abs(released - truth).ravel(),
                }
            )
        )
    return frames


def sweep_summary(runs: pd.DataFrame, bound: float = 1.0) -> pd.DataFrame:
    """Per-cell mean, SE and 95% CI of each error (:func:`dpcore.montecarlo.summarize`),
    with the effective sizes n tau and epsilon n tau and the rates of Theorem 3.4 beside them:
    rate = B min{1, 1/sqrt(n tau) + 1/(epsilon n tau)} and its two parts."""
    out = summarize(runs, SCALAR_CELL, SCALAR_METRICS)
    m, em = effective_sizes(
        out["n"].to_numpy(float), out["tau"].to_numpy(), out["epsilon"].to_numpy()
    )
    with np.errstate(divide="ignore"):
        out["n_tau"], out["eps_n_tau"] = m, em
        out["rate"] = scalar_cvar_rate(
            out["n"].to_numpy(float), out["tau"].to_numpy(), out["epsilon"].to_numpy(), bound
        )
        out["rate_statistical"] = bound * np.minimum(1.0, 1.0 / np.sqrt(m))
        out["rate_privacy"] = bound * np.minimum(1.0, 1.0 / em)
    return out


def method_comparison(
    kind: str,
    n: int,
    tau: float,
    epsilon: float,
    bound: float = 1.0,
    reps: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """Mean |released - truth| of the Laplace plug-in and of the instance-adaptive variant
    (spec §2.2) on the same data sets as :func:`cvar_sweep`'s cell (n, tau).

    Returns a DataFrame with columns method, total_mean, total_se.
    """
    kind_key, n, tau = _kind_key(kind), _whole(n, "n"), check_tau(tau)
    epsilon, bound, reps = check_epsilon(epsilon), check_bound(bound), _whole(reps, "reps", low=2)
    x = demo_losses(
        kind, (reps, n), bound, p=tau / 2, rng=stream(seed, Stream.CVAR_DATA, kind_key, n)
    )
    truth = _truth(kind, tau, bound)
    rows = []
    for k, method in enumerate(("laplace", "instance-adaptive")):
        rng = stream(seed, Stream.CVAR_NOISE, kind_key, n, tau, epsilon, k + 1)
        err = np.abs(private_cvar(x, tau, epsilon, bound, rng, method=method) - truth)
        rows.append(
            {
                "method": method,
                "total_mean": err.mean(),
                "total_se": err.std(ddof=1) / math.sqrt(reps),
            }
        )
    return pd.DataFrame(rows)


# One regime rule for every page: the theory module's (d = 1 here, the scalar rate).
cvar_regime = cvar_regime_name


# --------------------------------------------------------------------------------------------
# Finite class: the exponential mechanism on the minority-regression demo (spec §3.2)


@dataclass(frozen=True)
class ClassStudy:
    """The slope class on one simulated data set: empirical and population CVaR per slope,
    the exponential mechanism's exact selection probabilities per epsilon (rows of ``probs``)
    and its exact expected excess, empirical and population, with the bounds beside them."""

    thetas: np.ndarray
    rho_emp: np.ndarray
    rho_pop: np.ndarray
    mean_erm_theta: float
    epsilons: np.ndarray
    probs: np.ndarray
    excess_emp: np.ndarray
    excess_pop: np.ndarray
    gap_bound: np.ndarray
    rate: np.ndarray
    bound: float


def class_study(
    n: int,
    tau: float,
    M: int,
    eps_grid: Sequence[float],
    bound: float = 1.0,
    seed: int = 0,
    population_size: int = 50_000,
) -> ClassStudy:
    """Exponential mechanism over M slopes theta x, theta on a grid in [-1.5, 1.5], on the
    minority-regression data (90% y = x, 10% y = -x, noise 0.1); loss min(B, |y - theta x|/2).

    Expectations over the mechanism are exact (from its probabilities); the population CVaR
    of each slope is measured on a public sample of ``population_size`` fresh records.
    """
    n, M = _whole(n, "n"), _whole(M, "M", low=2)
    tau, bound = check_tau(tau), check_bound(bound)
    eps = np.array([check_epsilon(e) for e in np.atleast_1d(eps_grid)], dtype=float)
    thetas = np.linspace(-1.5, 1.5, M)
    x, y = minority_regression(n, rng=stream(seed, Stream.CVAR_CLASS, n))
    losses = slope_class_losses(x, y, thetas, bound)
    xp, yp = minority_regression(int(population_size), rng=stream(seed, Stream.CVAR_CLASS, 0))
    rho_emp = np.asarray(empirical_cvar(losses, tau))  # one CVaR per slope
    rho_pop = np.asarray(empirical_cvar(slope_class_losses(xp, yp, thetas, bound), tau))
    probs = np.stack([em_probabilities(losses, tau, e, bound) for e in eps])
    return ClassStudy(
        thetas=thetas,
        rho_emp=rho_emp,
        rho_pop=rho_pop,
        mean_erm_theta=float(thetas[np.argmin(losses.mean(axis=1))]),
        epsilons=eps,
        probs=probs,
        excess_emp=probs @ (rho_emp - rho_emp.min()),
        excess_pop=probs @ (rho_pop - rho_pop.min()),
        gap_bound=np.minimum(bound, em_gap_bound(M, n, tau, eps, bound)),
        rate=np.asarray(finite_class_rate(M, n, tau, eps, bound)),
        bound=bound,
    )


# --------------------------------------------------------------------------------------------
# Convex learning: DP-GD on the lifted objective, against epsilon n tau / sqrt(d)


def _regression_data(n, d, rng):
    """x with norm <= 1 (Gaussian / sqrt(d), scaled into the unit ball); y = 0.5 x_1 for 90%
    of records and -0.5 x_1 for a 10% minority, plus noise 0.1, clipped to [-1, 1]."""
    X = rng.standard_normal((n, d)) / math.sqrt(d)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    sign = np.where(rng.random(n) < 0.1, -1.0, 1.0)
    return X, np.clip(sign * 0.5 * X[:, 0] + 0.1 * rng.standard_normal(n), -1.0, 1.0)


def _test_cvar(coef, X, y, tau):
    """Empirical CVaR of the absolute loss of each row of ``coef`` on a test set."""
    return empirical_cvar(np.abs(y - np.atleast_2d(coef) @ X.T), tau)


def convex_study(
    n: int,
    tau: float,
    d_grid: Sequence[int],
    ratio_grid: Sequence[float],
    reps: int = 10,
    seed: int = 0,
    steps: int = 100,
    delta: float = 1e-5,
    test_size: int = 20_000,
) -> pd.DataFrame:
    """Excess CVaR of DP-GD (:func:`dpcore.cvar_learning.dp_gd_cvar`, absolute loss, unit
    ball) over the non-private run, on a fresh test set, at epsilon = ratio sqrt(d)/(n tau).

    Returns a DataFrame of per-run rows: d, ratio (epsilon n tau / sqrt(d)), epsilon, rep,
    excess (test CVaR of the private fit minus that of the noiseless run with the same
    steps; it can be slightly negative).
    """
    n, steps, reps = _whole(n, "n"), _whole(steps, "steps"), _whole(reps, "reps", low=2)
    tau = check_tau(tau)
    frames = []
    for d in (_whole(v, "d") for v in np.atleast_1d(d_grid)):
        rng = stream(seed, Stream.CVAR_GD, n, d)
        X, y = _regression_data(n, d, rng)
        Xt, yt = _regression_data(int(test_size), d, rng)
        ref = _test_cvar(dp_gd_cvar(X, y, tau, np.inf, delta, steps=steps).coef, Xt, yt, tau)
        for ratio in np.atleast_1d(ratio_grid):
            eps = float(ratio) * math.sqrt(d) / (n * tau)
            fit = dp_gd_cvar(
                X,
                y,
                tau,
                eps,
                delta,
                steps=steps,
                reps=reps,
                rng=stream(seed, Stream.CVAR_GD, n, d, key(float(ratio)), tau),
            )
            frames.append(
                pd.DataFrame(
                    {
                        "d": d,
                        "ratio": float(ratio),
                        "epsilon": eps,
                        "rep": np.arange(reps),
                        "excess": _test_cvar(fit.coef, Xt, yt, tau) - ref,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------------------------
# The bridge: tail risk of a DP-OWL treatment rule, released privately


@dataclass(frozen=True)
class RuleTailRisk:
    """Mean outcome of the worst tau share of new patients under each rule (larger is better).

    ``private_rule`` and ``nonprivate_rule`` and ``best_rule`` are exact on the test patients
    (simulated, so the truth can be shown); ``released`` is the private CVaR release for the
    private rule, ``halfwidth`` its 95% Laplace noise half-width in outcome units.
    """

    tau: float
    gamma: float
    outcome_bounds: tuple
    private_rule: float
    nonprivate_rule: float
    best_rule: float
    released: float
    halfwidth: float
    mean_private: float
    mean_nonprivate: float
    agreement: float
    ledger: PrivacyLedger


def rule_tail_risk(
    n: int,
    tau: float,
    eps_rule: float,
    eps_cvar: float,
    seed: int = 0,
    test_size: int = 5000,
    outcome_bounds: tuple[float, float] = (-12.0, 12.0),
) -> RuleTailRisk:
    """A DP-OWL rule released at ``eps_rule`` on the paper's simulated trial of n patients,
    then the private CVaR (``eps_cvar``) of the worst-off tau share of ``test_size`` new
    patients' outcomes under it, against the non-private rule's.

    Outcomes become losses hi - clip(outcome, lo, hi) in [0, hi - lo] with the public
    ``outcome_bounds`` (the design's means lie in [-9.0, 9.1], noise sd 0.5). The ledger
    records both releases; a patient in both data sets is covered by their sum.
    """
    n, tau = _whole(n, "n"), check_tau(tau)
    eps_rule, eps_cvar = check_epsilon(eps_rule, "eps_rule"), check_epsilon(eps_cvar, "eps_cvar")
    lo, hi = (float(v) for v in outcome_bounds)
    rng = stream(seed, Stream.CVAR_RULE, n, key(eps_rule))
    train = PAPER_TRIAL.sample(n, rng=stream(seed, Stream.CVAR_RULE, n))
    gamma = resolve_gamma("paper", eps_rule, n)
    kw: dict[str, Any] = dict(
        gamma=gamma,
        weight_bound=PAPER_W,
        feature_bounds=PAPER_TRIAL.feature_bounds,
        outcome_bounds=(lo, hi),
    )
    with warnings.catch_warnings():
        # Weights above W are clipped, as on the DP-OWL page: only that is silenced, and only
        # here, on the paper's simulated trial; a privacy warning still reaches the caller.
        warnings.simplefilter("ignore", ClippingWarning)
        private = DPOWL(epsilon=eps_rule, rng=rng, **kw, larger_is_better=True).fit(
            train["X"], train["A"], train["B"], 0.5
        )
        exact = DPOWL(epsilon=np.inf, **kw, larger_is_better=True).fit(
            train["X"], train["A"], train["B"], 0.5
        )
    test = PAPER_TRIAL.sample(int(test_size), rng=stream(seed, Stream.CVAR_RULE, 0))
    baseline = 0.01 + 0.02 * test["X"][:, 3]  # the design's outcome mean without the A f term
    noise = 0.5 * stream(seed, Stream.CVAR_RULE, 1).standard_normal(int(test_size))

    def outcomes(a):
        return baseline + 3.0 * a * test["f"] + noise

    def loss(a):
        return hi - np.clip(outcomes(a), lo, hi)

    a_priv, a_exact = private.predict(test["X"]), exact.predict(test["X"])
    a_best = np.where(test["f"] > 0, 1.0, -1.0)
    released = private_cvar(
        loss(a_priv),
        tau,
        eps_cvar,
        hi - lo,
        rng=stream(seed, Stream.CVAR_RULE, 2, key(tau), key(eps_cvar)),
    )
    ledger = PrivacyLedger()
    if math.isfinite(eps_rule):
        ledger.record("DP-OWL treatment rule (trial patients)", eps_rule)
    if math.isfinite(eps_cvar):
        ledger.record("private CVaR of outcomes (new patients)", eps_cvar)
    return RuleTailRisk(
        tau=tau,
        gamma=float(gamma),
        outcome_bounds=(lo, hi),
        private_rule=hi - float(empirical_cvar(loss(a_priv), tau)),
        nonprivate_rule=hi - float(empirical_cvar(loss(a_exact), tau)),
        best_rule=hi - float(empirical_cvar(loss(a_best), tau)),
        released=hi - float(released),
        # a release and the exact value both lie in the range, so no error exceeds hi - lo
        halfwidth=min(
            hi - lo, laplace_interval_halfwidth(eps_cvar, cvar_sensitivity(test_size, tau, hi - lo))
        ),
        mean_private=float(outcomes(a_priv).mean()),
        mean_nonprivate=float(outcomes(a_exact).mean()),
        agreement=float(np.mean(a_priv == a_exact)),
        ledger=ledger,
    )
