"""Seconds for the "Your data" preview and for the private evaluation, cold, in one process.

    python benchmarks/preview_latency.py [n] [p]
    python benchmarks/preview_latency.py --sessions 2 [n] [p]

``--sessions K`` runs K copies at once, as K users of one server do, first with OpenBLAS's
default threads (one per core) and then with one thread each, as the dashboard and the command
line set (dpcore._threads).

The preview fits 8 simulated twins of a trial with n rows and p covariates (defaults 5,000 and
20) at 10 values of ε, γ from the paper's table, three effect strengths, 25 noise draws per
twin and ε: 600 releases per point. The goal: under 2 s of server time. The evaluation times
fit_and_evaluate (an 80/20 split, the fit, the released cells) on a trial of the same size.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

from dpcore.owl.evaluation_fit import fit_and_evaluate  # noqa: E402
from dpcore.owl.simulate import TwinDesign  # noqa: E402
from dpcore.release.preview import MAX_ROWS, preview  # noqa: E402
from dpcore.release.preview_reading import smallest_epsilon  # noqa: E402

EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)


def main(n=5000, p=20):
    design = TwinDesign(
        n=n,
        lower=(0.0,) * p,
        upper=(1.0,) * p,
        outcome_bounds=(0.0, 20.0),
        larger_is_better=False,
        propensity=2 / 3,
    )
    start = time.perf_counter()
    result = preview(design, EPSILONS, gamma="paper", weight_bound=60.0)
    t_preview = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    twin = design.sample([0.3], rng=0)
    start = time.perf_counter()
    fit_and_evaluate(
        twin["X"],
        twin["A"],
        twin["B"][0.3],
        2 / 3,
        epsilon_fit=1.0,
        epsilon_eval=1.0,
        gamma=250.0,
        weight_bound=60.0,
        feature_bounds=(np.zeros(p), np.ones(p)),
        outcome_bounds=(0.0, 20.0),
        larger_is_better=False,
        rng=1,
    )
    t_eval = time.perf_counter() - start
    print(
        f"preview, n = {n}, p = {p}, {len(EPSILONS)} ε x 3 strengths: {t_preview:.2f} s "
        f"(goal < 2 s; twins of at most {MAX_ROWS} patients)"
    )
    print(f"fit and private evaluation, n = {n}, p = {p}: {t_eval:.2f} s")
    print(f"peak memory of the process after the preview: {peak:.0f} MB")
    e90 = smallest_epsilon(result, 90.0, "strong")
    print(
        "smallest ε for 90% agreement, strong effects:",
        "not reached" if e90 is None else f"{e90:.3g}",
    )


def sessions(k, sizes):
    """K copies of this benchmark at once: with the default BLAS threads, then with one."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    }
    for label, extra in (
        ("OpenBLAS default threads", {}),
        ("one BLAS thread each", {"OPENBLAS_NUM_THREADS": "1"}),
    ):
        start = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, *sizes],
                env={**env, **extra},
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(k)
        ]
        outs = [p.communicate()[0] for p in procs]
        print(f"## {k} sessions at once, {label}: {time.perf_counter() - start:.1f} s in all")
        for i, out in enumerate(outs):
            print("\n".join(f"  session {i + 1}: {line}" for line in out.splitlines()[:2]))


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--sessions"]:
        sessions(int(args[1]), args[2:4])
    else:
        main(*(int(a) for a in args[:2]))
