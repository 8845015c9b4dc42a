"""The preview's forecast against what releases achieve on the real demo trials. A finding, not a test.

    python benchmarks/preview_calibration.py [--releases 100]

For the ACTG 175 demo (two of its four arms) and the hospital demo, with their dictionaries'
public bounds and design, the release the page makes by default (the paper's γ scaled by W,
fitted on the public 80% split), at five ε: the preview's forecast of the agreement between
the private and the non-private rule (the twin with moderate effects, with the weak–strong
range, on the fit part's size) against the agreement achieved on the real trial (the mean
over ``--releases`` releases of the private rule's agreement with the non-private rule at the
same γ, over all the trial's patients). It reads the real data, so its output is an
analyst's finding about the demo files, not something the page shows.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages

from dpcore import DPOWL, ClippingWarning, read_dictionary, read_trial  # noqa: E402
from dpcore.owl.evaluation_fit import public_split  # noqa: E402
from dpcore.owl.owl import default_weight_bound  # noqa: E402
from dpcore.owl.paper import default_gamma  # noqa: E402
from dpcore.owl.simulate import TwinDesign  # noqa: E402
from dpcore.release.preview import preview  # noqa: E402

DEMOS = ("actg175_trial", "hospital_trial")
EPSILONS = (0.5, 1.0, 2.0, 5.0, 10.0)


def calibrate(name, releases):
    d = read_dictionary(ROOT / "dpcore_app" / "demo_data" / f"{name}.json")
    trial = read_trial(ROOT / "dpcore_app" / "demo_data" / f"{name}.csv", **d.read_trial_kwargs())
    lower, upper = trial.feature_bounds(d.bounds)
    p = d.known_propensity if d.known_propensity is not None else 0.5
    W = default_weight_bound(d.outcome_bounds, min(p, 1 - p))
    fit_rows, _ = public_split(trial.n, 0.8)
    X, A = trial.X[fit_rows], trial.A[fit_rows]
    B = trial.outcomes_for_fit(d.outcome_bounds, d.larger_is_better)[fit_rows]
    binary = tuple(
        bool(np.isin(np.unique(trial.X[:, j][~np.isnan(trial.X[:, j])]), (0, 1)).all())
        for j in range(trial.X.shape[1])
    )
    design = TwinDesign(
        n=len(fit_rows),
        lower=tuple(lower),
        upper=tuple(upper),
        outcome_bounds=tuple(d.outcome_bounds),
        larger_is_better=d.larger_is_better,
        propensity=p,
        binary=binary,
    )
    gammas = [default_gamma(e, len(fit_rows), W) for e in EPSILONS]
    forecast = preview(design, EPSILONS, gamma=gammas, weight_bound=W)
    kw = dict(
        weight_bound=W,
        feature_bounds=(lower, upper),
        outcome_bounds=d.outcome_bounds,
        larger_is_better=d.larger_is_better,
    )
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)
        for eps, gamma in zip(EPSILONS, gammas):
            exact = DPOWL(epsilon=math.inf, gamma=gamma, **kw).fit(X, A, B, p, treated=1.0)
            ref = exact.predict(trial.X)
            agree = [
                np.mean(
                    DPOWL(epsilon=eps, gamma=gamma, rng=k, **kw)
                    .fit(X, A, B, p, treated=1.0)
                    .predict(trial.X)
                    == ref
                )
                for k in range(releases)
            ]
            f = forecast[forecast.epsilon == eps].set_index("strength").agreement_mean
            rows.append(
                (
                    eps,
                    gamma,
                    f["moderate"],
                    f["weak"],
                    f["strong"],
                    100 * np.mean(agree),
                    100 * np.quantile(agree, 0.025),
                    100 * np.quantile(agree, 0.975),
                )
            )
    return trial, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=100)
    args = parser.parse_args()
    for name in DEMOS:
        trial, rows = calibrate(name, args.releases)
        print(f"\n## {name} (n = {trial.n}, fitted on the public 80%)\n")
        print("| ε | γ | forecast, moderate (weak–strong) | achieved mean (95% of releases) |")
        print("|---|---|---|---|")
        for eps, gamma, mod, weak, strong, got, lo, hi in rows:
            low, high = sorted((weak, strong))
            print(
                f"| {eps:g} | {gamma:.4g} | {mod:.0f}% ({low:.0f}–{high:.0f}%) | "
                f"{got:.1f}% ({lo:.0f}–{hi:.0f}%) |"
            )


if __name__ == "__main__":
    main()
