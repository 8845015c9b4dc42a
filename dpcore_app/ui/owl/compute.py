"""Cached computations for the DP-OWL page, keyed by plain values (ints, floats, strings).

Each function returns plain data (DataFrames, arrays, frozen dataclasses) that Streamlit can
hash and copy; dpcore does the science.
"""

from __future__ import annotations

import math
import warnings
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import (
    DPOWL,
    ClippingWarning,
    NoiseWarning,
    agreement_test,
    ipw_value,
    treatment_accuracy,
)
from dpcore.montecarlo import Stream, stream
from dpcore.owl.experiments import MonteCarloResult, owl_monte_carlo
from dpcore.owl.learners import compare_learners, learner_differences, learner_summary
from dpcore.owl.owl import default_weight_bound
from dpcore.owl.paper import PAPER_GAMMA, PAPER_N, PAPER_W, paper_outcome_shift, resolve_gamma
from dpcore.owl.simulate import PAPER_TRIAL, PROXY_VARIANTS, optimal_treatment
from dpcore.owl.tuning import TuningResult, tune_gamma
from dpcore.store import stored
from dpcore_app.ui.common.grids import EPS_OPTIONS, fmt_eps
from dpcore_app.ui.common.limits import SIMULATIONS, executor

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from concurrent.futures import Executor

TEST_SIZE = 5000
FEATURES = ("x1", "x2", "x3", "x4")
QUICK_REPS = 40  # a first estimate while the full sweep runs
# Public outcome bounds of the simulated trial, fixed before any data: |3 f(x)| <= 9 and the
# noise sd is 0.5, so [-12, 12] holds every outcome but with probability ~1e-9.
PUBLIC_OUTCOME = (-12.0, 12.0)
_computed: set[tuple] = set()  # sweeps already in the cache (an evicted one is only recomputed)
_COMPUTED_MAX = (
    4096  # forgetting is harmless (a first estimate shown again), growing forever is not
)
#: One n's sweep, as :func:`owl_sweep` returns it: (runs, summary, references).
Sweep = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]
#: A mean with its 95% interval: (mean, lo, hi).
MeanCI = tuple[float, float, float]
#: The arguments of :func:`owl_sweep` after n: (mode, gamma, h, W, reps, seed, prep).
SweepArgs = tuple[str, float, float, float | str, int, int, str]


def preprocessing(prep: str, W: float | str) -> tuple[str | tuple[float, float], float]:
    """(outcome argument of the engine, W) for "public" bounds or the "paper"'s shift.

    ``W="auto"``: (hi - lo)/min(pi) with public bounds, so no weight is ever clipped; the
    authors' 30 with their preprocessing.
    """
    if prep == "paper":
        return "paper", float(PAPER_W if W == "auto" else W)
    auto = default_weight_bound(PUBLIC_OUTCOME, PAPER_TRIAL.propensity)
    return PUBLIC_OUTCOME, float(auto if W == "auto" else W)


def study(
    n: int,
    eps_grid: Sequence[float],
    gamma: float | str,
    h: float,
    W: float | str,
    reps: int,
    seed: int,
    prep: str = "public",
    executor: Executor | None = None,
) -> MonteCarloResult:
    """The page's Monte-Carlo study of DP-OWL on the paper's trial at one n, over ``eps_grid``.

    Every study of the page draws the same simulated trials for the same (n, reps, seed):
    the test size is :data:`TEST_SIZE` and the outcome and W come from :func:`preprocessing`.
    ``gamma`` is the engine's argument (see :func:`gamma_setting`); ``executor`` runs the
    repetitions (None: the engine's local pool).
    """
    outcome, W = preprocessing(prep, W)
    return owl_monte_carlo(
        [int(n)],
        eps_grid,
        gamma=gamma,
        h=float(h),
        weight_bound=W,
        reps=int(reps),
        test_size=TEST_SIZE,
        seed=int(seed),
        outcome=outcome,
        executor=executor,
    )


