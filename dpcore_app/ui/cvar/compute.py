"""Cached computations for the private CVaR page, keyed by plain values.

One scalar sweep covers the whole (n, τ, ε) grid of the page's sliders, so moving any of them
only reads the cache; changing the loss law, B, repetitions or seed runs one new sweep.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.cvar.learning_study import class_study, convex_study
from dpcore.cvar.rates import cvar_regime_name, dp_gd_privacy_constant
from dpcore.cvar.sweep import cvar_sweep, method_comparison, sweep_summary
from dpcore.cvar.tail_risk import rule_tail_risk
from dpcore.montecarlo import summarize
from dpcore.store import stored
from dpcore.theory.measurement import CONVEX_TRANSITION, transition_ratio
from dpcore_app.ui.common.grids import EPS_OPTIONS
from dpcore_app.ui.common.limits import SIMULATIONS, cap_work, executor
from dpcore_app.ui.cvar import charts

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dpcore.cvar.learning_study import ClassStudy
    from dpcore.cvar.tail_risk import RuleTailRisk
    from dpcore_app.ui.common.figures import SharedFigure
    from dpcore_app.ui.common.limits import Workload

N_GRID = (100, 200, 500, 1000, 2000, 5000)
TAU_GRID = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
B_GRID = (0.5, 1.0, 2.0, 5.0, 10.0, 100.0)
M_GRID = (5, 11, 31, 101, 301)
D_GRID = (1, 2, 5, 10, 20, 50)
RATIO_GRID = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)
CONVEX_N, CONVEX_TAU, CONVEX_REPS = 2000, 0.1, 10
KIND_LABELS = {
    "uniform": "uniform on [0, B]",
    "beta": "concentrated (Beta)",
    "two-point": "hard two-point",
    "heavy-tailed": "heavy-tailed (Pareto)",
}

regime = cvar_regime_name


def workload(reps: int) -> Workload:
    """The repetitions the scalar sweep may use (all sizes are kept), and a notice if fewer."""
    return cap_work(reps, N_GRID, keep=N_GRID[-1])


def waiting() -> str:
    """A note for progress texts when another session's sweep holds the simulation slot."""
    return " (waiting for other users' simulations)" if SIMULATIONS.busy() else ""


@st.cache_data(max_entries=24, show_spinner=False)
@stored
def scalar_summary(kind: str, bound: float, reps: int, seed: int) -> pd.DataFrame:
    """Mean errors with 95% Monte-Carlo bands on the full (n, τ, ε) grid, one row per cell."""
    with SIMULATIONS.slot():
        runs = cvar_sweep(
            kind,
            N_GRID,
            TAU_GRID,
            EPS_OPTIONS,
            float(bound),
            int(reps),
            int(seed),
            executor=executor(),
        )
    return sweep_summary(runs, float(bound))


@st.cache_data(max_entries=64, show_spinner=False)
@stored
def methods(
    kind: str, n: int, tau: float, eps: float, bound: float, reps: int, seed: int
) -> pd.DataFrame:
    """The Laplace plug-in against the instance-adaptive variant at one finite ε."""
    with SIMULATIONS.slot():
        return method_comparison(
            kind, int(n), float(tau), float(eps), float(bound), int(reps), int(seed)
        )


def cell(summary: pd.DataFrame, n: int, tau: float, eps: float) -> pd.Series:
    """The summary row of one (n, τ, ε) cell."""
    rows = summary[
        (summary.n == n)
        & np.isclose(summary.tau, tau)
        & ((summary.epsilon == eps) | np.isclose(summary.epsilon, eps))
    ]
    return rows.iloc[0]


def curve(summary: pd.DataFrame, x_axis: str, n: int, tau: float, eps: float) -> pd.DataFrame:
    """The rows behind the error chart for its x-axis: "epsilon" (finite ε at n, τ), "n"
    (at τ, ε), "tau" (at n, ε) or "eps_n_tau" (finite ε at n, every τ)."""
    at_eps = (summary.epsilon == eps) | np.isclose(summary.epsilon, eps)
    finite = np.isfinite(summary.epsilon)
    pick = {
        "epsilon": (summary.n == n) & np.isclose(summary.tau, tau) & finite,
        "n": np.isclose(summary.tau, tau) & at_eps,
        "tau": (summary.n == n) & at_eps,
        "eps_n_tau": (summary.n == n) & finite,
    }[x_axis]
    return summary[pick].sort_values(["tau", "epsilon", "n"]).reset_index(drop=True)


def curves(summary: pd.DataFrame, x_axis: str, n: int, tau: float) -> dict[float, pd.DataFrame]:
    """{ε: :func:`curve` at ε} for every ε of the grid: what the error chart's own ε slider
    shows, read from the one sweep."""
    return {e: curve(summary, x_axis, n, tau, e) for e in EPS_OPTIONS}


