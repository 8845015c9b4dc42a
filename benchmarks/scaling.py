"""How the cost of DP-OWL grows: seconds and peak memory against n and against repetitions.

    python benchmarks/scaling.py

Part 1 fits one private rule (DPOWL.fit) on n = 10^3 ... 10^6 rows of the paper's trial.
Part 2 runs the Monte-Carlo engine at n = 1000 over the full epsilon grid for a growing number
of repetitions. Peak memory is what numpy allocated during the call (tracemalloc).
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from dpcore import DPOWL
from dpcore.owl.experiments import owl_monte_carlo
from dpcore.owl.paper import PAPER_EPSILONS
from dpcore.owl.simulate import PAPER_TRIAL


def measure(fn):
    tracemalloc.start()
    start = time.perf_counter()
    fn()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak / 2**20


def main():
    print("one private fit (DPOWL, epsilon = 1, gamma = 75)")
    print(f"{'n':>10} {'seconds':>9} {'peak MiB':>9}")
    for n in (10**3, 10**4, 10**5, 10**6):
        data = PAPER_TRIAL.sample(n, rng=0)
        model = DPOWL(
            epsilon=1.0,
            gamma=75.0,
            outcome_bounds=(-12, 12),
            feature_bounds=PAPER_TRIAL.feature_bounds,
            rng=1,
            larger_is_better=True,
        )
        s, mib = measure(lambda m=model, d=data: m.fit(d["X"], d["A"], d["B"], 0.5))
        print(f"{n:>10} {s:>9.3f} {mib:>9.1f}")

    print(
        f"\nMonte-Carlo sweep, n = 1000, {len(PAPER_EPSILONS)} epsilons, paper gamma, "
        "5000-row test sets"
    )
    print(f"{'reps':>10} {'seconds':>9} {'peak MiB':>9}")
    for reps in (10, 50, 200, 500):
        s, mib = measure(lambda r=reps: owl_monte_carlo([1000], PAPER_EPSILONS, reps=r))
        print(f"{reps:>10} {s:>9.3f} {mib:>9.1f}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
