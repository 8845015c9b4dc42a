"""Coverage of the private evaluation's intervals with incomplete rows. A finding, not a test.

    PYTHONPATH=$PWD python benchmarks/evaluation_coverage.py [--reps 1000] [--seed 0]

Seeded simulation of :func:`dpcore.owl.evaluation.evaluate_rule` at the Your-data page's
settings: the default 80/20 split of n in {200, 1000, 5000} (m = 40, 200, 1000 held-out
patients), ε_eval in {0.1, 0.5, 1, 10, inf} (0.1 is the page's smallest), 0%, 10% and 30% of
rows incomplete (missing completely at random, weight 0, ``include`` False: the page's path,
which releases the noisy count of complete rows). Designs: the paper's trial (1:1) with outcome
bounds (-10, 10); the same with bounds (-10, 30) (a midpoint far from the values, where the old
estimator's shrinkage shows); heavy weights (P(treated) = 0.9, weights up to 10: the
ε_eval = inf case of issue 24). The rule is fixed (the optimal one, flipped where x1 > 0.7).
Truths are the values among complete rows, equal under MCAR to the population values, from
2,000,000 simulated patients' potential outcomes.

Vectorised over repetitions: the cells, moments and count of every repetition are computed at
once (:func:`cell_sums` over a leading axis), noised at once, and turned into intervals by
:func:`release_estimates`, the very post-processing ``evaluate_rule`` uses. With reps = 1000 the
Monte-Carlo standard error of a 95% coverage is 0.69 points; "!" marks a coverage below 94% by
more than two standard errors. The last columns are the rule's coverage without the count
(incomplete rows count 0 in m, the bias of issue 23) and the mean half-width of the rule's value.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpcore.owl.evaluation import (
    COUNT_SENSITIVITY,
    cell_sums,
    evaluation_budget,
    evaluation_sensitivity,
    moment_sensitivity,
    release_estimates,
)
from dpcore.owl.simulate import PAPER_TRIAL, TrialDesign, optimal_treatment

BOUNDS = (-10.0, 10.0)
SIZES = (200, 1000, 5000)
FIT_SHARE = 0.8
EPSILONS = (0.1, 0.5, 1.0, 10.0, np.inf)
INCOMPLETE = (0.0, 0.1, 0.3)
# (design, outcome bounds, incomplete shares): the paper's trial with the usual bounds; the same
# with bounds whose midpoint lies far from the values (as a real outcome's often do), where
# the old estimator's shrinkage towards the midpoint shows; heavy weights (issue 24).
DESIGNS = {
    "paper 1:1": (PAPER_TRIAL, BOUNDS, INCOMPLETE),
    "paper 1:1, bounds (-10, 30)": (PAPER_TRIAL, (-10.0, 30.0), (0.1, 0.3)),
    "heavy 9:1": (TrialDesign(propensity=0.9), BOUNDS, (0.0, 0.1)),
}
NAMES = ("rule", "treat_all", "treat_none", "over_treat_all", "over_treat_none")


def rule(X, f):
    """The evaluated rule: the optimal one, flipped where x1 > 0.7."""
    return np.where(X[..., 0] > 0.7, -1.0, 1.0) * optimal_treatment(f)


def truths(design, bounds, rng, size=2_000_000):
    """Values (outcome scale) and gains of the rule, treat-all and treat-none."""
    t = design.sample(size, rng=rng)
    X, f = t["X"], t["f"]
    noise = design.noise_sd * rng.standard_normal(size)

    def value(d):
        mu = 0.01 + 0.02 * X[:, 3] + 3.0 * d * f + noise
        return float(np.mean(np.clip(mu, *bounds)))

    v = {"rule": value(rule(X, f)), "treat_all": value(1.0), "treat_none": value(-1.0)}
    v["over_treat_all"] = v["rule"] - v["treat_all"]
    v["over_treat_none"] = v["rule"] - v["treat_none"]
    return v


def coverage_rows(design, bounds, n, share, truth, reps, rng):
    """One row per ε_eval: coverage of each estimate, the old estimator's, the rule's width."""
    m = n - int(round(FIT_SHARE * n))
    p = design.propensity
    p_min = min(p, 1.0 - p)
    t = design.sample(m, reps, rng=rng)
    include = rng.random((reps, m)) >= share
    args = (rule(t["X"], t["f"]), t["A"], t["B"], p, bounds, p_min, include)
    cells, moments = cell_sums(*args), cell_sums(*args, power=2)
    count = include.sum(axis=-1).astype(float)
    d1, d2 = evaluation_sensitivity(bounds, p_min, m), moment_sensitivity(bounds, p_min, m)
    rows = []
    for eps in EPSILONS:
        e1, e2, e3 = evaluation_budget(eps)
        noise = lambda e, d, size: 0.0 if np.isinf(e) else rng.laplace(0.0, d / e, size)  # noqa: E731
        est = release_estimates(
            cells + noise(e1, d1, (reps, 4)),
            moments + noise(e2, d2, (reps, 4)),
            count + noise(e3, COUNT_SENSITIVITY, reps),
            m=m,
            outcome_bounds=bounds,
            min_propensity=p_min,
            epsilons=(e1, e2, e3),
        )
        cover = {
            k: float(np.mean((est[k][1] <= truth[k]) & (truth[k] <= est[k][2]))) for k in NAMES
        }
        # Without the count: the cells over m, budget 3/4 cells, 1/4 moments (the old split).
        o1, o2, _ = evaluation_budget(eps, count=False)
        old = release_estimates(
            cells + noise(o1, d1, (reps, 4)),
            moments + noise(o2, d2, (reps, 4)),
            None,
            m=m,
            outcome_bounds=bounds,
            min_propensity=p_min,
            epsilons=(o1, o2, 0.0),
        )
        old_rule = float(
            np.mean((old["rule"][1] <= truth["rule"]) & (truth["rule"] <= old["rule"][2]))
        )
        width = float(np.mean(est["rule"][2] - est["rule"][1]) / 2.0)
        rows.append((eps, cover, old_rule, width))
    return m, rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    se = np.sqrt(0.95 * 0.05 / args.reps)
    start = time.perf_counter()
    print(
        f"Coverage of the 95% intervals, {args.reps} seeded releases per row "
        f"(Monte-Carlo s.e. {100 * se:.2f} points; '!' below 94% by more than 2 s.e.)\n"
    )
    print(
        "| design | incomplete | n (m) | ε_eval | rule | treat all | treat none | gain vs all "
        "| gain vs none | rule, no count | rule ± |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    worst = 1.0
    for label, (design, bounds, shares) in DESIGNS.items():
        truth = truths(design, bounds, rng)
        for share in shares:
            for n in SIZES:
                m, rows = coverage_rows(design, bounds, n, share, truth, args.reps, rng)
                for eps, cover, old_rule, width in rows:
                    cells = []
                    for k in NAMES:
                        worst = min(worst, cover[k])
                        flag = "!" if cover[k] < 0.94 - 2 * se else ""
                        cells.append(f"{100 * cover[k]:.1f}{flag}")
                    print(
                        f"| {label} | {100 * share:.0f}% | {n} ({m}) | {eps:g} | "
                        + " | ".join(cells)
                        + f" | {100 * old_rule:.1f} | {width:.3g} |"
                    )
    print(f"\nLowest coverage: {100 * worst:.1f}%  ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