def gamma_setting(mode: str, gamma: float) -> float | str:
    """The engine's gamma argument: "paper" or the free value."""
    return "paper" if mode == "paper" else float(gamma)


def gamma_used(mode: str, gamma: float, eps: float, n: int) -> float:
    """The γ a release at (ε, n) uses in this mode."""
    return resolve_gamma(gamma_setting(mode, gamma), eps, n)


def noise_lengths(
    sizes: Iterable[int], eps: float, mode: str, gamma: float, W: float | str, prep: str = "public"
) -> dict[int, float]:
    """{n: the typical length dΔ/ε of a release's noise at (ε, n)} with the γ this mode uses
    at each n (the paper's table changes γ with n) and Δ = 2W/γ (C = 0)."""
    from dpcore.owl.werm_release import sensitivity
    from dpcore.privacy.mechanisms import expected_noise_radius

    _, W = preprocessing(prep, W)
    d = PAPER_TRIAL.p + 1  # the covariates and the intercept
    return {
        int(n): float(
            expected_noise_radius(d, eps, float(sensitivity(W, gamma_used(mode, gamma, eps, n))))
        )
        for n in sizes
    }


@st.cache_data(max_entries=48, show_spinner=False)
@stored
def owl_sweep(
    n: int,
    mode: str,
    gamma: float,
    h: float,
    W: float | str,
    reps: int,
    seed: int,
    prep: str = "public",
) -> Sweep:
    """Monte-Carlo study of DP-OWL on the paper's trial at one n, over the whole ε grid.

    Returns (runs, summary, references); one call serves every position of the ε slider.
    Read from the shared results store when any process has computed it before.
    Uncached calls from all sessions run one at a time (see limits.SIMULATIONS), except the
    small first estimates, so that every waiting user sees a first view at once.
    """
    with SIMULATIONS.slot() if int(reps) > QUICK_REPS else nullcontext():
        res = study(
            n, EPS_OPTIONS, gamma_setting(mode, gamma), h, W, reps, seed, prep, executor=executor()
        )
    return res.runs, res.summary, res.references


LEARNER_REPS = 50  # the learners' comparison: about 2 s at n = 1000 on two cores


