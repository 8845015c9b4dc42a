"""Coverage of the private evaluation's intervals with incomplete rows. A finding, not a test.

    PYTHONPATH=$PWD python benchmarks/evaluation_coverage.py [--reps 500] [--seed 0]

Seeded simulation of :func:`dpcore.owl.evaluation.evaluate_rule` at the Your-data page's
settings: the default 80/20 split of n in {200, 1000, 5000} (m = 40, 200, 1000 held-out
patients), ε_eval in {0.1, 0.5, 1, 10, inf} (0.1 is the page's smallest), and five patterns of
incomplete rows (weight 0, ``include`` False: the page's path, which releases the noisy
per-arm counts of complete rows), each missing completely at random within its arm: none,
10% and 30% of each arm, 30% of the treated arm and none of the control arm, none of the
treated arm and 20% of the control arm. Designs: the paper's trial (1:1) with outcome bounds
(-10, 10); the same with bounds (-10, 30) (a midpoint far from the values, where an estimator
that divides both arms by one count moves its target); heavy weights (P(treated) = 0.9,
weights up to 10). The rule is fixed (the optimal one, flipped where x1 > 0.7). Truths are the
population's values from 2,000,000 simulated patients' potential outcomes: under missingness
completely at random within each arm they equal the values among complete rows that the
estimator targets.

Vectorised over repetitions: the cells, moments and per-arm counts of every repetition are
computed at once (:func:`cell_sums`, :func:`complete_counts` over a leading axis), noised at
once, and turned into intervals by :func:`release_estimates`, the very post-processing
``evaluate_rule`` uses. With reps = 500 the Monte-Carlo standard error of a 95% coverage is
0.97 points; "!" marks a coverage below 94% by more than two standard errors. The column
"one count" (for arms that lose different shares) is the lowest of the five coverages by the
previous estimator, which divided both arms' cells by one noisy count of all complete rows
(Fieller's interval with that share, at its split 0.65 / 0.25 / 0.10 of ε_eval); "rule ±" is
the mean half-width of the rule's value.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpcore.owl.evaluation import (
    cell_sums,
    evaluation_sensitivity,
    moment_sensitivity,
    release_estimates,
    signed_sums,
)
from dpcore.owl.evaluation_common import complete_counts, count_rates, evaluation_budget
from dpcore.owl.evaluation_interval import bernstein_sigma, fieller_interval, two_laplace_quantile
from dpcore.owl.simulate import PAPER_TRIAL, TrialDesign, optimal_treatment

BOUNDS = (-10.0, 10.0)
SIZES = (200, 1000, 5000)
FIT_SHARE = 0.8
EPSILONS = (0.1, 0.5, 1.0, 10.0, np.inf)
# (treated arm's incomplete share, control arm's)
PATTERNS = ((0.0, 0.0), (0.1, 0.1), (0.3, 0.3), (0.3, 0.0), (0.0, 0.2))
# (design, outcome bounds, patterns)
DESIGNS = {
    "paper 1:1": (PAPER_TRIAL, BOUNDS, PATTERNS),
    "paper 1:1, bounds (-10, 30)": (PAPER_TRIAL, (-10.0, 30.0), PATTERNS[1:]),
    "heavy 9:1": (TrialDesign(propensity=0.9), BOUNDS, ((0.0, 0.0), (0.3, 0.0), (0.0, 0.2))),
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


def one_count_estimates(cells, moments, total, m, bounds, p_min, epsilons, level=0.95):
    """The previous estimator: every cell over one noisy share of all complete rows N~ / m
    (count sensitivity 1), Fieller's interval on each estimate's signed pair of cells."""
    lo, hi = bounds
    R, c = hi - lo, (lo + hi) / 2.0
    e1, e2, e3 = epsilons
    s = 0.0 if np.isinf(e1) else evaluation_sensitivity(bounds, p_min, m) / e1
    s2 = 0.0 if np.isinf(e2) else moment_sensitivity(bounds, p_min, m) / e2
    count_scale = 0.0 if np.isinf(e3) else 1.0 / (m * e3)
    share = total / m
    num = signed_sums(cells)
    pairs = ((0, 3), (0, 1), (2, 3), (3, 1), (0, 2))
    moment = np.stack([moments[..., a] + moments[..., b] for a, b in pairs], -1)
    cap = np.array([(R / 2) ** 2 / p_min] * 3 + [(R / 2) ** 2 / (p_min * (1 - p_min))] * 2)
    second = np.minimum(np.maximum(moment, 0.0) + s2 * two_laplace_quantile(level), cap)
    sigma = bernstein_sigma(second, m, R / (2 * p_min), level)
    bound = np.array([R / 2] * 3 + [R] * 2)
    a, b = fieller_interval(num, share[..., None], sigma, s, count_scale, bound, level)
    offset = np.array([c] * 3 + [0.0] * 2)
    return {k: (offset[j] + a[..., j], offset[j] + b[..., j]) for j, k in enumerate(NAMES)}


def coverage_rows(design, bounds, n, pattern, truth, reps, rng, count_share):
    """One row per ε_eval: coverage of each estimate, the one-count estimator's lowest, the
    rule's mean half-width."""
    m = n - int(round(FIT_SHARE * n))
    p = design.propensity
    p_min = min(p, 1.0 - p)
    t = design.sample(m, reps, rng=rng)
    missing = np.where(t["A"] > 0, pattern[0], pattern[1])
    include = rng.random((reps, m)) >= missing
    args = (rule(t["X"], t["f"]), t["A"], t["B"], p, bounds, p_min, include)
    cells, moments = cell_sums(*args), cell_sums(*args, power=2)
    counts = complete_counts(t["A"], p, p_min, include)
    total = include.sum(axis=-1).astype(float)
    d1, d2 = evaluation_sensitivity(bounds, p_min, m), moment_sensitivity(bounds, p_min, m)
    rows = []
    for eps in EPSILONS:
        e1, e2, e3 = evaluation_budget(eps, count_share=count_share)
        noise = lambda e, d, size: 0.0 if np.isinf(e) else rng.laplace(0.0, d / e, size)  # noqa: E731
        noisy_cells = cells + noise(e1, d1, (reps, 4))
        noisy_moments = moments + noise(e2, d2, (reps, 4))
        est = release_estimates(
            noisy_cells,
            noisy_moments,
            counts + noise(e3, 2.0, (reps, 2)),
            m=m,
            outcome_bounds=bounds,
            min_propensity=p_min,
            epsilons=(e1, e2, e3),
            count_rates=count_rates(p, p_min),
        )
        cover = {
            k: float(np.mean((est[k][1] <= truth[k]) & (truth[k] <= est[k][2]))) for k in NAMES
        }
        width = float(np.mean(est["rule"][2] - est["rule"][1]) / 2.0)
        if pattern[0] == pattern[1]:  # one count is right when the arms lose the same share
            rows.append((eps, cover, None, width))
            continue
        # The previous estimator at its own split (0.65 / 0.25 / 0.10) and its own noise.
        o1, o2, o3 = evaluation_budget(eps, count_share=0.1)
        old = one_count_estimates(
            cells + noise(o1, d1, (reps, 4)),
            moments + noise(o2, d2, (reps, 4)),
            total + noise(o3, 1.0, reps),
            m,
            bounds,
            p_min,
            (o1, o2, o3),
        )
        old_worst = min(
            float(np.mean((old[k][0] <= truth[k]) & (truth[k] <= old[k][1]))) for k in NAMES
        )
        rows.append((eps, cover, old_worst, width))
    return m, rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count-share", type=float, default=None)
    args = parser.parse_args(argv)
    import inspect

    from dpcore.owl.evaluation_common import evaluation_budget as budget

    share = args.count_share
    if share is None:
        share = inspect.signature(budget).parameters["count_share"].default
    rng = np.random.default_rng(args.seed)
    se = np.sqrt(0.95 * 0.05 / args.reps)
    start = time.perf_counter()
    print(
        f"Coverage of the 95% intervals, {args.reps} seeded releases per row "
        f"(Monte-Carlo s.e. {100 * se:.2f} points; '!' below 94% by more than 2 s.e.; "
        f"count share {share:g})\n"
    )
    print(
        "| design | incomplete (treated / control) | n (m) | ε_eval | rule | treat all "
        "| treat none | gain vs all | gain vs none | one count | rule ± |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    worst = 1.0
    for label, (design, bounds, patterns) in DESIGNS.items():
        truth = truths(design, bounds, rng)
        for pattern in patterns:
            for n in SIZES:
                m, rows = coverage_rows(design, bounds, n, pattern, truth, args.reps, rng, share)
                for eps, cover, old_worst, width in rows:
                    cells = []
                    for k in NAMES:
                        worst = min(worst, cover[k])
                        flag = "!" if cover[k] < 0.94 - 2 * se else ""
                        cells.append(f"{100 * cover[k]:.1f}{flag}")
                    print(
                        f"| {label} | {100 * pattern[0]:.0f}% / {100 * pattern[1]:.0f}% | "
                        f"{n} ({m}) | {eps:g} | "
                        + " | ".join(cells)
                        + f" | {'–' if old_worst is None else f'{100 * old_worst:.1f}'} | "
                        f"{width:.3g} |",
                        flush=True,
                    )
    print(f"\nLowest coverage: {100 * worst:.1f}%  ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
