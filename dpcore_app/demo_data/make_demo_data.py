"""Regenerate the demo trial CSVs and their data dictionaries (seeded, byte-for-byte stable).

Run from the repository root:  python dpcore_app/demo_data/make_demo_data.py [output folder]
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))  # this checkout's dpcore, not an installed one

from dpcore.owl.simulate import PAPER_TRIAL  # noqa: E402

SEED_PAPER = 20240501
SEED_HOSPITAL = 20240502
SITE_SHIFT = {
    "A": 0.0,
    "B": 0.5,
    "C": -0.5,
}  # days; the same in both arms, so no effect on the rule
MISSING_SHARE = 0.02


def paper_trial(n: int = 1000, seed: int = SEED_PAPER) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The paper's design (docs/spec/dp_owl.md §7): x ~ U[0,1]^4, 1:1 randomization, larger outcome better."""
    s = PAPER_TRIAL.sample(n, rng=seed)
    df = pd.DataFrame(np.round(s["X"], 4), columns=["x1", "x2", "x3", "x4"])
    df["treatment"] = (s["A"] > 0).astype(int)
    df["outcome"] = np.round(s["B"], 4)
    dictionary = {
        "dataset": "paper_trial.csv",
        "description": (
            "Synthetic trial from the DP-wERM paper's simulation: four features uniform on [0, 1], "
            "1:1 randomization, outcome N(0.01 + 0.02 x4 + 3 A f(x), 0.5^2) with the contrast "
            "f(x) = 1 + x1 + x2 - 1.8 x3 - 2.2 x4; treating is best when f(x) > 0."
        ),
        "seed": seed,
        "treatment": "treatment",
        "treated": 1,
        "propensity": 0.5,
        "randomization": "1:1",
        "outcome": "outcome",
        "larger_is_better": True,
        "outcome_bounds": [-10.0, 10.0],
        "columns": [
            *(
                {
                    "name": f"x{j}",
                    "role": "covariate",
                    "type": "numeric",
                    "unit": "none",
                    "meaning": f"feature {j}, uniform on [0, 1] by design",
                    "bounds": [0.0, 1.0],
                }
                for j in range(1, 5)
            ),
            {
                "name": "treatment",
                "role": "treatment",
                "type": "label",
                "unit": "none",
                "meaning": "randomized arm: 1 = treated, 0 = control",
                "levels": [0, 1],
            },
            {
                "name": "outcome",
                "role": "outcome",
                "type": "numeric",
                "unit": "score",
                "meaning": "outcome score, larger is better; |3 f(x)| <= 9 plus noise, so the "
                "public bounds [-10, 10] cover it up to rare noise tails",
                "bounds": [-10.0, 10.0],
            },
        ],
    }
    return df, dictionary


def hospital_trial(n: int = 1200, seed: int = SEED_HOSPITAL) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A 2:1 trial (drug vs placebo) on the paper's contrast, outcome days in hospital.

    days = 10 - B / 2 + site shift, with B the paper's outcome, so fewer days is better and the
    optimal rule is the paper's sign(f). About 2% of rows miss one value.
    """
    rng = np.random.default_rng(seed)
    design = replace(PAPER_TRIAL, propensity=2 / 3)
    s = design.sample(n, rng=rng)
    X = s["X"]
    site = rng.choice(list(SITE_SHIFT), n, p=[0.5, 0.3, 0.2])
    days = 10.0 - 0.5 * s["B"] + np.vectorize(SITE_SHIFT.get)(site)
    df = pd.DataFrame(
        {
            "patient_id": [f"P{i + 1:04d}" for i in range(n)],
            "site": site,
            "age": np.round(40 + 40 * X[:, 0], 1),
            "biomarker": np.round(X[:, 1], 3),
            "severity": np.round(10 * X[:, 2], 2),
            "frailty": np.round(X[:, 3], 3),
            "arm": np.where(s["A"] > 0, "drug", "placebo"),
            "days_in_hospital": np.round(np.clip(days, 0.5, None), 1),
        }
    )
    holes = np.flatnonzero(rng.random(n) < MISSING_SHARE)
    cols = rng.choice(["age", "biomarker", "severity", "frailty", "days_in_hospital"], holes.size)
    df = df.astype({c: object for c in set(cols)})
    for i, c in zip(holes, cols):
        df.loc[i, c] = None
    dictionary = {
        "dataset": "hospital_trial.csv",
        "description": (
            "Synthetic 2:1 trial of a drug against placebo (P(drug) = 2/3) built on the paper's "
            "contrast: days = 10 - B/2 + site shift, B the paper's outcome; fewer days is better "
            "and giving the drug is best when f(x) = 1 + x1 + x2 - 1.8 x3 - 2.2 x4 > 0, with "
            "x1 = (age - 40)/40, x2 = biomarker, x3 = severity/10, x4 = frailty. The site shifts "
            "the stay equally in both arms. About 2% of rows miss one value (left empty)."
        ),
        "seed": seed,
        "treatment": "arm",
        "treated": "drug",
        "propensity": 2 / 3,
        "randomization": "2:1",
        "outcome": "days_in_hospital",
        "larger_is_better": False,
        "outcome_bounds": [0.0, 20.0],
        "columns": [
            {
                "name": "patient_id",
                "role": "identifier",
                "type": "label",
                "unit": "none",
                "meaning": "study number; not a covariate",
            },
            {
                "name": "site",
                "role": "covariate",
                "type": "categorical",
                "unit": "none",
                "meaning": "recruiting hospital",
                "levels": ["A", "B", "C"],
            },
            {
                "name": "age",
                "role": "covariate",
                "type": "numeric",
                "unit": "years",
                "meaning": "age at randomization (inclusion 40 to 80)",
                "bounds": [40.0, 80.0],
            },
            {
                "name": "biomarker",
                "role": "covariate",
                "type": "numeric",
                "unit": "none",
                "meaning": "normalised biomarker level",
                "bounds": [0.0, 1.0],
            },
            {
                "name": "severity",
                "role": "covariate",
                "type": "numeric",
                "unit": "points",
                "meaning": "severity score on a 0 to 10 scale",
                "bounds": [0.0, 10.0],
            },
            {
                "name": "frailty",
                "role": "covariate",
                "type": "numeric",
                "unit": "none",
                "meaning": "frailty index",
                "bounds": [0.0, 1.0],
            },
            {
                "name": "arm",
                "role": "treatment",
                "type": "label",
                "unit": "none",
                "meaning": "randomized arm, drug (treated) or placebo",
                "levels": ["drug", "placebo"],
            },
            {
                "name": "days_in_hospital",
                "role": "outcome",
                "type": "numeric",
                "unit": "days",
                "meaning": "length of hospital stay, fewer is better",
                "bounds": [0.0, 20.0],
            },
        ],
    }
    return df, dictionary


def write(out_dir: str | Path = ROOT) -> Path:
    """Write both demo trials (CSV) and their dictionaries (JSON) into ``out_dir``; returns it."""

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for df, dictionary in (paper_trial(), hospital_trial()):
        name = dictionary["dataset"]
        df.to_csv(out_dir / name, index=False, lineterminator="\n")
        text = json.dumps(dictionary, indent=2) + "\n"
        (out_dir / name.replace(".csv", ".json")).write_text(text, encoding="utf-8")
    return out_dir


if __name__ == "__main__":
    print(f"wrote demo data to {write(sys.argv[1] if len(sys.argv) > 1 else ROOT)}")