@st.cache_data(max_entries=24, show_spinner=False)
@stored
def learner_sweep(n: int, seed: int, reps: int = LEARNER_REPS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The three private learners on the paper's trial at one n, over the whole ε grid
    (:func:`dpcore.owl.learners.compare_learners`): (summary, paired differences), one call
    for every position of the ε slider; from the shared results store when any process has
    computed it before, and one uncached simulation at a time (limits.SIMULATIONS)."""
    with SIMULATIONS.slot():
        runs, _ = compare_learners(
            [int(n)], EPS_OPTIONS, reps=int(reps), seed=int(seed), test_size=TEST_SIZE
        )
    return learner_summary(runs), learner_differences(runs)


def learners_at(
    summary: pd.DataFrame, differences: pd.DataFrame, eps: float
) -> tuple[dict[str, MeanCI], dict[tuple[str, str], MeanCI]]:
    """{learner: (mean, lo, hi)} of agreement and {(first, second): (mean, lo, hi)} of their
    paired differences at one ε of the grid."""
    here, diffs = cell_rows(summary, eps), cell_rows(differences, eps)
    cells = {
        learner: (mean, lo, hi)
        for learner, mean, lo, hi in zip(
            here["learner"], here["agreement_mean"], here["agreement_lo"], here["agreement_hi"]
        )
    }
    pairs = {
        (first, second): (mean, lo, hi)
        for first, second, mean, lo, hi in zip(
            diffs["first"],
            diffs["second"],
            diffs["difference_mean"],
            diffs["difference_lo"],
            diffs["difference_hi"],
        )
    }
    return cells, pairs


def cell_rows(table: pd.DataFrame, eps: float) -> pd.DataFrame:
    """The rows of a table at one ε (the grid holds every slider value, ∞ included)."""
    at = table["epsilon"]
    return table[np.isinf(at) if math.isinf(eps) else np.isclose(at, eps)]


def is_computed(ns: Iterable[int], *args: object) -> bool:
    """Whether owl_sweep(n, *args) has run for every n, here or in the shared store (so the
    view needs no simulation)."""
    # st.cache_data keeps @stored's is_stored (functools.update_wrapper copies the wrapper's
    # attributes), but its CachedFunc type does not declare it
    return all((n, *args) in _computed or owl_sweep.is_stored(n, *args) for n in ns)  # type: ignore[attr-defined]


def sweeps(
    ns: Sequence[int],
    mode: str,
    gamma: float,
    h: float,
    W: float | str,
    reps: int,
    seed: int,
    prep: str = "public",
    progress: Callable[[float, str], object] | None = None,
    what: str = "Simulating",
) -> dict[int, Sweep]:
    """owl_sweep for several n; ``progress(fraction, text)`` before and after each."""
    out = {}
    for k, n in enumerate(ns):
        if progress is not None:
            waiting = " (waiting for other users' simulations)" if SIMULATIONS.busy() else ""
            progress(k / len(ns), f"{what} n = {n}{waiting}…")
        out[n] = owl_sweep(n, mode, gamma, h, W, reps, seed, prep)
        if len(_computed) >= _COMPUTED_MAX:
            _computed.clear()
        _computed.add((n, mode, gamma, h, W, reps, seed, prep))
    if progress is not None:
        progress(1.0, "Done")
    return out


@dataclass(frozen=True)
class ExampleRule:
    """One simulated trial's non-private and private rules, side by side.

    Coefficients are in original units, intercept first; ``theta_hat`` and ``noise`` are in
    the scaled space the noise is added in.
    """

    gamma: float
    gamma_ref: float
    names: tuple[str, ...]
    nonprivate: np.ndarray
    nonprivate_same_gamma: np.ndarray
    private: np.ndarray
    theta_hat: np.ndarray
    noise: np.ndarray
    sensitivity: float
    weight_bound: float
    agreement: dict[str, float]
    accuracy_private: float
    accuracy_nonprivate: float
    value_private: float
    value_nonprivate: float


@st.cache_data(
    max_entries=512, show_spinner=False
)  # every (n, ε) of both γ modes and preprocessings
@stored
def example_rule(
    n: int,
    eps: float,
    mode: str,
    gamma: float,
    h: float,
    W: float | str,
    seed: int,
    prep: str = "public",
) -> ExampleRule:
    """One training set of the paper's trial, its non-private and private rules (from the
    shared results store when any process has drawn it before)."""
    g, g_ref = gamma_used(mode, gamma, eps, n), gamma_used(mode, gamma, np.inf, n)
    outcome, W = preprocessing(prep, W)
    rng = stream(seed, Stream.EXAMPLE, int(n))
    train = PAPER_TRIAL.sample(int(n), rng=rng)
    test = PAPER_TRIAL.sample(TEST_SIZE, rng=rng)
    if prep == "paper":  # the authors' shift by the data's own minimum
        B_train, bounds = train["B"] + paper_outcome_shift(train["B"]), None
    else:
        B_train, bounds = train["B"], outcome
    kw = dict(
        gamma=g,
        huber_h=float(h),
        weight_bound=W,
        outcome_bounds=bounds,
        feature_bounds=PAPER_TRIAL.feature_bounds,
    )

    def fit(epsilon, **overrides):
        return DPOWL(epsilon=epsilon, **{**kw, **overrides}, larger_is_better=True).fit(
            train["X"], train["A"], B_train, PAPER_TRIAL.propensity
        )

    with warnings.catch_warnings():
        # Simulated data: clipping is reported as the page's share, and a fixed γ far from the
        # table may carry more noise than the bounds allow a coefficient (the page shows it).
        warnings.simplefilter("ignore", ClippingWarning)
        warnings.simplefilter("ignore", NoiseWarning)
        private = fit(eps, rng=rng)
        exact = fit(np.inf)
        reference = exact if g_ref == g else fit(np.inf, gamma=g_ref)
    a_priv, a_ref = private.predict(test["X"]), reference.predict(test["X"])
    truth = optimal_treatment(test["f"])
    return ExampleRule(
        gamma=g,
        gamma_ref=g_ref,
        names=("intercept",) + FEATURES,
        nonprivate=np.r_[reference.intercept_, reference.coef_],
        nonprivate_same_gamma=np.r_[exact.intercept_, exact.coef_],
        private=np.r_[private.intercept_, private.coef_],
        theta_hat=exact.theta_,
        noise=private.theta_ - exact.theta_,
        sensitivity=private.sensitivity_,
        weight_bound=W,
        agreement=agreement_test(a_priv, a_ref),
        accuracy_private=100 * float(treatment_accuracy(a_priv, truth)),
        accuracy_nonprivate=100 * float(treatment_accuracy(a_ref, truth)),
        value_private=float(ipw_value(a_priv, test["A"], test["B"])),
        value_nonprivate=float(ipw_value(a_ref, test["A"], test["B"])),
    )


@st.cache_data(max_entries=32, show_spinner=False)
@stored
def gamma_tuning(
    n: int,
    eps: float,
    variant: str,
    n0: int,
    reps: int,
    h: float,
    W: float | str,
    prep: str = "public",
    seed: int = 0,
) -> TuningResult:
    """Algorithm 2 on a public proxy drawn from one of the "imperfect proxy" designs.

    The proxy is public, so its outcomes may be shifted by its own minimum (the authors' way);
    the proxy fits get the noise the release will get: the same W.
    """
    design = PROXY_VARIANTS[variant]
    proxy = design.sample(int(n0), rng=stream(seed, Stream.PROXY))
    _, W = preprocessing(prep, W)
    with SIMULATIONS.slot():
        return tune_gamma(
            proxy,
            int(n),
            float(eps),
            reps=int(reps),
            weight_bound=W,
            h=float(h),
            propensity=design.propensity,
            feature_bounds=design.feature_bounds,
            seed=int(seed),
        )


def view_numbers(summary: pd.DataFrame, n: int, eps: float) -> pd.DataFrame:
    """The current view's numbers (one row per shown setting) for a download."""
    keep = [c for c in summary.columns if not c.endswith(("_sd",))]
    here = summary[
        (summary["n"] == n)
        & (np.isclose(summary["epsilon"], eps) | (np.isinf(summary["epsilon"]) & np.isinf(eps)))
    ]
    best = summary[(summary["n"] == n) & np.isinf(summary["epsilon"])]
    return pd.concat([here, best]).drop_duplicates()[keep]


def cell(summary: pd.DataFrame, eps: float) -> pd.Series:
    """The summary row at one ε (the grid holds every slider value)."""
    row = summary[
        np.isclose(summary["epsilon"], eps) | ((summary["epsilon"] == eps) & np.isinf(eps))
    ]
    return row.iloc[0]


def paper_gamma_table() -> pd.DataFrame:
    """The authors' tuned γ as a table: rows n, columns ε."""
    epsilons = sorted({e for e, _ in PAPER_GAMMA})
    return pd.DataFrame(
        {fmt_eps(e): [PAPER_GAMMA[(e, n)] for n in PAPER_N] for e in epsilons},
        index=pd.Index(PAPER_N, name="n"),
    )


def stack_runs(runs: Mapping[int, pd.DataFrame]) -> pd.DataFrame:
    """One table of per-repetition rows over several n."""
    return pd.concat(list(runs.values()), ignore_index=True)


def stack_summaries(results: Mapping[int, Sweep]) -> pd.DataFrame:
    """One summary table over several n."""
    return pd.concat([s for _, s, _ in results.values()], ignore_index=True)
