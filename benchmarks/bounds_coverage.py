"""Does the measured excess risk respect Theorem 10 at the paper's settings? A finding, not a test.

    python benchmarks/bounds_coverage.py

n in {200, 500, 800, 1000}, epsilon in {0.1, 0.5, 1, 2, 5}, W = 30, h = 0.5, the paper-tuned
gamma, C = 0, p = 4 (d = 5), rho = 0.05; 20 simulated trials x 250 noise draws per cell. The
comparator theta0 is the regularized-hinge minimiser (the most demanding choice).
"""

from __future__ import annotations

import time

from dpcore.owl.paper import PAPER_H, PAPER_W, paper_gamma
from dpcore.theory.measurement import (
    comparator,
    coverage,
    paper_trials,
    werm_excess_risk,
    with_bounds,
)

RHO, D = 0.05, 5


def main():
    start = time.perf_counter()
    print(f"{'n':>5} {'eps':>4} {'gamma':>5} | {'mean':>8} {'q95':>8} {'max':>8} | "
          f"{'re-derived':>10} {'cover':>6} {'q95/b':>7} | {'printed':>10} {'cover':>6} {'q95/b':>7}")
    for n in (200, 500, 800, 1000):
        for eps in (0.1, 0.5, 1, 2, 5):
            g = paper_gamma(eps, n)
            trials = paper_trials(n, 20, PAPER_W, seed=0)
            runs = werm_excess_risk(trials, comparator(trials, g), eps, [g], PAPER_H, PAPER_W,
                                    draws=250, seed=0)
            runs = with_bounds(runs, n, eps, RHO, PAPER_W, 0.0, D)
            q = runs.excess.quantile(1 - RHO)
            row = f"{n:>5} {eps:>4g} {g:>5g} | {runs.excess.mean():>8.3g} {q:>8.3g} {runs.excess.max():>8.3g} |"
            for form in ("re-derived", "printed"):
                b = runs[f"bound_{form}"].mean()
                cov = coverage(runs[f"within_{form}"])
                row += f" {b:>10.4g} {100 * cov['share']:>5.1f}% {q / b:>7.2g} |"
            print(row)
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
