"""Cached computations for the Theory bounds page, keyed by plain values.

The Monte-Carlo measurements (the engine's releases on simulated trials, private CVaR on demo
losses) are read from the shared results store or run one at a time across sessions
(limits.SIMULATIONS); the formulas' curves are cached per setting too, since together they cost
tens of milliseconds on every rerun.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.cvar.sweep import cvar_sweep
from dpcore.montecarlo import summarize
from dpcore.owl.paper import PAPER_EPSILONS, paper_gamma, resolve_gamma
from dpcore.owl.werm_release import sensitivity
from dpcore.store import stored
from dpcore.theory import bounds
from dpcore.theory import measurement as check
from dpcore_app.ui.bounds import charts
from dpcore_app.ui.common import figures
from dpcore_app.ui.common.grids import EPS_OPTIONS
from dpcore_app.ui.common.limits import SIMULATIONS, cap_work, executor

TRIALS = 20  # simulated trials per setting; each gets DRAWS/TRIALS noise draws
DRAWS = 2000  # noise draws per point of a curve (before the work cap)
D = 5  # dimension of theta: 4 features and the intercept
GAMMA_GRID = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
H_GRID = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
CVAR_N = (100, 300, 1000, 3000, 10_000, 30_000)
CVAR_REPS = 100

#: ‖θ0‖ of the comparator: one number, or one per convention ({convention: ‖θ0‖}, each form
#: reading its own, :data:`dpcore.theory.bounds.FORM_CONVENTION`).
Theta0Norm = float | dict[str, float]


def gamma_used(mode: str, gamma: float, eps: float, n: int) -> float:
    """The γ of the current setting: the paper's table or the free value."""
    return resolve_gamma("paper" if mode == "paper" else float(gamma), eps, n)


