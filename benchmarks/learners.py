"""DP-OWL (output and objective perturbation) against the private plug-in rule, on simulated
trials. A finding, not a test.

    PYTHONPATH=$PWD python benchmarks/learners.py [--reps 20] [--seed 0] [--markdown]

Seeded. Both learners are fitted on the same training trials (paired), at ε in
{0.1, 0.5, 1, 2, 5, 10, 100} and inf (no noise) and n in {200, 1000, 5000}, and scored on a
fresh 5,000-patient test set per repetition, against the truth the simulation knows:

* agreement: the share of test patients given the better arm (in percent);
* value: their mean outcome under the rule (true mean outcomes, larger is better), beside
  the optimal rule's and treat-all's.

Learners, as a release would run them (:class:`dpcore.DPOWL` and
:class:`dpcore.PrivatePlugInRule` with their defaults, public bounds [0, 1] for the
covariates and (-12, 12) for the outcome, the known propensity 0.5):

* DP-OWL: Huber-hinge (h = 0.5) OWL weights (B + 12) / 0.5 clipped at W = 48, γ the paper's
  table scaled by W / 30 (``DPOWL(gamma="paper")``), output perturbation;
* DP-OWL objective: the same weights and γ, released by objective perturbation
  (``DPOWL(perturbation="objective")``, docs/objective.md);
* plug-in: per-arm ridge regressions (ridge 0.01 per row) from Laplace-noised sufficient
  statistics, L1 sensitivity d (d + 3) = 40.

Both are run vectorized over the repetitions through the functions the estimators call
(``solve_werm`` and ``output_perturbation``; ``objective_release``; ``plugin_statistics`` and
``score_from_statistics``); at ε = inf the first repetition is checked against the
estimators themselves.

Designs (x ~ U[0, 1]^4, A = ±1 with probability 1/2, B = 0.01 + 0.02 x4 + 3 A f(x) + N(0, 0.5²),
so the treated minus control mean outcome is 6 f(x) and the better arm is sign f(x)):

* paper: f(x) = 1 + x1 + x2 - 1.8 x3 - 2.2 x4 (the DP-wERM paper's trial, spec §7);
* constant effect: f(x) = 0.5, no heterogeneity (the best rule treats everyone);
* middle benefit: f(x) = 12 (0.25 - |x1 - 0.5|), treatment helps only when 0.25 < x1 < 0.75,
  a boundary no linear rule can draw (the best linear rule, x1 > 0.25 or x1 < 0.75, agrees on
  75% of patients);
* threshold effect: f(x) = 2.5 if x1 > 0.7 else -0.5, a large benefit for 30% of patients and
  a small harm for the rest: the best rule (x1 > 0.7) is linear but the effect is not, so a
  linear outcome model misplaces the boundary (its least-squares line crosses 0 at
  x1 = 0.39, so even without noise it treats the 31% of patients with 0.39 < x1 < 0.7 wrongly).

Each cell is the mean over ``reps`` repetitions (independent training trial, noise and test
set) with its Monte-Carlo standard error; "plug-in - DP-OWL" is the mean paired difference
of agreement with its standard error.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpcore.owl.learners import DESIGNS, compare_learners

EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0, np.inf)
NS = (200, 1000, 5000)


def study(reps, seed):
    """{(design, n, ε, learner): {"agreement": per-rep array, "value": per-rep array}} and
    the reference values, from :func:`dpcore.owl.learners.compare_learners`."""
    runs, refs = compare_learners(
        NS, EPSILONS, reps, seed, designs=[d.name for d in DESIGNS], check=True
    )
    by = {
        cell: {m: g[m].to_numpy() for m in ("agreement", "value")}
        for cell, g in runs.groupby(["design", "n", "epsilon", "learner"], sort=False)
    }
    return by, refs


def _cell(values):
    se = values.std(ddof=1) / np.sqrt(values.size)
    return values.mean(), se


def tables(by, refs, reps, markdown):
    lines = []
    for design in DESIGNS:
        ref = refs[design.name]
        for metric, unit in (("agreement", "%"), ("value", "")):
            title = (
                f"{design.name}: {metric}"
                + (" (share of patients given the better arm, %)" if unit else "")
                + (
                    f" (mean outcome; optimal rule {ref['optimal']:.2f}, "
                    f"treat all {ref['treat all']:.2f})"
                    if not unit
                    else ""
                )
            )
            head = ["ε"] + [f"n = {n}: plug-in / DP-OWL" for n in NS]
            if metric == "agreement":
                head += [f"n = {n}: plug-in - DP-OWL" for n in NS]
            body = []
            for eps in EPSILONS:
                row = ["inf" if np.isinf(eps) else f"{eps:g}"]
                diffs = []
                for n in NS:
                    pm, ps = _cell(by[(design.name, n, eps, "plug-in")][metric])
                    om, os_ = _cell(by[(design.name, n, eps, "DP-OWL")][metric])
                    fmt = ".1f" if unit else ".2f"
                    row.append(f"{pm:{fmt}} ± {ps:{fmt}} / {om:{fmt}} ± {os_:{fmt}}")
                    if metric == "agreement":
                        dm, ds = _cell(
                            by[(design.name, n, eps, "plug-in")][metric]
                            - by[(design.name, n, eps, "DP-OWL")][metric]
                        )
                        diffs.append(f"{dm:+.1f} ± {ds:.1f}")
                body.append(row + diffs)
            lines.append("")
            lines.append(f"{title}, {reps} repetitions, mean ± Monte-Carlo standard error")
            lines.append("")
            lines += table_lines(head, body, markdown)
    lines += objective_table(by, reps, markdown)
    return "\n".join(lines)


def table_lines(head, body, markdown):
    """The lines of a table with the column titles ``head`` and the rows ``body`` (strings):
    Markdown, or plain text with right-aligned columns."""
    if markdown:
        return [
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
            *("| " + " | ".join(r) + " |" for r in body),
        ]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    return ["  ".join(x.rjust(w) for x, w in zip(r, widths)) for r in [head, *body]]


def objective_table(by, reps, markdown):
    """Agreement of the three learners and objective minus output (paired), per design."""
    lines = []
    for design in DESIGNS:
        head = ["ε"] + [f"n = {n}: output / objective / plug-in" for n in NS]
        head += [f"n = {n}: objective - output" for n in NS]
        body = []
        for eps in EPSILONS:
            row, diffs = ["inf" if np.isinf(eps) else f"{eps:g}"], []
            for n in NS:
                cells = [
                    _cell(by[(design.name, n, eps, name)]["agreement"])
                    for name in ("DP-OWL", "DP-OWL objective", "plug-in")
                ]
                row.append(" / ".join(f"{m:.1f} ± {s:.1f}" for m, s in cells))
                dm, ds = _cell(
                    by[(design.name, n, eps, "DP-OWL objective")]["agreement"]
                    - by[(design.name, n, eps, "DP-OWL")]["agreement"]
                )
                diffs.append(f"{dm:+.1f} ± {ds:.1f}")
            body.append(row + diffs)
        lines += [
            "",
            f"{design.name}: agreement (%), DP-OWL by output and by objective perturbation and "
            f"the plug-in rule, {reps} repetitions, mean ± Monte-Carlo standard error",
            "",
        ]
        lines += table_lines(head, body, markdown)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    by, refs = study(args.reps, args.seed)
    print(tables(by, refs, args.reps, args.markdown))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
