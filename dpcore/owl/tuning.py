"""Algorithm 2 of the DP-wERM paper: tune gamma for a target (n, epsilon) on public data D0.

No privacy is spent on the sensitive data: D0 is an independent (proxy) dataset, so its
outcomes may be shifted by their own minimum and its rows reused freely.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._validation import check_epsilon, check_real
from ..montecarlo import Stream, stream, summarize
from ..privacy.mechanisms import output_perturbation
from .owl import check_propensity, ipw_value, owl_weights
from .paper import PAPER_GAMMA_GRID, PAPER_W
from .preprocessing import FeatureScaling
from .simulate import optimal_treatment
from .werm import solve_werm
from .werm_release import sensitivity

if TYPE_CHECKING:
    from ..data.trial import Trial


@dataclass
class TuningResult:
    """The gamma curve (mean, sd, standard error and 95% CI per gamma) and the choice.

    ``best_gamma`` follows the one-standard-error rule: the largest gamma whose mean is within
    one Monte-Carlo standard error of the best mean (larger gamma: less noise, a simpler
    rule). ``top_gamma`` is the gamma with the best mean, and ``near_best`` the share of the
    grid within that one standard error: a large share means the curve is flat there.
    """

    curve: pd.DataFrame
    best_gamma: float
    metric: str
    top_gamma: float
    near_best: float


def one_se_choice(curve: pd.DataFrame, metric: str) -> tuple[float, float, float]:
    """(chosen gamma, top gamma, share within one SE of the top) for a summarised curve."""
    means, se = curve[f"{metric}_mean"].to_numpy(), curve[f"{metric}_se"].to_numpy()
    top = int(np.nanargmax(means))
    near = means >= means[top] - se[top]
    gammas = curve["gamma"].to_numpy()
    return float(gammas[near].max()), float(gammas[top]), float(near.mean())


def tune_gamma(
    proxy: Trial | Mapping[str, Any],
    n: int,
    epsilon: float,
    gammas: Sequence[float] = PAPER_GAMMA_GRID,
    reps: int = 20,
    metric: str = "value",
    weight_bound: float = PAPER_W,
    h: float = 0.5,
    propensity: float | ArrayLike | None = 0.5,
    feature_bounds: tuple[ArrayLike, ArrayLike] | None = None,
    outcome: str | tuple[float, float] = "paper",
    train_share: float = 0.8,
    C: float = 0.0,
    seed: int = 0,
    *,
    larger_is_better: bool = True,
) -> TuningResult:
    """Pick gamma for DP-OWL at a target (n, epsilon) on a public proxy dataset (Algorithm 2).

    Parameters
    ----------
    proxy : Trial or dict
        Public dataset D0: a :class:`dpcore.Trial` (from :func:`dpcore.read_trial`) or a dict
        with X (n0, p), A in {-1, +1}, B and, for ``metric="accuracy"``, the contrast f.
        Never the sensitive trial itself: this function reads its outcomes freely.
    n, epsilon : target training size and privacy budget.
    gammas : sequence of float
        Candidate gammas (the authors use 1, 21, ..., 601).
    reps : int
        Repeats r per gamma. The same r training draws serve every gamma, so the curve
        compares gammas on common data.
    metric : {"value", "accuracy"}
        Normalised IPW value on the validation pool, or optimal-treatment accuracy (needs f).
        With ``larger_is_better=False`` the value is that of -B (larger is still better).
    weight_bound, h : as for DP-OWL.
    propensity : float, array (n0,) or None
        The proxy's P(A = +1): a constant or one value per row. None takes a Trial's
        propensity column (an error if it has none).
    feature_bounds : (lower, upper), optional
        Default [0, 1] for every feature (the paper's trial).
    outcome : "paper" or (lo, hi)
        How outcomes become benefits, see :func:`dpcore.owl.owl_weights`.
    train_share : float
        The first ``train_share`` of D0 is the training pool, the rest the validation pool.
    C : float
        The paper's constant of the target release (C > 0 when its propensities are estimated
        on the sensitive data): the proxy fits get the same noise as the release will.
    seed : int
    larger_is_better : bool, default True
        The outcome's direction, as in :class:`dpcore.DPOWL`: False for outcomes such as
        length of stay.

    Returns
    -------
    TuningResult
    """
    if isinstance(proxy, Mapping):
        X, A, B = (np.asarray(proxy[k], dtype=float) for k in ("X", "A", "B"))
        contrast = proxy.get("f")
    else:
        X, A, B = (np.asarray(getattr(proxy, k), dtype=float) for k in ("X", "A", "B"))
        contrast = None
        if propensity is None:
            propensity = proxy.propensity
    if propensity is None:
        raise TypeError("propensity is required: the proxy's P(A = +1), a constant or one per row")
    if not isinstance(larger_is_better, (bool, np.bool_)):
        raise TypeError(f"larger_is_better must be True or False, got {larger_is_better!r}")
    if not larger_is_better and isinstance(outcome, str):
        B = -B  # the paper's shift of -B by its own minimum is max(B) - B
    n = int(check_real(n, "n", low=0.0))
    epsilon = check_epsilon(epsilon)
    grid = np.array([check_real(g, "gamma", low=0.0) for g in gammas])
    prop = np.asarray(check_propensity(propensity, X.shape[0]))
    C = check_real(C, "C", low=0.0, low_open=False)
    if metric not in ("value", "accuracy"):
        raise ValueError(f"metric must be 'value' or 'accuracy', got {metric!r}")
    if metric == "accuracy" and contrast is None:
        raise ValueError("metric='accuracy' needs the proxy's true contrast f")
    n0, p = X.shape
    cut = int(np.floor(train_share * n0))
    if cut < 2 or n0 - cut < 2:
        raise ValueError(f"the proxy dataset is too small to split (n0 = {n0})")
    rng = stream(seed, Stream.TUNE_SAMPLE)
    replace = cut < n  # the authors bootstrap when the pool is smaller than n
    idx = np.stack([rng.choice(cut, size=n, replace=replace) for _ in range(int(reps))])

    bounds = feature_bounds if feature_bounds is not None else (np.zeros(p), np.ones(p))
    scaling = FeatureScaling.from_bounds(bounds, p)
    Xt = scaling.transform(X[idx])
    per_row = prop.ndim == 1
    p_train = prop[idx] if per_row else float(prop)
    p_valid = prop[cut:] if per_row else float(prop)
    w, _ = owl_weights(B[idx], A[idx], p_train, weight_bound, outcome, larger_is_better)
    Xv = scaling.transform(X[cut:])
    Av = A[cut:]
    Bv = B[cut:] if isinstance(outcome, str) or larger_is_better else -B[cut:]
    truth = optimal_treatment(np.asarray(contrast)[cut:]) if metric == "accuracy" else None

    theta = None
    rows = []
    noise_rng = stream(seed, Stream.TUNE_NOISE)
    for g in np.sort(grid):
        theta, _ = solve_werm(Xt, A[idx], w, g, "huber", h, theta0=theta)
        released = output_perturbation(
            theta, epsilon, sensitivity(weight_bound, g, C), rng=noise_rng
        )
        A_hat = np.where(released @ Xv.T > 0, 1.0, -1.0)
        score = (
            100 * np.mean(A_hat == truth, axis=-1)
            if metric == "accuracy"
            else ipw_value(A_hat, Av, Bv, p_valid)
        )
        rows.append(pd.DataFrame({"gamma": g, "rep": np.arange(int(reps)), metric: score}))
    runs = pd.concat(rows, ignore_index=True)
    curve = summarize(runs, by=("gamma",), metrics=(metric,))
    best, top, near = one_se_choice(curve, metric)
    return TuningResult(curve, best, metric, top, near)