def draws_per_trial(n: int) -> tuple[int, str | None]:
    """Noise draws per trial, and a notice when the work cap lowered them."""
    work = cap_work(DRAWS, (int(n),), keep=int(n))
    return max(1, work.reps // TRIALS), work.notice


@dataclass(frozen=True)
class Measured:
    """The measurement at one setting: per-draw rows at the current (γ, h) and summaries of
    the curves against γ and against h (mean with 95% band and the (1 - ρ) quantile), one
    per convention (the excess against that convention's comparator θ0)."""

    here: pd.DataFrame
    vs_gamma: dict[str, pd.DataFrame]
    vs_h: dict[str, pd.DataFrame]
    norms: dict[str, float]  # convention -> mean ‖θ0‖ over the trials

    @property
    def theta0_norm(self) -> float:
        """‖θ0‖ of the code's convention (λ = γ/n), the one the re-derived form uses."""
        return self.norms["code"]

    def curve(self, over: str, form: str) -> pd.DataFrame:
        """The measured curve against ``over`` that the ``form`` is held against."""
        return (self.vs_gamma if over == "gamma" else self.vs_h)[bounds.FORM_CONVENTION[form]]

    def excess(self, form: str) -> pd.Series:
        """Per-draw excess at the current setting against the form's comparator."""
        return self.here[f"excess_{bounds.FORM_CONVENTION[form]}"]


def _norm(theta0_norm: Theta0Norm, form: str) -> float:
    """‖θ0‖ for a form: a number, or a {convention: number} dict read at the form's own."""
    return (
        theta0_norm[bounds.FORM_CONVENTION[form]] if isinstance(theta0_norm, dict) else theta0_norm
    )


def _curves(runs, comps, by, rho):
    """Per convention: the mean excess with a 95% band over the trials (each trial's draws
    averaged first: they share the trial's data, and without noise they are identical), and
    the (1 - ρ) quantile over all releases."""
    out = {}
    trial = runs.trial.to_numpy()
    for conv, comp in comps.items():
        r = runs.assign(excess=runs.risk.to_numpy() - comp.risk[trial])
        per_trial = r.groupby([by, "trial"], as_index=False).excess.mean()
        s = summarize(per_trial, [by], ["excess"])
        q = r.groupby(by).excess.quantile(1 - rho).rename("excess_q").reset_index()
        out[conv] = s.merge(q, on=by)
    return out


@st.cache_data(max_entries=32, show_spinner=False)
@stored
def measure(
    n: int, eps: float, gamma: float, h: float, W: float, C: float, rho: float, seed: int
) -> Measured:
    """Excess empirical hinge risk of the engine's releases at (n, ε, γ, h, W, C).

    The comparator θ0 of each convention is the regularized-hinge minimiser at the current
    γ (λ = γ/n, and λ = 2γ/n for the transcribed form), kept fixed along both curves, so
    every point checks the same inequality for the same θ0; only at the current γ is it the
    hardest θ0.
    """
    n, draws = int(n), draws_per_trial(n)[0]
    with SIMULATIONS.slot():
        trials = check.paper_trials(n, TRIALS, float(W), seed=int(seed))
        comps = check.comparators(trials, gamma)
        theta0 = comps["code"].theta0
        args: dict[str, Any] = dict(weight_bound=float(W), C=float(C), draws=draws, seed=int(seed))
        gammas = sorted(set(GAMMA_GRID) | {float(gamma)})
        runs_g = check.werm_excess_risk(trials, theta0, eps, gammas, h, **args)
        runs_h = check.werm_excess_over_h(
            trials,
            theta0,
            eps,
            gamma,
            sorted(set(H_GRID) | {float(h)}),
            executor=executor(),
            **args,
        )
    here = check.with_bounds(runs_g[runs_g.gamma == float(gamma)], comps, n, eps, rho, W, C, D)
    return Measured(
        here.reset_index(drop=True),
        _curves(runs_g, comps, "gamma", rho),
        _curves(runs_h, comps, "h", rho),
        {conv: float(np.mean(c.norm)) for conv, c in comps.items()},
    )


def measured_card(eps: float, rho: float, excess: pd.Series) -> tuple[str, float]:
    """(label, value) of the measured card: the (1 - ρ) quantile over releases, or without
    noise (one release per trial) the largest excess over the trials."""
    if math.isinf(eps):
        return "Measured, largest over trials", float(excess.max())
    return f"Measured, {1 - rho:.0%} quantile", float(excess.quantile(1 - rho))


def coverages(here: pd.DataFrame, eps: float) -> dict[str, dict[str, float]]:
    """Coverage of each bound form at the current setting (share within, 95% CI with the
    draws clustered by trial; without noise one value per trial)."""
    return {
        form: check.coverage(here[f"within_{form}"], here.trial, identical=math.isinf(eps))
        for form in bounds.FORMS
    }


def terms(
    n: int,
    eps: float,
    gamma: float,
    h: float,
    W: float,
    C: float,
    rho: float,
    theta0_norm: Theta0Norm,
    G: float = 0.0,
) -> dict[str, dict[str, float]]:
    """Both forms' terms at the current setting, each at its own convention and with its own
    comparator's ‖θ0‖: {form: {T1, T2, T3, G, total}} as floats."""
    return {
        form: {
            k: float(v)
            for k, v in bounds.werm_bound(
                n, gamma, h, eps, rho, W, C, D, _norm(theta0_norm, form), form, G
            ).items()
        }
        for form in bounds.FORMS
    }


@st.cache_data(max_entries=64, show_spinner=False)
def terms_curve(
    n: int,
    eps: float,
    gamma: float,
    h: float,
    W: float,
    C: float,
    rho: float,
    theta0_norm: Theta0Norm,
    G: float,
    over: str,
    reach: float = 0.0,
) -> pd.DataFrame:
    """Every term of both forms on a fine grid of γ (``over="gamma"``) or h (``over="h"``),
    wide enough to reach ``reach`` (a minimiser to be marked on it)."""
    top = 1000.0 if over == "gamma" else 3.0
    if math.isfinite(reach) and reach > 0:
        top = max(top, 1.5 * reach)
    x = np.geomspace(1, top, 160) if over == "gamma" else np.geomspace(0.02, top, 160)
    g, hh = (x, h) if over == "gamma" else (gamma, x)
    out = {over: x}
    for form in bounds.FORMS:
        t = bounds.werm_bound(n, g, hh, eps, rho, W, C, D, _norm(theta0_norm, form), form, G)
        out.update({f"{k}_{form}": np.broadcast_to(v, x.shape) for k, v in t.items()})
    return pd.DataFrame(out)


@st.cache_data(max_entries=64, show_spinner=False)
def minimisers(
    n: int,
    eps: float,
    gamma: float,
    h: float,
    W: float,
    C: float,
    rho: float,
    theta0_norm: Theta0Norm,
) -> dict[str, Any]:
    """The bound-minimising γ (at this h), h (at this γ) and joint (γ, h), per form, with the
    paper's table γ for comparison: {form: {"gamma": γ, "h": h, "joint": (γ, h)}, "paper": γ}."""
    out: dict[str, Any] = {}
    for form in bounds.FORMS:
        out[form] = {
            "gamma": bounds.best_gamma(n, h, eps, rho, W, C, D, _norm(theta0_norm, form), form),
            "h": bounds.best_h(n, gamma, eps, rho, W, C, D, form),
            "joint": bounds.best_gamma_h(n, eps, rho, W, C, D, _norm(theta0_norm, form), form),
        }
    out["paper"] = paper_gamma(eps, n)
    return out


@st.cache_data(max_entries=64, show_spinner=False)
def gamma_table(
    n: int, h: float, W: float, C: float, rho: float, theta0_norm: Theta0Norm
) -> pd.DataFrame:
    """The paper's tuned γ against the bound-minimising γ (at this h) for each finite ε of the
    paper's table, at this n."""
    rows = [
        {
            "ε": e,
            "paper table γ": paper_gamma(e, n),
            **{
                f"bound-minimising γ ({f})": bounds.best_gamma(
                    n, h, e, rho, W, C, D, _norm(theta0_norm, f), f
                )
                for f in bounds.FORMS
            },
        }
        for e in PAPER_EPSILONS
        if math.isfinite(e) and e <= 150
    ]
    return pd.DataFrame(rows).set_index("ε")


def sensitivities(W: float, gamma: float, C: float) -> dict[str, float]:
    """Theorem 7's (C + 2W)/γ, the unweighted 2/γ, and what the engine's release uses."""
    return {
        "weighted": float(bounds.weighted_sensitivity(W, gamma, C)),
        "unweighted": float(bounds.unweighted_sensitivity(gamma)),
        "released": float(sensitivity(W, gamma, C)),
    }


def rate_ratio(measured: pd.DataFrame, tau: float, eps: float) -> tuple[float, float]:
    """Measured mean error over the scalar rate at each measured n: (smallest, largest)."""
    ratio = measured.total_mean / bounds.scalar_cvar_rate(measured.n.to_numpy(), tau, eps)
    return float(ratio.min()), float(ratio.max())


@st.cache_data(max_entries=64, show_spinner=False)
def sample_sizes(alpha: float, W: float, C: float, rho: float, theta0_norm: float) -> pd.DataFrame:
    """Corollary 12's n against ε (h = α/W), each term and which one rules."""
    eps = np.geomspace(0.05, 1000, 120)
    out = bounds.sample_size(alpha, eps, W, C, D, rho, theta0_norm)
    df = pd.DataFrame({"epsilon": eps, **{k: np.asarray(v) for k, v in out.items()}})
    parts = df[["statistical", "privacy", "smoothing"]].to_numpy()
    df["regime"] = np.array(["statistical", "privacy", "smoothing"])[parts.argmax(axis=1)]
    return df


@st.cache_data(max_entries=64, show_spinner=False)
def phase_grid(eps: float, d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CVaR regime over a log grid of (n, τ) at ε and d."""
    ns, taus = np.geomspace(10, 1e6, 81), np.geomspace(1e-3, 1.0, 61)
    N, T = np.meshgrid(ns, taus)
    return ns, taus, bounds.cvar_regime(N, T, eps, d)


# One entry per ε of the grid at each (τ, d): the rate chart's slider reads all 15 at once, so
# this keeps the last 16 (τ, d) views whole (a 120-row frame each, a few kB).
@st.cache_data(max_entries=16 * len(EPS_OPTIONS), show_spinner=False)
def cvar_rates(tau: float, eps: float, d: int) -> pd.DataFrame:
    """Rate curves against n at (τ, ε, d), B = 1, constants 1."""
    ns = np.geomspace(10, 1e6, 120)
    return pd.DataFrame(
        {
            "n": ns,
            "scalar": bounds.scalar_cvar_rate(ns, tau, eps),
            "finite_class_M10": bounds.finite_class_rate(10, ns, tau, eps),
            "convex_lower": bounds.convex_lower_rate(ns, tau, eps, d, G=1.0, D=1.0, B=1.0),
            "statistical_part": np.minimum(1.0, 1.0 / np.sqrt(ns * tau)),
            "privacy_part": np.minimum(1.0, 1.0 / (eps * ns * tau)) if math.isfinite(eps) else 0.0,
        }
    )


@st.cache_data(max_entries=16, show_spinner=False)
@stored
def cvar_runs(tau: float, seed: int) -> pd.DataFrame:
    """The Laplace plug-in on the hard two-point instance at every ε of the grid: one sweep
    serves every ε slider position."""
    with SIMULATIONS.slot():
        return cvar_sweep(
            "two-point",
            CVAR_N,
            [tau],
            EPS_OPTIONS,
            reps=CVAR_REPS,
            seed=int(seed),
            executor=executor(),
        )


# One entry per ε of the grid for each of the 16 (τ, seed) sweeps that cvar_runs keeps.
@st.cache_data(max_entries=16 * len(EPS_OPTIONS), show_spinner=False)
def cvar_measured(tau: float, eps: float, seed: int) -> pd.DataFrame:
    """Mean error of the Laplace plug-in at ε, with its statistical and (exact) privacy parts."""
    runs = cvar_runs(tau, seed)
    here = runs[(runs.epsilon == eps) | (np.isclose(runs.epsilon, eps) & np.isfinite(eps))]
    return summarize(
        here.rename(columns={"privacy": "privacy_draw", "privacy_exact": "privacy"}),
        ["n"],
        ["total", "statistical", "privacy"],
    )


def rate_curves(tau: float, d: int, seed: int) -> dict[float, tuple[pd.DataFrame, pd.DataFrame]]:
    """{ε: (:func:`cvar_rates`, :func:`cvar_measured`)} for every ε of the grid: what the rate
    chart's own ε slider shows (the formulas, and the one sweep over every ε)."""
    return {e: (cvar_rates(tau, e, d), cvar_measured(tau, e, seed)) for e in EPS_OPTIONS}


def rate_steps(tau: float, d: int, seed: int, eps: float) -> figures.SharedFigure:
    """:func:`charts.cvar_rates_steps` of :func:`rate_curves` at (τ, d, seed), the page's ε
    the slider's current step. Built through :func:`rate_steps_figure`, which keys the shared
    figure by these plain values: the 15 ε' curves are read only when it is not built yet."""
    return charts.cvar_rates_steps(rate_curves(tau, d, seed), tau, eps)


def rate_steps_figure(tau: float, d: int, seed: int, eps: float) -> figures.SharedFigure:
    """:func:`rate_steps`, built once per (τ, d, seed, ε) and shared (figures.py)."""
    return figures.figure(rate_steps, tau, d, seed, eps)


def busy() -> bool:
    """Whether other sessions' simulations hold every slot (the spinner then says so)."""
    return SIMULATIONS.busy()


def figure(builder: str, *args: Any) -> figures.SharedFigure:
    """``charts.<builder>(*args)``, built once per distinct input and shared (figures.py)."""
    return figures.figure(getattr(charts, builder), *args)