def error_steps(
    summary: pd.DataFrame, x_axis: str, n: int, tau: float, bound: float, eps: float
) -> SharedFigure:
    """:func:`charts.error_curves_steps` of :func:`curves` (not for "eps_n_tau"). Passed to
    :func:`~dpcore_app.ui.common.figures.figure`, the shared figure is keyed by the one summary
    and these plain values: the summary is filtered at each ε only when it is not built yet."""
    return charts.error_curves_steps(curves(summary, x_axis, n, tau), x_axis, n, tau, bound, eps)


@st.cache_data(max_entries=48, show_spinner=False)
@stored
def finite_class(n: int, tau: float, M: int, bound: float, seed: int) -> ClassStudy:
    """The exponential-mechanism study over the page's ε grid (exact, no sampling)."""
    with SIMULATIONS.slot():  # M = 301 slopes on the public sample take about a second
        return class_study(int(n), float(tau), int(M), EPS_OPTIONS, float(bound), int(seed))


def class_table(study: ClassStudy) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Selection probabilities (one column per ε) and the excess curves, as one tidy table."""
    probs = pd.DataFrame(study.probs.T, columns=[f"P(select) at eps={e:g}" for e in study.epsilons])
    per_theta = pd.concat(
        [
            pd.DataFrame(
                {
                    "theta": study.thetas,
                    "cvar_empirical": study.rho_emp,
                    "cvar_population": study.rho_pop,
                }
            ),
            probs,
        ],
        axis=1,
    )
    per_eps = pd.DataFrame(
        {
            "epsilon": study.epsilons,
            "excess_empirical": study.excess_emp,
            "excess_population": study.excess_pop,
            "mcsherry_talwar_bound": study.gap_bound,
            "rate": study.rate,
        }
    )
    return per_theta, per_eps


@st.cache_data(max_entries=16, show_spinner=False)
@stored
def convex(ds: Sequence[int], seed: int) -> pd.DataFrame:
    """DP-GD's excess CVaR against εnτ/√d for each d (n = 2000, τ = 0.1, T = 100)."""
    with SIMULATIONS.slot():
        runs = convex_study(
            CONVEX_N, CONVEX_TAU, sorted(ds), RATIO_GRID, reps=CONVEX_REPS, seed=int(seed)
        )
    return summarize(runs, ("d", "ratio"), ("excess", "epsilon"))


def convex_transition(summary: pd.DataFrame, delta: float = 1e-5) -> dict[str, Any]:
    """Where this run's excess falls to half its peak, per d, and DP-GD's worst-case noise
    constant c (noise part c √d/(εnτ)) with its Gaussian-DP calibration ε/μ at that point:
    {"half": the ratio per d (NaN where it never halves), "c" and "calibration": one per d that
    halves, "benchmark": the benchmark's median half point, "max_epsilon": the largest mean ε}."""
    half = transition_ratio(summary)
    found = half.dropna()  # indexed by d
    consts = [
        dp_gd_privacy_constant(
            CONVEX_N, d, CONVEX_TAU, r * math.sqrt(d) / (CONVEX_N * CONVEX_TAU), delta
        )
        for d, r in zip(found.index.astype(int), found)
    ]
    return {
        "half": half,
        "c": [k["c"] for k in consts],
        "calibration": [k["calibration"] for k in consts],
        "benchmark": CONVEX_TRANSITION["median_half"],
        "max_epsilon": float(summary.epsilon_mean.max()) if "epsilon_mean" in summary else math.nan,
    }


@st.cache_data(max_entries=64, show_spinner=False)
def rule_tail(
    n: int, tau: float, eps_rule: float, eps_cvar: float, seed: int
) -> tuple[RuleTailRisk, float, tuple[tuple[str, float], ...]]:
    """The DP-OWL bridge: tail outcomes of the private and non-private rules, and the ledger
    total (a frozen dataclass; the ledger is summarised as plain values)."""
    res = rule_tail_risk(int(n), float(tau), float(eps_rule), float(eps_cvar), int(seed))
    total = res.ledger.total()[0]
    spent = math.inf if math.isinf(eps_cvar) or math.isinf(eps_rule) else total
    entries = tuple((e.mechanism, e.epsilon) for e in res.ledger.entries)
    return res, spent, entries


def rule_table(res: RuleTailRisk, eps_rule: float, eps_cvar: float, spent: float) -> pd.DataFrame:
    """The numbers of the treatment-rule chart, for download (simulated patients only)."""
    return pd.DataFrame(
        {
            "quantity": [
                "tau",
                "eps_rule",
                "eps_cvar",
                "eps_total_basic_composition",
                "gamma",
                "worst_tau_mean_best_rule",
                "worst_tau_mean_nonprivate_rule",
                "worst_tau_mean_private_rule",
                "worst_tau_mean_private_rule_released",
                "release_95pct_halfwidth",
                "mean_outcome_private_rule",
                "mean_outcome_nonprivate_rule",
                "agreement_private_vs_nonprivate",
            ],
            "value": [
                res.tau,
                eps_rule,
                eps_cvar,
                spent,
                res.gamma,
                res.best_rule,
                res.nonprivate_rule,
                res.private_rule,
                res.released,
                res.halfwidth,
                res.mean_private,
                res.mean_nonprivate,
                res.agreement,
            ],
        }
    )
