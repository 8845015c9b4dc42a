"""Monte-Carlo machinery shared by every sweep: named random streams, executors, summaries.

Nothing here knows which study it serves: metrics are passed in by name, and the streams are
keyed by the values that define a cell, so a cell's numbers never depend on the grid around it.
It imports no learner, so every learner and study can import it (the rules' evaluator on
fresh test sets is the DP-OWL sweep's: :class:`dpcore.owl.experiments.RuleEvaluator`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from enum import IntEnum

import numpy as np
import pandas as pd
from scipy.special import stdtrit

from ._extras import install_hint
from ._typing import ArrayLike


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
