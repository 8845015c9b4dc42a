"""Vectorized Monte-Carlo sweeps of DP-OWL on synthetic trials, returning tidy DataFrames.

Work is shared wherever the privacy analysis allows: one non-private solve per
(dataset, gamma, h) serves every epsilon that uses that gamma, the output-perturbation noise
for all epsilons and repetitions is drawn in one call, and the test sets (one per repetition)
are shared by every n, epsilon and gamma, so curves compare like with like.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import stdtrit

from ._validation import check_epsilon, check_real
from .mechanisms import l2_gamma_noise
from .owl import arm_propensity, benefit, ipw_value
from .simulate import PAPER_TRIAL, PAPER_W, optimal_treatment, paper_gamma, paper_outcome_shift
from .werm import FeatureScaling, sensitivity, solve_werm

METRICS = ("accuracy", "value", "value_paper", "concordance", "kappa")


@dataclass
class MonteCarloResult:
    """Per-repetition rows (``runs``), their ``summary``, and per-repetition ``references``."""

    runs: pd.DataFrame
    references: pd.DataFrame

    @property
    def summary(self):
        return summarize(self.runs)


def gamma_rule(gamma):
    """A function (epsilon, n) -> gamma from a number or the string "paper"."""
    if isinstance(gamma, str):
        if gamma != "paper":
            raise ValueError(f"gamma must be a positive number or 'paper', got {gamma!r}")
        return paper_gamma
    g = check_real(gamma, "gamma", low=0.0)
    return lambda epsilon, n: g


def owl_weights(B, A, propensity, weight_bound, outcome="paper"):
    """Training weights for a batch of trials, and the share clipped at the weight bound.

    ``outcome="paper"`` shifts B by each dataset's own minimum (the authors' code; not covered
    by the guarantee); a pair (lo, hi) clips to public bounds and shifts by lo.
    """
    if isinstance(outcome, str):
        if outcome != "paper":
            raise ValueError(f"outcome must be 'paper' or public bounds (lo, hi), got {outcome!r}")
        gain = B + paper_outcome_shift(B)[..., None]
    else:
        gain = benefit(B, outcome)
    w = gain / arm_propensity(A, propensity)
    return np.minimum(w, weight_bound), np.mean(w > weight_bound, axis=-1)


def owl_monte_carlo(n_grid, eps_grid, gamma="paper", h=0.5, weight_bound=PAPER_W, reps=200,
                    test_size=5000, seed=0, design=PAPER_TRIAL, outcome="paper",
                    progress=None):
    """Monte-Carlo study of DP-OWL on synthetic trials.

    Parameters
    ----------
    n_grid : sequence of int
        Training sizes.
    eps_grid : sequence of float
        Privacy budgets; ``np.inf`` is the non-private fit.
    gamma : float, sequence of float, or "paper"
        Regularization constant(s); "paper" uses the authors' tuned table per (epsilon, n).
    h : float or sequence of float
        Huber smoothing width(s).
    weight_bound : float
        Public weight bound W.
    reps : int
        Repetitions: independent training sets, noise draws and test sets.
    test_size : int
        Rows of each repetition's fresh test set.
    seed : int
    design : TrialDesign
    outcome : "paper" or (lo, hi)
        How outcomes become benefits for training, see :func:`owl_weights`.
    progress : callable(fraction, message), optional

    Returns
    -------
    MonteCarloResult
        ``runs`` has one row per (h, gamma setting, n, epsilon, repetition) with columns
        n, epsilon, gamma, h, rep, accuracy (percent), value (raw outcome scale),
        value_paper (test set shifted by its own minimum, the authors' scale), concordance
        (percent agreement with the non-private rule at the same n, gamma rule and h),
        kappa, noise_norm (scaled space), clipped_share.
    """
    eps_grid = np.array([check_epsilon(e) for e in np.atleast_1d(eps_grid)], dtype=float)
    n_grid = list(dict.fromkeys(int(check_real(n, "n", low=1.0)) for n in np.atleast_1d(n_grid)))
    gammas = [gamma] if isinstance(gamma, str) or np.ndim(gamma) == 0 else list(gamma)
    hs = [check_real(v, "h", low=0.0) for v in np.atleast_1d(h)]
    W = check_real(weight_bound, "weight_bound", low=0.0)
    reps = check_real(reps, "reps", low=2.0, low_open=False)
    if not float(reps).is_integer():
        raise ValueError(f"reps must be a whole number, got {reps}")
    reps = int(reps)
    seed = int(seed)
    scaling = FeatureScaling.from_bounds(design.feature_bounds, design.p)

    test = design.sample(test_size, size=reps, rng=np.random.default_rng([seed, 0]))
    evaluator = _TestSets(scaling.transform(test["X"]), test["A"], test["B"], test["f"],
                          design.propensity)

    def one_n(n):
        # Streams keyed by (seed, n, ...): a cell's data do not depend on the rest of the grid.
        train = design.sample(n, size=reps, rng=np.random.default_rng([seed, 1, n]))
        w, clipped = owl_weights(train["B"], train["A"], design.propensity, W, outcome)
        Xt = scaling.transform(train["X"])
        return [_cell(Xt, train["A"], w, clipped, n, hv, g_setting, eps_grid, W, evaluator, seed)
                for hv in hs for g_setting in gammas]

    rows = []
    # numpy releases the GIL in its array kernels, so two threads use both cores.
    with ThreadPoolExecutor(max_workers=2) as pool:
        # Largest n first, so the two workers finish together.
        futures = {n: pool.submit(one_n, n) for n in sorted(set(n_grid), reverse=True)}
        for k, fut in enumerate(futures[n] for n in n_grid):
            rows.extend(fut.result())
            if progress is not None:
                progress((k + 1) / len(futures), f"n = {n_grid[k]} done")
    return MonteCarloResult(pd.concat(rows, ignore_index=True), evaluator.references())


def _cell(Xt, A, w, clipped, n, h, g_setting, eps_grid, W, evaluator, seed):
    """All epsilons at one (n, h, gamma rule): shared solves and one evaluation.

    Each epsilon's noise comes from its own stream keyed by the cell's values (seed, n, h,
    gamma rule, epsilon), so a cell's numbers do not change when the grids around it do.
    """
    rule = gamma_rule(g_setting)
    g_eps = np.array([rule(e, n) for e in eps_grid])
    g_ref = rule(np.inf, n)
    theta_hat = _solve_distinct(Xt, A, w, np.append(g_eps, g_ref), h)
    reps, d = Xt.shape[0], Xt.shape[-1]
    g_key = 0 if isinstance(g_setting, str) else 1 + _key(g_setting)
    noise = np.stack([
        l2_gamma_noise(d, e, sensitivity(W, g), size=reps,
                       rng=np.random.default_rng([seed, 2, n, _key(h), g_key, _key(e)]))
        for e, g in zip(eps_grid, g_eps)
    ])
    theta = np.stack([theta_hat[g] for g in g_eps]) + noise  # (E, reps, d)
    metrics = evaluator.evaluate(theta, theta_hat[g_ref])
    return pd.DataFrame({
        "n": n,
        "epsilon": np.repeat(eps_grid, reps),
        "gamma": np.repeat(g_eps, reps),
        "gamma_rule": "paper" if isinstance(g_setting, str) else "fixed",
        "h": h,
        "rep": np.tile(np.arange(reps), eps_grid.size),
        **{k: v.ravel() for k, v in metrics.items()},
        "noise_norm": np.linalg.norm(noise, axis=-1).ravel(),
        "clipped_share": np.tile(clipped, eps_grid.size),
    })


def _key(value):
    """A non-negative integer naming a float parameter in a random stream's key."""
    return 2**62 if np.isinf(value) else int(round(float(value) * 1e6))


def _solve_distinct(Xt, A, w, gammas, h):
    """theta_hat for each distinct gamma, warm-starting each solve from the previous one."""
    out = {}
    theta = None
    for g in sorted(set(gammas.tolist())):
        theta, _ = solve_werm(Xt, A, w, g, "huber", h, theta0=theta)
        out[g] = theta
    return out


class _TestSets:
    """One fresh test set per repetition, and every metric of many rules on them at once.

    For +/-1 recommendations a, every metric is an inner product of a with a per-test-set
    vector: 1(a = b) = (1 + a b)/2 turns accuracy, concordance, the share treated and both
    sums of the Hajek value into a single batched matrix product.
    """

    def __init__(self, Xt, A, B, f, propensity):
        self.XT = np.ascontiguousarray(np.swapaxes(Xt, -1, -2))  # (reps, d, T)
        self.A, self.B = A, B
        self.A_opt = optimal_treatment(f)
        self.propensity = propensity
        self.T = A.shape[-1]
        inv = 1.0 / arm_propensity(A, propensity)
        self.inv_sum, self.num_sum = inv.sum(-1), (inv * B).sum(-1)
        self.shift = paper_outcome_shift(B)
        self.V = np.stack((self.A_opt, np.ones_like(A), A * inv * B, A * inv), axis=-1)

    def recommend(self, theta, XT):
        """+/-1 recommendations of rules theta (reps, E, d) on test sets XT (reps, d, T)."""
        scores = np.matmul(theta, XT)
        positive = scores > 0
        np.copyto(scores, positive)  # reuse the buffer: 2 * 1(score > 0) - 1
        scores *= 2.0
        scores -= 1.0
        return scores

    def _means(self, theta, theta_ref, chunk=25):
        """Means over each test set of a * [A_opt, 1, A B/pi, A/pi, a_ref], per (rep, rule).

        Repetitions go in chunks so the (chunk, E, T) arrays stay a few MB: reused by the
        allocator instead of freshly mapped (and page-faulted) for every cell.
        """
        E, reps = theta.shape[:2]
        S, treated_ref = np.empty((reps, E, 5)), np.empty(reps)
        for start in range(0, reps, chunk):
            part = slice(start, start + chunk)
            XT = self.XT[part]
            a_ref = self.recommend(theta_ref[part, None, :], XT)[:, 0, :]
            V = np.concatenate((self.V[part], a_ref[..., None]), axis=-1)
            a = self.recommend(np.swapaxes(theta[:, part], 0, 1), XT)
            S[part] = np.matmul(a, V) / self.T
            treated_ref[part] = np.mean(a_ref > 0, axis=-1)
        return S, treated_ref[:, None]

    def evaluate(self, theta, theta_ref):
        """Metrics of rules theta (E, reps, d) against the reference rules theta_ref (reps, d).

        Returns arrays of shape (E, reps): accuracy and concordance in percent, the value on
        the raw scale and on the authors' test-shifted scale, and Cohen's kappa.
        """
        S, treated_ref = self._means(theta, theta_ref)
        accuracy = 50.0 * (1.0 + S[..., 0])
        treated = 0.5 * (1.0 + S[..., 1])
        num = 0.5 * (self.num_sum[:, None] + self.T * S[..., 2])
        den = 0.5 * (self.inv_sum[:, None] + self.T * S[..., 3])
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.where(den > 0, num / den, np.nan)
        po = 0.5 * (1.0 + S[..., 4])
        pe = treated * treated_ref + (1 - treated) * (1 - treated_ref)
        with np.errstate(invalid="ignore", divide="ignore"):
            kappa = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
        out = {"accuracy": accuracy, "value": value, "value_paper": value + self.shift[:, None],
               "concordance": 100.0 * po, "kappa": kappa}
        return {k: v.T for k, v in out.items()}

    def references(self):
        """Per-repetition values of the oracle, treat-all and treat-none rules."""
        out = {"rep": np.arange(self.A.shape[0])}
        for name, rule in (("oracle", self.A_opt), ("treat_all", np.ones_like(self.A)),
                           ("treat_none", -np.ones_like(self.A))):
            v = ipw_value(rule, self.A, self.B, self.propensity)
            out[name], out[name + "_paper"] = v, v + self.shift
        return pd.DataFrame(out)


def summarize(runs, by=("n", "epsilon", "gamma_rule", "gamma", "h"), metrics=METRICS):
    """Mean, standard deviation, Monte-Carlo standard error and 95% CI per cell.

    The CI is mean +/- t_{0.975, R-1} * sd / sqrt(R) over the R repetitions of a cell.
    """
    by = [c for c in by if c in runs.columns]
    g = runs.groupby(by, sort=True, dropna=False)
    parts = {}
    for m in metrics:
        if m not in runs.columns:
            continue
        mean, sd, count = g[m].mean(), g[m].std(ddof=1), g[m].count()
        se = sd / np.sqrt(count)
        half = stdtrit(np.maximum(count - 1, 1), 0.975) * se
        parts.update({f"{m}_mean": mean, f"{m}_sd": sd, f"{m}_se": se,
                      f"{m}_lo": mean - half, f"{m}_hi": mean + half})
    parts["reps"] = g.size()
    return pd.DataFrame(parts).reset_index()
