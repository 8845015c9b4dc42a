"""What a release is likely to deliver, before any ε is spent: a simulated twin of the trial.

The twin is built from public values only: the public n, the covariates' public bounds (and
which are 0/1), the outcome's public bounds and direction, the randomization, and the release's
W, C and γ. Nothing of the private data is read beyond n and the number of covariates, so the
preview spends no privacy and its results may be cached and shared across sessions.

The twin (:class:`dpcore.owl.simulate.TwinDesign`) has covariates uniform on their public
bounds and a treatment effect whose standard deviation is a public share of the outcome's range
(weak 5%, moderate 15%, strong 30%).

A twin has the trial's n patients up to ``max_rows`` (default 5,000). A larger trial is
simulated at ``max_rows`` patients with γ scaled by max_rows / n for the fit: the objective
sum_i w_i l_i + γ/2 ||θ||² is a sum over rows, so this keeps the minimiser of its population
version (its expectation divided by n) the same, while the noise keeps the release's own
sensitivity (C + 2W)/γ at the trial's n and γ. The cost is then bounded whatever the trial's
size; what changes is the twin's sampling error, that of max_rows patients, which makes the
non-private rule look a little sharper than the trial's: at the paper's γ the capped twin's
agreement was within Monte-Carlo error of the full twin's at 20,000 and 100,000 patients, at
γ ten to a hundred times the table's up to 3 points higher (``tests/dpcore/test_preview.py``).

For each strength and ε the preview fits the release path on several twins (the exact
minimiser, shared by every ε with the same γ) and draws the output-perturbation noise many
times, then reports the agreement of the private rule with the non-private rule at the same
γ, and the share of the non-private rule's gain (over the better fixed arm, on the twin's
true effects) that the private rule keeps, with 95% bands of single releases.

On the same twins (same seeds, strengths and ε) it previews the second learner, the private
plug-in rule (:mod:`dpcore.owl.plugin`): the two arms' sufficient statistics are computed
once per twin and Laplace noise is drawn per ε and draw. Both learners are then scored on one
scale, the share of the twin's patients each gives the better arm (the twin knows its true
effects), and their difference is given with its Monte-Carlo interval
(:func:`dpcore.release.preview_reading.recommend_learner`). A capped twin (``max_rows`` < n)
stands for the trial by its statistics scaled by n / max_rows, sums over rows as the objective
is, with the noise and the ridge of the trial's own n.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd
from scipy import stats as _stats

from .._validation import check_epsilon, check_real
from ..montecarlo import key
from ..owl.outcome_model import statistics_sensitivity
from ..owl.owl import owl_weights
from ..owl.paper import resolve_gamma
from ..owl.plugin import plugin_statistics, score_from_statistics
from ..owl.preprocessing import FeatureScaling
from ..owl.simulate import STRENGTHS, TwinDesign
from ..owl.werm import solve_werm
from ..owl.werm_release import resolve_C, sensitivity
from ..privacy.mechanisms import l2_gamma_noise, sample_laplace

__all__ = ["MAX_ROWS", "TwinDesign", "preview"]


#: Most patients in one simulated twin: the preview's cost does not grow past it.
MAX_ROWS = 5000


def preview(
    design,
    epsilons,
    *,
    gamma,
    weight_bound,
    C=0.0,
    huber_h=0.5,
    strengths=tuple(STRENGTHS),
    twins=8,
    draws=25,
    seed=0,
    max_rows=MAX_ROWS,
    plugin=True,
    ridge=0.01,
):
    """Agreement with the non-private rule and value retained against ε, on simulated twins,
    and both learners' share of patients given the better arm.

    Parameters
    ----------
    design : TwinDesign
    epsilons : sequence of float
        Finite budgets to preview.
    gamma : float, "paper", or sequence of float aligned with ``epsilons``
        The γ each release would use.
    weight_bound, C, huber_h
        The release's W, C (a number or "worst-case") and Huber width.
    strengths : sequence of names of :data:`STRENGTHS`, or mapping
        A mapping ``{name: share}`` gives each strength's standard deviation as a share of the
        outcome's range (an analyst's own effect size in outcome units, divided by the range).
    twins, draws : int
        Twins fitted, and noise draws per twin and ε: twins * draws releases per point.
    seed : int
    max_rows : int
        Most patients in a twin; a larger n is simulated at ``max_rows`` with γ scaled by
        max_rows / n for the fit (module docstring).
    plugin : bool
        Also preview the private plug-in rule (:class:`dpcore.PrivatePlugInRule`, all
        covariates, ridge ``ridge``) on the same twins; False leaves its columns NaN.
    ridge : float
        The plug-in rule's public ridge per row.

    Returns
    -------
    DataFrame with one row per (strength, epsilon): gamma, agreement_mean (percent),
    agreement_se (Monte-Carlo standard error, twins as clusters), agreement_lo and
    agreement_hi (2.5% and 97.5% of single releases), disagreement_mean, disagreement_lo and
    disagreement_hi (percent of the twin's patients two releases of the same twin treat
    differently: draws paired two by two; NaN with one draw), retained_mean, retained_lo,
    retained_hi (share of the non-private rule's gain kept), gain_mean, gain_se, gain_lo and
    gain_hi (the private releases' gain over the better fixed arm in outcome units: mean, its
    Monte-Carlo standard error, and 2.5% and 97.5% of single releases), nonprivate_gain and
    oracle_gain (outcome units, over the better fixed arm), effect_sd (outcome units) and
    releases.
    On the scale both learners share, the percent of the twin's patients given the arm that is
    better for them (the twin's own optimal rule): best_mean, best_se, best_lo, best_hi
    (DP-OWL's release) and best_nonprivate (DP-OWL at ε = inf, same γ); plugin_best_mean,
    plugin_best_se, plugin_best_lo, plugin_best_hi and plugin_best_nonprivate (the plug-in
    rule's); difference_mean, difference_se, difference_ci_lo and difference_ci_hi (plug-in
    minus DP-OWL, in points: the mean over releases and its 95% Monte-Carlo interval, twins as
    clusters, Student's t with twins - 1 degrees of freedom; NaN with one twin).
    """
    eps = np.array([check_epsilon(e) for e in np.atleast_1d(epsilons)], dtype=float)
    if np.isinf(eps).any():
        raise ValueError("preview epsilons must be finite (ε = inf is the reference itself)")
    n = int(design.n)
    if isinstance(gamma, str) or np.ndim(gamma) == 0:
        gammas = np.array([resolve_gamma(gamma, e, n) for e in eps], dtype=float)
    else:
        gammas = np.array([check_real(g, "gamma", low=0.0) for g in gamma], dtype=float)
        if gammas.shape != eps.shape:
            raise ValueError(
                f"gamma must give one value per epsilon ({eps.size}), got {gammas.size}"
            )
    W = check_real(weight_bound, "weight_bound", low=0.0)
    C = resolve_C(C, n, W)
    rows = min(n, int(check_real(max_rows, "max_rows", low=1.0)))
    twin_design = design if rows == n else replace(design, n=rows)
    named = (
        dict(strengths) if isinstance(strengths, Mapping) else {s: STRENGTHS[s] for s in strengths}
    )
    strengths = list(named)
    shares = [check_real(v, f"strength {k!r}", low=0.0) for k, v in named.items()]
    scaling = FeatureScaling.from_bounds(
        (np.asarray(design.lower), np.asarray(design.upper)), design.p
    )
    distinct = np.unique(gammas)
    slot = np.searchsorted(distinct, gammas)
    S, E, G, K = len(shares), eps.size, distinct.size, int(draws)
    agree = np.empty((S, E, twins, K))
    # Two releases of one twin: draws 0 and 1, 2 and 3, ... (the same trial, fresh noise each).
    pairs = K // 2
    disagree = np.full((S, E, twins, max(pairs, 1)), np.nan)
    gain = np.empty((S, E, twins, K))
    gain_np = np.empty((S, E, twins))
    oracle = np.empty((S, twins))
    best = np.empty((S, E, twins, K))
    best_np = np.empty((S, E, twins))
    plug = np.full((S, E, twins, K), np.nan)
    plug_np = np.full((S, twins), np.nan)
    lower, upper = np.asarray(design.lower, float), np.asarray(design.upper, float)
    plug_sens = statistics_sensitivity(1 + design.p)
    for t in range(int(twins)):
        rng = np.random.default_rng([int(seed), 31, n, t])
        twin = twin_design.sample(shares, rng=rng)
        Xt = scaling.transform(twin["X"])
        w = np.stack(
            [
                owl_weights(
                    twin["B"][s],
                    twin["A"],
                    design.propensity,
                    W,
                    design.outcome_bounds,
                    design.larger_is_better,
                )[0]
                for s in shares
            ]
        )
        # One batched solve shares the design: every (strength, γ) problem at once.
        theta, _ = solve_werm(
            Xt,
            twin["A"],
            np.repeat(w, G, axis=0),
            np.tile(distinct * rows / n, S),
            "huber",
            huber_h,
        )
        theta = theta.reshape(S, G, -1)
        ref = theta[:, slot]  # (S, E, d)
        noise = np.stack(
            [
                l2_gamma_noise(
                    scaling.d,
                    e,
                    sensitivity(W, g, C),
                    size=(S, K),
                    rng=np.random.default_rng([int(seed), 32, n, t, key(e)]),
                )
                for e, g in zip(eps, gammas)
            ],
            axis=1,
        )  # (S, E, K, d)
        private = ref[:, :, None, :] + noise
        d_ref = Xt @ ref.reshape(-1, scaling.d).T > 0  # (n, S*E)
        d_priv = Xt @ private.reshape(-1, scaling.d).T > 0  # (n, S*E*K)
        effect = np.stack([twin["effect"][s] for s in shares])  # (S, n)
        best_fixed = np.maximum(effect.mean(axis=1), 0.0)  # treat all, or none
        d_ref = d_ref.T.reshape(S, E, rows)
        d_priv = d_priv.T.reshape(S, E, K, rows)
        agree[:, :, t] = 100.0 * np.mean(d_priv == d_ref[:, :, None, :], axis=-1)
        if pairs:
            first, second = d_priv[:, :, 0 : 2 * pairs : 2], d_priv[:, :, 1 : 2 * pairs : 2]
            disagree[:, :, t] = 100.0 * np.mean(first != second, axis=-1)
        gain[:, :, t] = np.einsum("sekn,sn->sek", d_priv, effect) / rows - best_fixed[:, None, None]
        gain_np[:, :, t] = np.einsum("sen,sn->se", d_ref, effect) / rows - best_fixed[:, None]
        oracle[:, t] = np.maximum(effect, 0.0).mean(axis=1) - best_fixed
        truth = effect > 0  # (S, n): the arm that is better for each of the twin's patients
        best[:, :, t] = 100.0 * np.mean(d_priv == truth[:, None, None, :], axis=-1)
        best_np[:, :, t] = 100.0 * np.mean(d_ref == truth[:, None, :], axis=-1)
        if plugin:
            plug_np[:, t], plug[:, :, t] = _plugin_twin(
                twin,
                shares,
                design,
                eps,
                (lower, upper),
                n,
                rows,
                truth,
                K,
                ridge,
                plug_sens,
                seed,
                t,
            )
    extra = _learner_summary(best, best_np, plug, plug_np)
    frame = _summary(strengths, shares, eps, gammas, agree, gain, gain_np, oracle, design, disagree)
    return pd.concat([frame, extra], axis=1)


def _plugin_twin(twin, shares, design, eps, bounds, n, rows, truth, K, ridge, sens, seed, t):
    """The plug-in rule on one twin: its statistics once, Laplace noise per ε and draw.

    Returns the non-private rule's and the releases' percent of patients given the better arm,
    shapes (S,) and (S, E, K). A capped twin's statistics are scaled by n / rows (sums over
    the trial's rows), and the noise and the ridge are the trial's, at its public n."""
    S = len(shares)
    X = twin["X"]
    B = np.stack([twin["B"][s] for s in shares])  # (S, rows)
    stats = plugin_statistics(
        np.broadcast_to(X, (S,) + X.shape),
        np.broadcast_to(twin["A"], B.shape),
        B,
        bounds,
        design.outcome_bounds,
    ) * (n / rows)  # (S, 2k)
    common = dict(
        n=n,
        feature_bounds=bounds,
        outcome_bounds=design.outcome_bounds,
        larger_is_better=design.larger_is_better,
        ridge=ridge,
    )
    Xc = np.clip(X, *bounds)
    b0, coef, _ = score_from_statistics(stats, epsilon=np.inf, **common)
    exact = 100.0 * np.mean((b0[:, None] + coef @ Xc.T > 0) == truth, axis=-1)
    out = np.empty((S, eps.size, K))
    for j, e in enumerate(eps):
        noise = sample_laplace(
            e,
            sens,
            (S, K, stats.shape[-1]),
            rng=np.random.default_rng([int(seed), 33, n, t, key(e)]),
        )
        b0, coef, _ = score_from_statistics(stats[:, None, :] + noise, epsilon=e, **common)
        treat = b0[..., None] + coef @ Xc.T > 0  # (S, K, rows)
        out[:, j] = 100.0 * np.mean(treat == truth[:, None, :], axis=-1)
    return exact, out


def _learner_summary(best, best_np, plug, plug_np):
    """Both learners' percent of patients given the better arm, and their paired difference
    with a 95% Monte-Carlo interval (twins as clusters), one row per (strength, ε)."""
    S, E, T, _ = best.shape
    diff = plug.mean(axis=-1) - best.mean(axis=-1)  # (S, E, T): per twin, its draws averaged
    mean = diff.mean(axis=-1)
    se = diff.std(axis=-1, ddof=1) / np.sqrt(T) if T > 1 else np.full((S, E), np.nan)
    half = _stats.t.ppf(0.975, T - 1) * se if T > 1 else se

    def se_of(a):
        return a.mean(axis=-1).std(axis=-1, ddof=1) / np.sqrt(T) if T > 1 else np.nan

    def q(a, level):
        return np.full((S, E), np.nan) if np.isnan(a).all() else np.quantile(a, level, axis=(2, 3))

    cols = {
        "best_mean": best.mean(axis=(2, 3)),
        "best_se": se_of(best),
        "best_lo": q(best, 0.025),
        "best_hi": q(best, 0.975),
        "best_nonprivate": best_np.mean(axis=2),
        "plugin_best_mean": plug.mean(axis=(2, 3)),
        "plugin_best_se": se_of(plug),
        "plugin_best_lo": q(plug, 0.025),
        "plugin_best_hi": q(plug, 0.975),
        "plugin_best_nonprivate": np.repeat(plug_np.mean(axis=1)[:, None], E, axis=1),
        "difference_mean": mean,
        "difference_se": se,
        "difference_ci_lo": mean - half,
        "difference_ci_hi": mean + half,
    }
    return pd.DataFrame({k: np.broadcast_to(v, (S, E)).reshape(-1) for k, v in cols.items()})


def _summary(strengths, shares, eps, gammas, agree, gain, gain_np, oracle, design, disagree):
    lo_b, hi_b = design.outcome_bounds
    rows = []
    for i, (name, share) in enumerate(zip(strengths, shares)):
        for j, e in enumerate(eps):
            a, twins = agree[i, j], agree.shape[2]
            base = gain_np[i, j].mean()
            kept = gain[i, j] / base if base > 0 else np.full_like(gain[i, j], np.nan)
            rows.append(
                {
                    "strength": name,
                    "epsilon": e,
                    "gamma": gammas[j],
                    "agreement_mean": a.mean(),
                    "agreement_se": (
                        a.mean(axis=1).std(ddof=1) / np.sqrt(twins) if twins > 1 else np.nan
                    ),
                    "agreement_lo": np.quantile(a, 0.025),
                    "agreement_hi": np.quantile(a, 0.975),
                    "disagreement_mean": np.mean(disagree[i, j]),
                    "disagreement_lo": np.quantile(disagree[i, j], 0.025),
                    "disagreement_hi": np.quantile(disagree[i, j], 0.975),
                    "gain_mean": float(np.mean(gain[i, j])),
                    "gain_se": (
                        float(gain[i, j].mean(axis=1).std(ddof=1) / np.sqrt(twins))
                        if twins > 1
                        else np.nan
                    ),
                    "gain_lo": float(np.quantile(gain[i, j], 0.025)),
                    "gain_hi": float(np.quantile(gain[i, j], 0.975)),
                    "retained_mean": np.mean(kept),
                    "retained_lo": np.quantile(kept, 0.025),
                    "retained_hi": np.quantile(kept, 0.975),
                    "nonprivate_gain": base,
                    "oracle_gain": oracle[i].mean(),
                    "effect_sd": share * (hi_b - lo_b),
                    "releases": a.size,
                }
            )
    return pd.DataFrame(rows)
