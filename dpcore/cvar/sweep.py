"""The scalar study of the CVaR page: the Laplace plug-in's error on demo losses, split into
its statistical and privacy parts, over a grid of (n, tau, epsilon).

Every random draw comes from a stream keyed by the values that define its cell
(:func:`dpcore.montecarlo.stream`), so a cell's numbers do not depend on the grid around it,
and repetitions are vectorised along a leading axis. The page's other studies are
:mod:`dpcore.cvar.learning_study` (a finite class and convex learning) and
:mod:`dpcore.cvar.tail_risk` (a private treatment rule's tail risk).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from .._validation import check_epsilon
from ..montecarlo import Stream, local_executor, stream, summarize
from .constructions import KINDS, demo_losses, demo_population_cvar
from .estimation import (
    check_bound,
    check_tau,
    check_whole,
    empirical_cvar,
    laplace_privacy_error,
    laplace_release,
    private_cvar,
)
from .rates import effective_sizes, scalar_cvar_rate

__all__ = ["cvar_sweep", "method_comparison", "sweep_summary"]

SCALAR_METRICS = ("statistical", "privacy", "privacy_exact", "total")
SCALAR_CELL = ("kind", "n", "tau", "epsilon")


def _kind_key(kind):
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return KINDS.index(kind) + 1


@functools.lru_cache(maxsize=256)
def _truth(kind, tau, bound):
    """Population CVaR of a demo law; cached, since the quadrature takes ~0.1 s."""
    return demo_population_cvar(kind, tau, bound, p=tau / 2)


def cvar_sweep(kind, n_grid, tau_grid, eps_grid, bound=1.0, reps=200, seed=0, executor=None):
    """Error of the Laplace plug-in private CVaR on demo losses, over a grid of (n, tau, epsilon).

    Parameters
    ----------
    kind : {"uniform", "beta", "two-point", "heavy-tailed"}
        Loss law (:func:`dpcore.cvar.constructions.demo_losses`); "two-point" is the hard instance
        B Bernoulli(tau/2) of docs/spec/cvar.md §5.2, whose law depends on tau.
    n_grid, tau_grid, eps_grid : sequences
        Sample sizes, tail levels in (0, 1] and budgets (``np.inf``: non-private).
    bound : float
        Public loss bound B.
    reps : int
        Independent data sets per n (shared by every tau and epsilon at that n, so curves
        compare like with like), each with its own noise per (tau, epsilon).
    seed : int
    executor : concurrent.futures.Executor, optional
        Runs one task per n; by default a thread pool sized to the machine. The streams are
        keyed by each cell's values, so the result is bit-identical whatever runs it.

    Returns
    -------
    DataFrame with one row per (n, tau, epsilon, rep): truth (population CVaR), rho_hat
    (empirical CVaR), released, and the errors statistical = |rho_hat - truth|, privacy =
    |released - rho_hat|, privacy_exact = E|released - rho_hat| given rho_hat (docs/spec/cvar.md §2.1,
    :func:`dpcore.cvar.laplace_privacy_error`) and total = |released - truth|.
    """
    _kind_key(kind)  # validates the law's name
    bound = check_bound(bound)
    reps, seed = check_whole(reps, "reps", low=2), int(seed)
    taus = [check_tau(t) for t in np.atleast_1d(tau_grid)]
    eps = np.array([check_epsilon(e) for e in np.atleast_1d(eps_grid)], dtype=float)
    ns = list(dict.fromkeys(check_whole(v, "n") for v in np.atleast_1d(n_grid)))
    with local_executor(executor) as (pool, _):
        futures = [pool.submit(_sweep_n, kind, n, taus, eps, bound, reps, seed) for n in ns]
        frames = [frame for fut in futures for frame in fut.result()]
    return pd.concat(frames, ignore_index=True)


def _sweep_n(kind, n, taus, eps, bound, reps, seed):
    """cvar_sweep's rows at one n, one DataFrame per tau."""
    kind_key, frames, x = _kind_key(kind), [], None
    for tau in taus:
        if x is None or kind == "two-point":  # a fresh stream: same uniforms, new law
            x = demo_losses(
                kind, (reps, n), bound, p=tau / 2, rng=stream(seed, Stream.CVAR_DATA, kind_key, n)
            )
        truth = _truth(kind, tau, bound)
        rho = empirical_cvar(x, tau)
        released = np.stack(
            [
                laplace_release(
                    rho, n, tau, e, bound, rng=stream(seed, Stream.CVAR_NOISE, kind_key, n, tau, e)
                )
                for e in eps
            ]
        )
        exact = np.stack([laplace_privacy_error(rho, n, tau, e, bound) for e in eps])
        frames.append(
            pd.DataFrame(
                {
                    "kind": kind,
                    "n": n,
                    "tau": tau,
                    "epsilon": np.repeat(eps, reps),
                    "rep": np.tile(np.arange(reps), eps.size),
                    "truth": truth,
                    "rho_hat": np.tile(rho, eps.size),
                    "released": released.ravel(),
                    "statistical": np.tile(np.abs(rho - truth), eps.size),
                    "privacy": np.abs(released - rho).ravel(),
                    "privacy_exact": exact.ravel(),
                    "total": np.abs(released - truth).ravel(),
                }
            )
        )
    return frames


