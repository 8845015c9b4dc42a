"""Vectorized Monte-Carlo sweeps of DP-OWL on synthetic trials, returning tidy DataFrames.

Work is shared wherever the privacy analysis allows: one non-private solve per
(dataset, gamma, h) serves every epsilon that uses that gamma, the output-perturbation noise
for all epsilons and repetitions is drawn in one call, and the test sets (one per repetition)
are shared by every n, epsilon and gamma, so curves compare like with like.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._typing import ArrayLike
from .._validation import check_epsilon, check_real
from ..montecarlo import Stream, key, local_executor, stream, summarize
from ..privacy.mechanisms import output_perturbation
from .owl import arm_propensity, ipw_value, owl_weights
from .paper import PAPER_W, paper_outcome_shift, resolve_gamma
from .preprocessing import FeatureScaling
from .simulate import PAPER_TRIAL, optimal_treatment
from .werm import solve_werm
from .werm_release import sensitivity

SAME_GAMMA = ("accuracy", "value", "value_paper", "concordance")
METRICS = (
    "accuracy",
    "value",
    "value_paper",
    "concordance",
    "kappa",
    "disagreement",
    *(f"{m}_same_gamma" for m in SAME_GAMMA),
)
CELL = ("n", "epsilon", "gamma_rule", "gamma", "h")


class RuleEvaluator:
    """One fresh test set per repetition, and every metric of many rules on them at once.

    For +/-1 recommendations a, every metric is an inner product of a with a per-test-set
    vector: 1(a = b) = (1 + a b)/2 turns accuracy, concordance, the share treated and both
    sums of the Hajek value into a single batched matrix product.
    """

    def __init__(
        self, Xt: np.ndarray, A: np.ndarray, B: np.ndarray, f: np.ndarray, propensity: ArrayLike
    ) -> None:
        self.XT = np.ascontiguousarray(np.swapaxes(Xt, -1, -2))  # (reps, d, T)
        self.A, self.B = A, B
        self.A_opt = optimal_treatment(f)
        self.propensity = propensity
        self.T = A.shape[-1]
        inv = 1.0 / arm_propensity(A, propensity)
        self.inv_sum, self.num_sum = inv.sum(-1), (inv * B).sum(-1)
        self.shift = paper_outcome_shift(B)
        self.V = np.stack((self.A_opt, np.ones_like(A), A * inv * B, A * inv), axis=-1)

    def recommend(self, theta: np.ndarray, XT: np.ndarray) -> np.ndarray:
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

    def evaluate(self, theta: np.ndarray, theta_ref: np.ndarray) -> dict[str, np.ndarray]:
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
        out = {
            "accuracy": accuracy,
            "value": value,
            "value_paper": value + self.shift[:, None],
            "concordance": 100.0 * po,
            "kappa": kappa,
        }
        return {k: v.T for k, v in out.items()}

    def disagreement(self, theta: np.ndarray, other: np.ndarray, chunk=25) -> np.ndarray:
        """% of each repetition's test patients on whom rules theta and other (both (E, reps, d))
        recommend different treatments; shape (E, reps)."""
        E, reps = theta.shape[:2]
        out = np.empty((reps, E))
        for start in range(0, reps, chunk):  # chunks, as in _means
            part = slice(start, start + chunk)
            a = self.recommend(np.swapaxes(theta[:, part], 0, 1), self.XT[part])
            a *= self.recommend(np.swapaxes(other[:, part], 0, 1), self.XT[part])
            out[part] = 50.0 * (1.0 - a.mean(axis=-1))  # 1(a != b) = (1 - a b)/2
        return out.T

    def references(self) -> pd.DataFrame:
        """Per-repetition values of the oracle, treat-all and treat-none rules."""
        out: dict[str, Any] = {"rep": np.arange(self.A.shape[0])}
        for name, rule in (
            ("oracle", self.A_opt),
            ("treat_all", np.ones_like(self.A)),
            ("treat_none", -np.ones_like(self.A)),
        ):
            v = ipw_value(rule, self.A, self.B, self.propensity)
            out[name], out[name + "_paper"] = v, v + self.shift
        return pd.DataFrame(out)


@dataclass
class MonteCarloResult:
    """Per-repetition rows (``runs``), their ``summary``, and per-repetition ``references``."""

    runs: pd.DataFrame
    references: pd.DataFrame

    @property
    def summary(self) -> pd.DataFrame:
        return summarize(self.runs, CELL, METRICS)


def owl_monte_carlo(
    n_grid,
    eps_grid,
    gamma="paper",
    h=0.5,
    weight_bound=PAPER_W,
    reps=200,
    test_size=5000,
    seed=0,
    design=PAPER_TRIAL,
    outcome="paper",
    progress=None,
    executor=None,
):
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
        How outcomes become benefits for training, see :func:`dpcore.owl.owl_weights`.
    progress : callable(fraction, message), optional
    executor : concurrent.futures.Executor, optional
        Runs one task per n (for example a dask ``Client.get_executor()``); by default a
        thread pool sized to the machine. Every cell draws from its own keyed streams, so the
        result is bit-identical whatever runs it. An executor outside this process gets the
        parameters only and rebuilds the shared test sets from the seed.

    Returns
    -------
    MonteCarloResult
        ``runs`` has one row per (h, gamma setting, n, epsilon, repetition) with columns
        n, epsilon, gamma, h, rep, accuracy (percent), value (raw outcome scale),
        value_paper (test set shifted by its own minimum, the authors' scale), concordance
        (percent agreement with the non-private rule at the same n, gamma rule and h),
        kappa, disagreement (percent of test patients on whom a second release of the same
        trial, with its own noise, recommends the other treatment: 0 without privacy),
        noise_norm (scaled space), clipped_share, and accuracy_same_gamma,
        value_same_gamma, value_paper_same_gamma, concordance_same_gamma: the same metrics
        of the exact (noiseless) minimiser at the gamma that epsilon uses. The gap to the
        non-private rule splits exactly into noise (metric - metric_same_gamma) and
        regularization (metric_same_gamma - non-private metric).
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

    spec = _Spec(tuple(gammas), tuple(hs), eps_grid, W, reps, test_size, seed, design, outcome)
    evaluator = _evaluator(spec)
    rows = []
    with local_executor(executor) as (pool, local):
        # Largest n first, so the workers finish together; the test sets travel only to
        # threads of this process (elsewhere they are rebuilt from the seed, which is cheaper
        # than shipping them).
        futures = {
            n: pool.submit(_one_n, spec, n, evaluator if local else None)
            for n in sorted(set(n_grid), reverse=True)
        }
        for k, fut in enumerate(futures[n] for n in n_grid):
            rows.extend(fut.result())
            if progress is not None:
                progress((k + 1) / len(futures), f"n = {n_grid[k]} done")
    return MonteCarloResult(pd.concat(rows, ignore_index=True), evaluator.references())


@dataclass(frozen=True)
class _Spec:
    """Everything a task needs besides n: small, so it travels cheaply to any worker."""

    gammas: tuple
    hs: tuple
    eps_grid: np.ndarray
    W: float
    reps: int
    test_size: int
    seed: int
    design: object
    outcome: object


def _evaluator(spec):
    scaling = FeatureScaling.from_bounds(spec.design.feature_bounds, spec.design.p)
    test = spec.design.sample(spec.test_size, size=spec.reps, rng=stream(spec.seed, Stream.TEST))
    return RuleEvaluator(
        scaling.transform(test["X"]), test["A"], test["B"], test["f"], spec.design.propensity
    )


def _one_n(spec, n, evaluator=None):
    """Every (h, gamma rule) cell at one n, as DataFrames."""
    evaluator = _evaluator(spec) if evaluator is None else evaluator
    design = spec.design
    scaling = FeatureScaling.from_bounds(design.feature_bounds, design.p)
    # Streams keyed by (seed, n, ...): a cell's data do not depend on the rest of the grid.
    train = design.sample(n, size=spec.reps, rng=stream(spec.seed, Stream.TRAIN, n))
    w, clipped = owl_weights(train["B"], train["A"], design.propensity, spec.W, spec.outcome)
    Xt = scaling.transform(train["X"])
    return [
        _cell(Xt, train["A"], w, clipped, n, hv, g, spec.eps_grid, spec.W, evaluator, spec.seed)
        for hv in spec.hs
        for g in spec.gammas
    ]


def _cell(Xt, A, w, clipped, n, h, g_setting, eps_grid, W, evaluator, seed):
    """All epsilons at one (n, h, gamma rule): shared solves and one evaluation.

    Each epsilon's noise comes from its own stream keyed by the cell's values (seed, n, h,
    gamma rule, epsilon), so a cell's numbers do not change when the grids around it do.
    """
    g_eps = np.array([resolve_gamma(g_setting, e, n) for e in eps_grid])
    g_ref = resolve_gamma(g_setting, np.inf, n)
    theta_hat = _solve_distinct(Xt, A, w, np.append(g_eps, g_ref), h)
    g_key = 0 if isinstance(g_setting, str) else 1 + key(g_setting)

    def release(tag):  # (E, reps, d): every epsilon's release of every repetition's minimiser
        return np.stack(
            [
                output_perturbation(
                    theta_hat[g], e, sensitivity(W, g), rng=stream(seed, tag, n, h, g_key, e)
                )
                for e, g in zip(eps_grid, g_eps)
            ]
        )

    theta = release(Stream.NOISE)
    exact = np.stack([theta_hat[g] for g in g_eps])
    noise = theta - exact
    reps = Xt.shape[0]
    metrics = evaluator.evaluate(theta, theta_hat[g_ref])
    # A second release of the same trial (its own stream, so the first is unchanged): how often
    # two publications at the same epsilon disagree on a patient.
    metrics["disagreement"] = evaluator.disagreement(theta, release(Stream.NOISE_TWIN))
    # The same rules without their noise: how far the larger gamma alone moves each metric.
    distinct = sorted(set(g_eps.tolist()))
    same = evaluator.evaluate(np.stack([theta_hat[g] for g in distinct]), theta_hat[g_ref])
    row = [distinct.index(g) for g in g_eps]
    metrics.update({f"{k}_same_gamma": same[k][row] for k in SAME_GAMMA})
    return pd.DataFrame(
        {
            "n": n,
            "epsilon": np.repeat(eps_grid, reps),
            "gamma": np.repeat(g_eps, reps),
            "gamma_rule": pd.Categorical.from_codes(
                np.zeros(eps_grid.size * reps, dtype=np.int8),
                pd.Index(["paper" if isinstance(g_setting, str) else "fixed"], dtype=object),
            ),  # cheap to filter, copy, hash
            "h": h,
            "rep": np.tile(np.arange(reps), eps_grid.size),
            **{k: v.ravel() for k, v in metrics.items()},
            "noise_norm": np.linalg.norm(noise, axis=-1).ravel(),
            "clipped_share": np.tile(clipped, eps_grid.size),
        }
    )


def _solve_distinct(Xt, A, w, gammas, h):
    """theta_hat for each distinct gamma, warm-starting each solve from the previous one."""
    out = {}
    theta = None
    for g in sorted(set(gammas.tolist())):
        theta, _ = solve_werm(Xt, A, w, g, "huber", h, theta0=theta)
        out[g] = theta
    return out
