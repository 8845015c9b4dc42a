"""Does the ε the DP-OWL page names deliver one release that meets the target? A finding, not a test.

    python benchmarks/owl_assurance.py [--reps 200] [--check-reps 400] [--targets 70 80 90]

For each n in {200, 500, 1000, 2500} and each target (at least k of 100 new patients get the
better treatment), the page's own study (paper-tuned γ, public outcome bounds, W auto, the
page's repetitions and seed 0) names the smallest ε on its grid at which 9 of 10 single
releases reach the target beyond Monte-Carlo doubt (the lower end of the share's 95% Wilson
interval at or above 0.9). That ε is then checked on fresh simulated trials (seed 1,
``--check-reps`` of them): the share of single releases reaching the target there, with its
interval. Goal: every named ε has a share at least the assurance, within Monte-Carlo error
(the check's interval reaches 0.9 or above).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

from dpcore_app.ui.common.grids import EPS_OPTIONS  # noqa: E402
from dpcore_app.ui.owl import compute as owl  # noqa: E402
from dpcore_app.ui.owl.decide_compute import share_at, smallest_assured_eps  # noqa: E402

SIZES = (200, 500, 1000, 2500)
ASSURANCE = 0.9


def study(n, eps_grid, reps, seed):
    """The page's study at n (paper-tuned γ, h = 0.5, public bounds, W auto): its runs."""
    return owl.study(n, eps_grid, "paper", 0.5, "auto", reps, seed, "public").runs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--check-reps", type=int, default=400)
    parser.add_argument("--targets", type=float, nargs="+", default=[70.0, 80.0, 90.0])
    args = parser.parse_args()
    print(
        "| n | target | ε named (9 of 10) | share there, page's runs | share on fresh trials "
        "(95% interval) | meets 9 of 10 |"
    )
    print("|---|---|---|---|---|---|")
    start = time.perf_counter()
    for n in SIZES:
        runs = study(n, EPS_OPTIONS, args.reps, 0)
        for k in args.targets:
            named = smallest_assured_eps(runs, k, ASSURANCE)
            if named is None:
                print(f"| {n} | {k:g} | none on the grid | | | |")
                continue
            check = share_at(study(n, [named.at, math.inf], args.check_reps, 1), named.at, k)
            ok = "yes" if check.hi >= ASSURANCE else "**no**"
            print(
                f"| {n} | {k:g} | {named.at:g} | {named.share:.1%} | {check.share:.1%} "
                f"({check.lo:.1%}–{check.hi:.1%}) | {ok} |"
            )
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
