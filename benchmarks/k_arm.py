"""The K-arm rule's accuracy and value against ε. A finding, not a test.

    PYTHONPATH=$PWD python benchmarks/k_arm.py [--reps 20] [--n 2000] [--seed 0] [--markdown]

Seeded. :class:`dpcore.owl.karm.KArmOWL` (K - 1 DP-OWL rules against the reference arm at
ε / (K - 1) each, γ the paper's table scaled by W) on

* the simulated three-arm trial ``K_ARM_TRIAL`` and four-arm trial ``FOUR_ARM_TRIAL``
  (:mod:`dpcore.owl.simulate`; equal randomization): accuracy = share of 5,000 test patients
  given their best arm, value = their mean outcome under the rule (true mean outcomes), beside
  the best single arm and the optimal rule;
* the real four-arm ACTG 175 (``dpcore_app/demo_data/actg175_four_arms.csv``, 2,139 patients): the rule
  fitted on the public split's 80% and its IPW value (mean CD4 count at week 20, cells/mm³)
  on the held-out 20%, computed without noise (the demo is public; this is an analysis of the
  method, not a release), beside each single arm's.

ε = inf is the same method without noise: the non-private multicategory rule it approximates.
Last, the coverage of the K-arm private evaluation's 95% intervals
(:func:`dpcore.owl.evaluation_arms.evaluate_arms_rule`) for a fixed rule.
Each cell is the mean over ``reps`` fits (independent noise; on the simulations also
independent training trials), with its standard error.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from dpcore import read_dictionary
from dpcore.data.trial import read_arms_trial
from dpcore.owl.evaluation_fit import public_split
from dpcore.owl.karm import KArmOWL, arm_indices
from dpcore.owl.simulate import FOUR_ARM_TRIAL, K_ARM_TRIAL

EPSILONS = (0.5, 1.0, 2.0, 5.0, 10.0, np.inf)
DEMO = Path(__file__).resolve().parents[1] / "dpcore_app" / "demo_data"


def simulated(design, n, reps, seed):
    rows = []
    test = design.sample(5000, rng=[seed, 999])
    best = test["mean"].max(axis=1).mean()
    single = test["mean"].mean(axis=0).max()
    for eps in EPSILONS:
        acc, val = [], []
        for r in range(reps):
            data = design.sample(n, rng=[seed, r])
            model = KArmOWL(
                epsilon=eps,
                outcome_bounds=design.outcome_bounds,
                feature_bounds=design.feature_bounds,
                rng=np.random.default_rng([seed, r, 1]),
            )
            model.fit(data["X"], data["A"], data["B"], design.arm_probabilities, arms=design.arms)
            pick = arm_indices(model.recommend(test["X"]), design.arms)
            acc.append(np.mean(pick == test["best"]))
            val.append(test["mean"][np.arange(pick.size), pick].mean())
        rows.append((eps, *_mean_se(acc), *_mean_se(val)))
    return rows, best, single


def actg(reps, seed):
    d = read_dictionary(DEMO / "actg175_four_arms.json")
    trial = read_arms_trial(DEMO / "actg175_four_arms.csv", dictionary=d)
    fit_rows, eval_rows = public_split(trial.n, 0.8, 0)
    codes = np.asarray(trial.A, dtype=int)
    labels = np.asarray(trial.arms, dtype=object)[codes]
    p = np.asarray(trial.arm_probabilities)
    y = np.clip(trial.B, *d.outcome_bounds)

    def ipw(pick):
        a = codes[eval_rows]
        return float(np.mean((a == pick) * y[eval_rows] / p[a]))

    single = {arm: ipw(np.full(eval_rows.size, j)) for j, arm in enumerate(trial.arms)}
    rows = []
    for eps in EPSILONS:
        vals = []
        for r in range(reps):
            model = KArmOWL(
                epsilon=eps,
                outcome_bounds=d.outcome_bounds,
                feature_bounds=trial.feature_bounds(d.bounds),
                reference=d.extra.get("reference"),
                rng=np.random.default_rng([seed, r, 2]),
            )
            model.fit(
                trial.X[fit_rows],
                labels[fit_rows],
                trial.B[fit_rows],
                trial.arm_probabilities,
                arms=trial.arms,
            )
            vals.append(ipw(arm_indices(model.recommend(trial.X[eval_rows]), trial.arms)))
        rows.append((eps, *_mean_se(vals)))
    return rows, single, eval_rows.size


def coverage(reps, seed):
    """Coverage of the K-arm evaluation's 95% intervals (values and gains) on K_ARM_TRIAL for a
    fixed rule (drug 2 when x2 > 1/2, else the reference), truths from 400,000 patients."""
    from dpcore.owl.evaluation_arms import evaluate_arms_rule

    D = K_ARM_TRIAL
    big = D.sample(400_000, rng=[seed, 1])
    rule = lambda X: (X[..., 1] > 0.5).astype(int) * 2  # noqa: E731
    truth = {
        "rule": big["mean"][np.arange(400_000), rule(big["X"])].mean(),
        **{a: big["mean"][:, j].mean() for j, a in enumerate(D.arms)},
    }
    rows = []
    # (m, ε_eval, incomplete share of each arm's rows: missing completely at random within arm)
    settings = (
        (200, np.inf, (0.0, 0.0, 0.0)),
        (400, 1.0, (0.0, 0.0, 0.0)),
        (400, 1.0, (0.1, 0.1, 0.1)),
        (2000, 0.5, (0.1, 0.1, 0.1)),
        (1000, 1.0, (0.0, 0.3, 0.0)),
        (1000, 10.0, (0.2, 0.0, 0.0)),
    )
    for m, eps, miss in settings:
        hits = np.zeros(2 * len(D.arms) + 1)
        gen = np.random.default_rng([seed, 2])
        for _ in range(reps):
            s = D.sample(m, rng=gen)
            ev = evaluate_arms_rule(
                rule(s["X"]),
                s["code"],
                s["B"],
                D.arm_probabilities,
                outcome_bounds=D.outcome_bounds,
                epsilon=eps,
                arms=D.arms,
                include=None if max(miss) == 0 else gen.random(m) >= np.take(miss, s["code"]),
                rng=gen,
            )
            got = [ev.values[k] for k in truth] + [ev.gains[a] for a in D.arms]
            want = list(truth.values()) + [truth["rule"] - truth[a] for a in D.arms]
            hits += [e.lower <= v <= e.upper for e, v in zip(got, want)]
        rows.append((m, eps, miss, hits / reps))
    return rows, ["rule", *D.arms, *(f"gain over {a}" for a in D.arms)]


def _mean_se(x):
    x = np.asarray(x, dtype=float)
    return x.mean(), x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else 0.0


def _eps(e):
    return "∞ (non-private)" if np.isinf(e) else f"{e:g}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    warnings.simplefilter("ignore")  # clipping and noise warnings: analyst-only, not findings
    for name, design in (
        ("K = 3 (K_ARM_TRIAL)", K_ARM_TRIAL),
        ("K = 4 (FOUR_ARM_TRIAL)", FOUR_ARM_TRIAL),
    ):
        rows, best, single = simulated(design, args.n, args.reps, args.seed)
        print(
            f"\n{name}, n = {args.n}, {args.reps} reps; optimal value {best:.3f}, best "
            f"single arm {single:.3f}, chance accuracy {1 / len(design.arms):.2f}\n"
        )
        print("| ε | accuracy | value |\n|---|---|---|")
        for eps, a, sa, v, sv in rows:
            print(f"| {_eps(eps)} | {a:.3f} ± {sa:.3f} | {v:.3f} ± {sv:.3f} |")
    rows, single, m = actg(args.reps, args.seed)
    shown = ", ".join(f"{a} {v:.0f}" for a, v in single.items())
    print(
        f"\nACTG 175, four arms: IPW value (CD4 at week 20) on the {m} held-out patients, "
        f"{args.reps} reps; single arms: {shown}\n"
    )
    print("| ε | value |\n|---|---|")
    for eps, v, sv in rows:
        print(f"| {_eps(eps)} | {v:.1f} ± {sv:.1f} |")
    rows, names = coverage(max(args.reps * 10, 100), args.seed)
    print(
        f"\nCoverage of the K-arm evaluation's 95% intervals, {max(args.reps * 10, 100)} "
        "releases per row\n"
    )
    print("| m | ε_eval | incomplete (by arm) | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 3) + "|")
    for m, eps, miss, cov in rows:
        shares = " / ".join(f"{v:.0%}" for v in miss)
        print(f"| {m} | {_eps(eps)} | {shares} | " + " | ".join(f"{c:.2f}" for c in cov) + " |")
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
