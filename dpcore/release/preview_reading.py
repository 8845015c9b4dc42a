"""What a preview says: the smallest ε for an agreement, the heterogeneity a release needs,
and the learner to choose.

Each reads the table of :func:`dpcore.release.preview.preview` (or runs one), so it depends on
public values only and spends no ε.
"""

from __future__ import annotations

import numpy as np

from .preview import preview

__all__ = ["NEEDED_SHARES", "needed_heterogeneity", "recommend_learner", "smallest_epsilon"]


#: The effect sizes :func:`needed_heterogeneity` tries, as shares of the outcome's range.
NEEDED_SHARES = (0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4)


def needed_heterogeneity(
    design, epsilon, *, gamma, weight_bound, C=0.0, huber_h=0.5, twins=8, draws=25, seed=0
):
    """How much the treatment effect must vary between patients for a private DP-OWL release
    at ``epsilon`` to beat giving everyone the better arm, on the twin.

    The twin's effect has mean 0 (neither arm better on average) and standard deviation
    ``share`` x the outcome's range over :data:`NEEDED_SHARES`; the answer is the smallest one
    at which the releases' mean gain over the better fixed arm clears twice its Monte-Carlo
    standard error (twins as clusters). Public inputs only: it spends no ε.

    Returns
    -------
    float or None
        The standard deviation in the outcome's units, or None when no share on the grid is
        enough (a larger ε or more patients are needed).
    """
    shares = {f"{s:g}": s for s in NEEDED_SHARES}
    result = preview(
        design,
        [epsilon],
        gamma=[gamma],
        weight_bound=weight_bound,
        C=C,
        huber_h=huber_h,
        strengths=shares,
        twins=twins,
        draws=draws,
        seed=seed,
        plugin=False,
    )
    for name, share in shares.items():
        row = result[result["strength"] == name].iloc[0]
        if row["gain_mean"] - 2.0 * row["gain_se"] > 0:
            lo, hi = design.outcome_bounds
            return float(share * (hi - lo))
    return None


def recommend_learner(result, strength, epsilon):
    """Which learner gave more of the twin's patients the better arm at ``epsilon``.

    Parameters
    ----------
    result : DataFrame from :func:`preview`
    strength : str
        A strength of ``result``.
    epsilon : float
        A previewed ε.

    Returns
    -------
    dict with ``learner`` ("plug-in", "dp-owl", or None when the 95% Monte-Carlo interval of
    the difference contains 0 or is unknown), ``difference`` (plug-in minus DP-OWL, points),
    ``ci`` ((lo, hi) of that difference), ``plugin`` and ``dp_owl`` (each learner's mean
    percent of patients given the better arm) and ``releases``.
    """
    part = result[(result["strength"] == strength) & np.isclose(result["epsilon"], epsilon)]
    if part.empty:
        raise ValueError(f"no previewed row for strength {strength!r} at epsilon {epsilon:g}")
    row = part.iloc[0]
    lo, hi = float(row["difference_ci_lo"]), float(row["difference_ci_hi"])
    learner = None
    if lo > 0:
        learner = "plug-in"
    elif hi < 0:
        learner = "dp-owl"
    return {
        "learner": learner,
        "difference": float(row["difference_mean"]),
        "ci": (lo, hi),
        "plugin": float(row["plugin_best_mean"]),
        "dp_owl": float(row["best_mean"]),
        "releases": int(row["releases"]),
    }


def smallest_epsilon(result, target, strength):
    """The smallest ε at which the mean agreement reaches ``target`` percent (log-linear
    interpolation between grid points), or None when no previewed ε reaches it."""
    part = result[result["strength"] == strength].sort_values("epsilon")
    e, a = part["epsilon"].to_numpy(), part["agreement_mean"].to_numpy()
    hit = np.flatnonzero(a >= target)
    if hit.size == 0:
        return None
    k = int(hit[0])
    if k == 0:
        return float(e[0])
    x0, x1, y0, y1 = np.log(e[k - 1]), np.log(e[k]), a[k - 1], a[k]
    return float(np.exp(x0 + (target - y0) / (y1 - y0) * (x1 - x0)))