def sweep_summary(runs: pd.DataFrame, bound: float = 1.0) -> pd.DataFrame:
    """Per-cell mean, SE and 95% CI of each error (:func:`dpcore.montecarlo.summarize`),
    with the effective sizes n tau and epsilon n tau and the rates of Theorem 3.4 beside them:
    rate = B min{1, 1/sqrt(n tau) + 1/(epsilon n tau)} and its two parts."""
    out = summarize(runs, SCALAR_CELL, SCALAR_METRICS)
    m, em = effective_sizes(
        out["n"].to_numpy(float), out["tau"].to_numpy(), out["epsilon"].to_numpy()
    )
    with np.errstate(divide="ignore"):
        out["n_tau"], out["eps_n_tau"] = m, em
        out["rate"] = scalar_cvar_rate(
            out["n"].to_numpy(float), out["tau"].to_numpy(), out["epsilon"].to_numpy(), bound
        )
        out["rate_statistical"] = bound * np.minimum(1.0, 1.0 / np.sqrt(m))
        out["rate_privacy"] = bound * np.minimum(1.0, 1.0 / em)
    return out


def method_comparison(
    kind: str,
    n: int,
    tau: float,
    epsilon: float,
    bound: float = 1.0,
    reps: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """Mean |released - truth| of the Laplace plug-in and of the instance-adaptive variant
    (docs/spec/cvar.md §2.2) on the same data sets as :func:`cvar_sweep`'s cell (n, tau).

    Returns a DataFrame with columns method, total_mean, total_se.
    """
    kind_key, n, tau = _kind_key(kind), check_whole(n, "n"), check_tau(tau)
    epsilon, bound, reps = (
        check_epsilon(epsilon),
        check_bound(bound),
        check_whole(reps, "reps", low=2),
    )
    x = demo_losses(
        kind, (reps, n), bound, p=tau / 2, rng=stream(seed, Stream.CVAR_DATA, kind_key, n)
    )
    truth = _truth(kind, tau, bound)
    rows = []
    for k, method in enumerate(("laplace", "instance-adaptive")):
        rng = stream(seed, Stream.CVAR_NOISE, kind_key, n, tau, epsilon, k + 1)
        err = np.abs(private_cvar(x, tau, epsilon, bound, rng, method=method) - truth)
        rows.append(
            {
                "method": method,
                "total_mean": err.mean(),
                "total_se": err.std(ddof=1) / math.sqrt(reps),
            }
        )
    return pd.DataFrame(rows)
