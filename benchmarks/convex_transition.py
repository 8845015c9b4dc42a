"""Where does DP-GD's excess CVaR actually fall, against epsilon n tau / sqrt(d)? A finding.

    PYTHONPATH=$PWD python benchmarks/convex_transition.py [--reps 10]

The CVaR page's convex study (n = 2000, tau = 0.1, T = 100 steps, (epsilon, 1e-5)-DP, absolute
loss on the unit ball, d in 1..50) on a finer grid of epsilon n tau / sqrt(d). Corollary 6.6
says only "epsilon n tau >> sqrt(d), up to logarithms"; this prints the mean excess per point,
where it falls to half and to a tenth of its saturated value (its value at ratio 1), and the
constant c of DP-GD's worst-case noise part c sqrt(d)/(epsilon n tau) at the half point. The
page reads the half point off the run it draws (dpcore.theory.measurement.transition_ratio);
dpcore_app/ui/cvar/compute.py keeps this script's numbers as MEASURED_TRANSITION.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpcore.cvar.learning_study import convex_study
from dpcore.cvar.rates import dp_gd_privacy_constant
from dpcore.montecarlo import summarize
from dpcore.theory.measurement import transition_ratio

N, TAU, DS = 2000, 0.1, (1, 2, 5, 10, 20, 50)
RATIOS = tuple(float(r) for r in np.geomspace(1, 1000, 13))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    start = time.perf_counter()
    runs = convex_study(N, TAU, DS, RATIOS, reps=args.reps, seed=0)
    summary = summarize(runs, ("d", "ratio"), ("excess",))
    table = summary.pivot(index="ratio", columns="d", values="excess_mean")
    print(
        f"mean excess test CVaR over non-private, n = {N}, tau = {TAU}, {args.reps} runs per point"
    )
    print(table.to_string(float_format=lambda v: f"{v:8.4f}"))
    half, tenth = transition_ratio(summary, 0.5), transition_ratio(summary, 0.1)
    print(f"\n{'d':>3} {'half':>8} {'tenth':>8} {'c at half':>10} {'eps/mu':>7}")
    for d in DS:
        eps = half[d] * np.sqrt(d) / (N * TAU)
        const = dp_gd_privacy_constant(N, d, TAU, eps, 1e-5)
        print(
            f"{d:>3} {half[d]:8.1f} {tenth[d]:8.1f} {const['c']:10.1f} {const['calibration']:7.2f}"
        )
    print(
        f"median half point {np.nanmedian(half):.1f}, median tenth point {np.nanmedian(tenth):.1f}"
    )
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
