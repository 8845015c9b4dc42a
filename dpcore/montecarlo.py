"""Monte-Carlo machinery shared by every sweep: named random streams, summaries, evaluators.

Nothing here knows which study it serves: metrics are passed in by name, and the streams are
keyed by the values that define a cell, so a cell's numbers never depend on the grid around it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from enum import IntEnum
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import stdtrit

from ._extras import install_hint
from ._typing import ArrayLike
from .owl.owl import arm_propensity, ipw_value
from .owl.paper import paper_outcome_shift
from .owl.simulate import optimal_treatment


class Stream(IntEnum):
    """Tags that separate the random streams of one seed (the second entry of every key)."""

    TEST = 0  # test sets, one per repetition
    TRAIN = 1  # training sets, keyed by n
    NOISE = 2  # output-perturbation noise, keyed by (n, h, gamma rule, epsilon)
    NOISE_TWIN = 3  # a second release's noise on the same trial (how stable one release is)
    EXAMPLE = 7  # the single example trial shown next to the curves
    PROXY = 11  # public proxy data sets for tuning
    TUNE_SAMPLE = 12  # Algorithm 2's draws of n rows from the proxy's training pool
    TUNE_NOISE = 13  # Algorithm 2's output-perturbation noise
    CVAR_DATA = 20  # CVaR sweeps' losses, keyed by (loss law, n)
    CVAR_NOISE = 21  # CVaR releases' noise, keyed by (loss law, n, tau, epsilon)
    CVAR_CLASS = 22  # the finite-class demo's data set and its public population sample
    CVAR_GD = 23  # the convex study's data and DP-GD noise, keyed by (d, ratio)
    CVAR_RULE = 24  # the treatment-rule bridge: trial, rule noise, test patients, release


def stream(seed: int, tag: int, *keys: float) -> np.random.Generator:
    """A Generator for ``(seed, tag, *keys)``; float keys go through :func:`key`."""
    return np.random.default_rng([int(seed), int(tag), *(key(k) for k in keys)])


def key(value: float) -> int:
    """A non-negative integer naming a parameter in a random stream's key (floats to 1e-6)."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    return 2**62 if np.isinf(value) else int(round(float(value) * 1e6))


#: Set in a worker process of a pool (``dpcore warm``'s): the threads its sweeps may use, so
#: that the pool's processes together use the machine's cores once, not once each.
WORKERS_ENV = "DPCORE_WORKERS"


def workers():
    """The cores this process may use (its CPU affinity where the system reports one), or
    ``DPCORE_WORKERS`` when set."""
    given = os.environ.get(WORKERS_ENV, "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


@contextmanager
def local_executor(executor=None):
    """``(executor, in_this_process)``: the one given, or a thread pool sized to the machine
    (numpy releases the GIL in its array kernels, so threads use every core), shut down after.

    ``in_this_process`` says whether tasks may share this process's arrays by reference.
    """
    if executor is not None:
        yield executor, isinstance(executor, ThreadPoolExecutor)
        return
    with ThreadPoolExecutor(max_workers=workers()) as pool:
        yield pool, True


def cluster_client(address):
    """A dask.distributed ``Client`` of the scheduler at ``address`` (for example
    ``"tcp://10.0.0.5:8786"``); needs the optional extra ``dpcore[dask]``. Use it as a context
    manager, and pass ``client.get_executor()`` as a sweep's executor.

    The workers must have this same version of dpcore installed: tasks carry parameters,
    and each worker computes its cells with its own copy of the engine.
    """
    try:
        from distributed import Client
    except ImportError as err:
        raise ImportError(
            "a scheduler address needs dask.distributed: " + install_hint("dask")
        ) from err
    return Client(address, timeout="10s")


def cluster_executor(address):
    """A long-lived ``concurrent.futures.Executor`` over the scheduler at ``address`` (its
    client stays open for the life of the process, as a web server's should)."""
    return cluster_client(address).get_executor()


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


#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959964


def wilson_interval(k: ArrayLike, m: ArrayLike, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """The 95% Wilson score interval (lower, upper) of a proportion k/m (arrays broadcast)."""
    k, m = np.asarray(k, float), np.asarray(m, float)
    p = k / m
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / (1 + z * z / m)
    return centre - half, centre + half


def reps_to_show(share: float, z: float = Z95) -> int:
    """The fewest repetitions m at which the Wilson interval of :func:`wilson_interval` can show
    that at least ``share`` (a fraction q, 0 < q < 1) of single releases meet a target.

    The claim is shown when the interval's lower end L(k, m) is at or above q, k of the m
    simulated releases meeting the target. L grows with k, so the most m repetitions can show
    is L(m, m), every release meeting it. There p = 1, the half-width is
    (z²/2m) / (1 + z²/m), the centre (1 + z²/2m) / (1 + z²/m), and

        L(m, m) = 1 / (1 + z²/m) = m / (m + z²),

    which grows with m. So L(m, m) >= q if and only if m >= q z² / (1 - q), and the answer is
    the ceiling of q z² / (1 - q) (checked against L itself, so rounding cannot move it by
    one). Below it, no outcome of the simulation can show the claim, however good the rule;
    at it, only a perfect record does: more repetitions leave room for releases that miss.

    >>> reps_to_show(0.9), reps_to_show(0.95)  # 9 of 10, 19 of 20
    (35, 73)
    >>> reps_to_show(0.5), reps_to_show(0.8)
    (4, 16)
    >>> float(wilson_interval(35, 35)[0]) >= 0.9 > float(wilson_interval(34, 34)[0])
    True
    """
    q = float(share)
    if not 0.0 < q < 1.0:
        raise ValueError(f"share must be strictly between 0 and 1, got {share!r}")
    m = max(1, int(np.ceil(q * z * z / (1.0 - q))))
    while m > 1 and wilson_interval(m - 1, m - 1, z)[0] >= q:
        m -= 1
    while wilson_interval(m, m, z)[0] < q:
        m += 1
    return m


def summarize(runs: pd.DataFrame, by: Sequence[str], metrics: Sequence[str]) -> pd.DataFrame:
    """Mean, standard deviation, Monte-Carlo standard error and 95% CI per cell.

    ``by`` names the columns that define a cell (absent ones are skipped) and ``metrics`` the
    columns to summarise; each metric m gets m_mean, m_sd, m_se, m_lo and m_hi, plus ``reps``.

    The CI is mean +/- t_{0.975, R-1} * sd / sqrt(R) over the R repetitions of a cell.
    """
    by = [c for c in by if c in runs.columns]
    g = runs.groupby(by, sort=True, dropna=False)
    parts = {}
    for m in metrics:
        if m not in runs.columns:
            continue
        mean, sd, count = g[m].mean(), g[m].std(ddof=1), g[m].count()
        se: pd.Series = sd / np.sqrt(count)
        half = stdtrit(np.maximum(count - 1, 1), 0.975) * se
        parts.update(
            {
                f"{m}_mean": mean,
                f"{m}_sd": sd,
                f"{m}_se": se,
                f"{m}_lo": mean - half,
                f"{m}_hi": mean + half,
            }
        )
    parts["reps"] = g.size()
    return pd.DataFrame(parts).reset_index()
