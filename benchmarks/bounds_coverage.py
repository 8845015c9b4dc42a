"""Does the measured excess risk respect Theorem 10? Both forms, both conventions. A finding, not a test.

    PYTHONPATH=$PWD python benchmarks/bounds_coverage.py [--draws 100] [--trials 20]

Forms: "transcribed" (the formula as the seed text prints it, a_p(rho) and the squared
smoothness) and "re-derived" (this project's derivation). Conventions: lambda = gamma/n (the
code's objective, for which the release's sensitivity (C + 2W)/gamma holds) and lambda =
2 gamma/n (what the theorem states). Under each convention the comparator theta0 is the
regularized-hinge minimiser at that lambda (the most demanding theta0 at that gamma).

Settings: the paper's 20 (n in {200, 500, 800, 1000}, epsilon in {0.1, 0.5, 1, 2, 5}, W = 30,
h = 0.5, the paper-tuned gamma, C = 0, d = 5, rho = 0.05), then those of issue 15 item 1
(small W, where the smoothness lambda + W/(2h) is near or below 1). Coverage is the share of
releases within the bound with a 95% interval that treats the trials as clusters
(dpcore.theory.measurement.coverage); "!" marks an interval wholly below 95%.
"""

from __future__ import annotations

import argparse
import time

from dpcore.owl.paper import PAPER_H, PAPER_W, paper_gamma
from dpcore.theory import bounds
from dpcore.theory.measurement import (
    check_name,
    comparators,
    coverage,
    paper_trials,
    werm_excess_risk,
    with_bounds,
)

RHO, D = 0.05, 5
CHECKS = [(f, c) for f in ("printed", "re-derived") for c in ("code", "stated")]
LABEL = {"printed": "transcr", "re-derived": "re-der", "code": "γ/n", "stated": "2γ/n"}
ITEM1 = (  # (n, eps, gamma, h, W): issue 15 item 1
    (200, 1.0, 1.0, 2.0, 1.0),  # the page's preset: S = 0.255 at gamma/n
    (200, 1.0, 1.0, 1.0, 1.0),  # S = 0.505 at gamma/n
    (400, 5.0, 1.0, 2.0, 5.0),  # S = 1.255 at 2 gamma/n
    (400, 1.0, 1.0, 2.0, 5.0),
    (200, 5.0, 1.0, 2.0, 1.0),
)


def cell(n, eps, gamma, h, W, trials, draws):
    tr = paper_trials(n, trials, W, seed=0)
    comps = comparators(tr, gamma)
    runs = werm_excess_risk(tr, comps["code"].theta0, eps, [gamma], h, W, draws=draws, seed=0)
    runs = with_bounds(runs, comps, n, eps, RHO, W, 0.0, D, checks=CHECKS)
    row = f"{n:>5} {eps:>4g} {gamma:>5g} {h:>4g} {W:>3g} |"
    for form, conv in CHECKS:
        name = check_name(form, conv)
        cov = coverage(runs[f"within_{name}"], runs.trial)
        q = runs[f"excess_{conv}"].quantile(1 - RHO)
        ratio = q / runs[f"bound_{name}"].mean()
        flag = "!" if cov["hi"] < 1 - RHO else " "
        row += (
            f" {100 * cov['share']:5.1f}% ({100 * cov['lo']:4.1f}-{100 * cov['hi']:5.1f}){flag}"
            f" {ratio:6.2g} |"
        )
    smooth = [float(bounds.lam_from_gamma(gamma, n, c)) + W / (2 * h) for c in ("code", "stated")]
    return row + f" S = {smooth[0]:.3g} / {smooth[1]:.3g}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--draws", type=int, default=100, help="noise draws per trial")
    parser.add_argument("--trials", type=int, default=20, help="simulated trials per setting")
    args = parser.parse_args()
    start = time.perf_counter()
    head = "".join(f" {LABEL[f] + ' @ ' + LABEL[c]:^27} |" for f, c in CHECKS)
    print(
        f"{args.trials} trials x {args.draws} draws per setting; each check: coverage "
        "(95% CI) and q95/bound"
    )
    print(f"{'n':>5} {'eps':>4} {'gamma':>5} {'h':>4} {'W':>3} |{head} smoothness at γ/n / 2γ/n")
    for n in (200, 500, 800, 1000):
        for eps in (0.1, 0.5, 1, 2, 5):
            print(
                cell(n, eps, paper_gamma(eps, n), PAPER_H, PAPER_W, args.trials, args.draws),
                flush=True,
            )
    print("issue 15, item 1:")
    for setting in ITEM1:
        print(cell(*setting, args.trials, args.draws), flush=True)
    print(f"{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
