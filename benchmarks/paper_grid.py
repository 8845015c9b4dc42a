"""Run the DP-wERM paper's simulation grid through the Monte-Carlo engine and time it.

n in {200, 500, 800, 1000}, epsilon in {0.1, 0.5, 1, 2, 5, inf}, the authors' tuned gamma,
W = 30, h = 0.5, the authors' data-min outcome shift, 200 repetitions, a fresh 5000-row test
set per repetition. Prints the seconds and the table (accuracy in percent, value on the test
set's shifted scale, as in the authors' code).

    python benchmarks/paper_grid.py [--out table.csv] [--reps 200] [--seed 0] [--scipy]
                                    [--cluster 2] [--scheduler tcp://host:8786]

``--cluster N`` also runs the grid on a local dask.distributed cluster of N one-thread worker
processes (``--scheduler``: on an existing cluster) and checks the two tables are identical.
``--scipy`` also times the same fits done with one scipy.optimize.minimize call per fit
(L-BFGS-B on the same objective), the baseline the batched Newton solver replaces.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpcore.owl.experiments import owl_monte_carlo
from dpcore.owl.owl import owl_weights
from dpcore.owl.paper import PAPER_W, paper_gamma
from dpcore.owl.preprocessing import FeatureScaling
from dpcore.owl.simulate import PAPER_TRIAL

N_GRID = (200, 500, 800, 1000)
EPS_GRID = (0.1, 0.5, 1, 2, 5, np.inf)


def paper_table(reps=200, seed=0, executor=None):
    result = owl_monte_carlo(
        N_GRID,
        EPS_GRID,
        gamma="paper",
        h=0.5,
        weight_bound=PAPER_W,
        reps=reps,
        test_size=5000,
        seed=seed,
        outcome="paper",
        executor=executor,
    )
    s = result.summary
    return s[
        [
            "n",
            "epsilon",
            "gamma",
            "accuracy_mean",
            "accuracy_sd",
            "value_paper_mean",
            "value_paper_sd",
        ]
    ].rename(columns={"value_paper_mean": "value_mean", "value_paper_sd": "value_sd"})


def _objective(theta, X, y, w, gamma):
    from dpcore.owl.werm import werm_objective

    f, grad, _ = werm_objective(theta[None], X, y, w, np.array([gamma]))
    return f[0], grad[0]


def scipy_baseline(reps, seed=0):
    """Seconds to solve every distinct (dataset, gamma) of the grid with scipy, one call each."""
    from scipy.optimize import minimize

    scaling = FeatureScaling.from_bounds(PAPER_TRIAL.feature_bounds, PAPER_TRIAL.p)
    start = time.perf_counter()
    fits = 0
    for n in N_GRID:
        train = PAPER_TRIAL.sample(n, size=reps, rng=np.random.default_rng([seed, 1, n]))
        w, _ = owl_weights(train["B"], train["A"], PAPER_TRIAL.propensity, PAPER_W, "paper")
        Xt = scaling.transform(train["X"])
        gammas = sorted({paper_gamma(e, n) for e in EPS_GRID})
        for r in range(reps):
            args = (Xt[r : r + 1], train["A"][r : r + 1], w[r : r + 1])
            for g in gammas:
                minimize(
                    _objective,
                    np.zeros(scaling.d),
                    args=(*args, g),
                    jac=True,
                    method="L-BFGS-B",
                    options={"gtol": 1e-9, "ftol": 0, "maxiter": 10_000},
                )
                fits += 1
    return time.perf_counter() - start, fits


def on_cluster(table, args):
    """The same grid on a dask cluster: time and identity with the local pool's table."""
    from distributed import Client, LocalCluster

    cluster = (
        LocalCluster(n_workers=args.cluster, threads_per_worker=1, dashboard_address=None)
        if not args.scheduler
        else None
    )
    with Client(args.scheduler or cluster) as client:
        start = time.perf_counter()
        other = paper_table(args.reps, args.seed, executor=client.get_executor())
        seconds = time.perf_counter() - start
    if cluster is not None:
        cluster.close()
    same = other.equals(table)
    print(
        f"on the cluster ({args.scheduler or f'{args.cluster} local workers'}): {seconds:.2f} s, "
        f"table {'identical' if same else 'DIFFERENT'} to the local pool's"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="also write the table to this CSV file")
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scipy", action="store_true", help="also time the scipy baseline")
    parser.add_argument("--cluster", type=int, help="also run on a local dask cluster of N workers")
    parser.add_argument("--scheduler", help="also run on the dask cluster at this address")
    args = parser.parse_args()

    start = time.perf_counter()
    table = paper_table(args.reps, args.seed)
    seconds = time.perf_counter() - start
    print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    print(
        f"\npaper grid ({len(N_GRID)} n x {len(EPS_GRID)} epsilon x {args.reps} repetitions): "
        f"{seconds:.2f} s"
    )
    if args.out:
        table.to_csv(args.out, index=False)
        print(f"table written to {args.out}")
    if args.cluster or args.scheduler:
        on_cluster(table, args)
    if args.scipy:
        base, fits = scipy_baseline(args.reps, args.seed)
        print(
            f"scipy.optimize.minimize, one call per fit ({fits} fits, solves only): {base:.2f} s "
            f"-> batched engine is {base / seconds:.1f}x faster end to end"
        )


if __name__ == "__main__":
    main()
