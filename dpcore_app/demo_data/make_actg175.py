"""Extract the real ACTG 175 trial from the lifelines wheel on PyPI: two arms, and all four, with dictionaries.

Run from the repository root:

    python dpcore_app/demo_data/make_actg175.py [path/to/lifelines-0.30.3-py3-none-any.whl]

Without a path the script runs ``pip download --no-deps lifelines==0.30.3`` into a temporary
folder. It reads ``lifelines/datasets/ACTG175.csv`` from the wheel (a zip; lifelines itself is
not imported), checks its SHA-256, keeps the patients randomized to zidovudine alone or to
zidovudine plus didanosine, the baseline covariates and the CD4 count at week 20, and writes
``actg175_trial.csv`` and ``actg175_trial.json`` next to this script, byte-for-byte the same
every run. The dictionary's bounds come from the protocol (Hammer et al. 1996) or from each
variable's natural range, written down here without looking at the data. It also writes
``actg175_four_arms.csv`` and ``actg175_four_arms.json``: every one of the 2,139 patients, in
the trial's four arms (1:1:1:1), for a rule over K arms or a comparison of any two
(``docs/k_arm.md``).
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

HERE = Path(__file__).resolve().parent
WHEEL = "lifelines-0.30.3-py3-none-any.whl"
MEMBER = "lifelines/datasets/ACTG175.csv"
SHA256 = "56fba31fa0d7bfbff9667b7149fd96a97c352e72aa582871a62a935e812f0e07"
ARMS = {0: "zidovudine", 1: "zidovudine+didanosine"}  # the file's arms codes 0 and 1
# All four arms (codes 0-3 of the source's ``arms``), zidovudine (the standard) first.
ARMS4 = {0: "zidovudine", 1: "zidovudine+didanosine", 2: "zidovudine+zalcitabine", 3: "didanosine"}

# (name, type, unit, bounds or levels, meaning): public, from the protocol or natural ranges.
COVARIATES = [
    (
        "age",
        "numeric",
        "years",
        (12, 90),
        "age at baseline (the protocol enrolled patients aged 12 or more)",
    ),
    ("wtkg", "numeric", "kg", (30, 200), "weight at baseline (natural range)"),
    ("hemo", "binary", "", None, "haemophilia (1 = yes)"),
    ("homo", "binary", "", None, "homosexual activity (1 = yes)"),
    ("drugs", "binary", "", None, "history of intravenous drug use (1 = yes)"),
    (
        "karnof",
        "numeric",
        "points",
        (70, 100),
        "Karnofsky score (the protocol required at least 70; the scale ends at 100)",
    ),
    (
        "oprior",
        "binary",
        "",
        None,
        "non-zidovudine antiretroviral therapy before the trial (1 = yes)",
    ),
    ("z30", "binary", "", None, "zidovudine in the 30 days before the trial (1 = yes)"),
    (
        "preanti",
        "numeric",
        "days",
        (0, 3650),
        "days of antiretroviral therapy before the trial (capped at ten years)",
    ),
    ("race", "binary", "", None, "race (0 = white, 1 = non-white)"),
    ("gender", "binary", "", None, "gender (0 = female, 1 = male)"),
    ("str2", "binary", "", None, "antiretroviral history (0 = naive, 1 = experienced)"),
    (
        "strat",
        "categorical",
        "",
        [1, 2, 3],
        "antiretroviral history stratum: 1 naive, 2 more than 1 and at most 52 weeks, 3 more than 52 weeks",
    ),
    ("symptom", "binary", "", None, "symptomatic HIV infection (1 = yes)"),
    (
        "cd40",
        "numeric",
        "cells/mm3",
        (0, 1500),
        "CD4 count at baseline (the protocol required 200 to 500 at screening; higher counts are clipped)",
    ),
    (
        "cd80",
        "numeric",
        "cells/mm3",
        (0, 5000),
        "CD8 count at baseline (natural range; higher counts are clipped)",
    ),
]
OUTCOME = (
    "cd420",
    "cells/mm3",
    (0, 1500),
    "CD4 count at 20 (plus or minus 5) weeks; larger is better",
)


def wheel_bytes(path: str | Path | None = None) -> bytes:
    """The lifelines wheel's bytes: from ``path``, or downloaded with pip when None."""
    if path is None:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "-q",
                    "lifelines==0.30.3",
                    "-d",
                    tmp,
                ],
                check=True,
            )
            return (Path(tmp) / WHEEL).read_bytes()
    return Path(path).read_bytes()


def extract(wheel: bytes, arms: Mapping[int, str] = ARMS) -> pd.DataFrame:
    """The patients of ``arms`` (the source's arm codes and their names) in the wheel's
    ACTG 175 file, after checking its SHA-256: identifier, covariates, arm and outcome."""
    raw = zipfile.ZipFile(io.BytesIO(wheel)).read(MEMBER)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"{MEMBER} has SHA-256 {digest}, expected {SHA256}: another release?")
    df = pd.read_csv(io.BytesIO(raw))
    df = df[df["arms"].isin(list(arms))]
    out = pd.DataFrame({"patient": df["pidnum"].astype(int)})
    for name, *_ in COVARIATES:
        out[name] = df[name]
    out["arm"] = df["arms"].map(arms)
    out[OUTCOME[0]] = df[OUTCOME[0]].astype(int)
    return out.reset_index(drop=True)


def dictionary(n: int) -> dict[str, Any]:
    """The two-arm trial's data dictionary, for its ``n`` patients."""
    columns: list[dict[str, Any]] = [
        {
            "name": "patient",
            "role": "identifier",
            "type": "label",
            "meaning": "patient number in the trial; not a covariate",
        }
    ]
    for name, kind, unit, spec, meaning in COVARIATES:
        entry: dict[str, Any] = {
            "name": name,
            "role": "covariate",
            "type": kind,
            "meaning": meaning,
        }
        if unit:
            entry["unit"] = unit
        if kind == "numeric":
            assert isinstance(spec, tuple)  # a numeric covariate's spec is its bounds
            entry["bounds"] = [float(spec[0]), float(spec[1])]
        if kind == "categorical":
            entry["levels"] = spec
        columns.append(entry)
    columns.append(
        {
            "name": "arm",
            "role": "treatment",
            "type": "label",
            "levels": [ARMS[1], ARMS[0]],
            "meaning": "randomized arm: zidovudine plus didanosine (treated) or zidovudine alone",
        }
    )
    name, unit, bounds, meaning = OUTCOME
    columns.append(
        {
            "name": name,
            "role": "outcome",
            "type": "numeric",
            "unit": unit,
            "bounds": [float(b) for b in bounds],
            "meaning": meaning,
        }
    )
    return {
        "dataset": "actg175_trial.csv",
        "description": (
            f"AIDS Clinical Trials Group Study 175 (Hammer et al. 1996), the {n} "
            "patients randomized to zidovudine alone or to zidovudine plus "
            "didanosine (1:1:1:1 over four arms, so 1:1 between these two). "
            "Two of the trial's four arms are compared here. Outcome: CD4 count at "
            "week 20, a surrogate endpoint (a laboratory marker, not a clinical "
            "outcome such as progression or death). Real patients: bounds are "
            "public, from the protocol or natural ranges."
        ),
        "source": f"{MEMBER} in {WHEEL} (PyPI), SHA-256 {SHA256}",
        "treatment": "arm",
        "treated": ARMS[1],
        "propensity": 0.5,
        "randomization": "1:1",
        "outcome": name,
        "larger_is_better": True,
        "outcome_bounds": [float(b) for b in bounds],
        "columns": columns,
    }


def four_arm_dictionary(n: int) -> dict[str, Any]:
    """The four-arm trial's dictionary: the same columns, every arm, 1:1:1:1."""
    d = dictionary(n)
    for c in d["columns"]:
        if c["name"] == "arm":
            c["levels"] = list(ARMS4.values())
            c["meaning"] = (
                "randomized arm: zidovudine alone (the standard), zidovudine plus "
                "didanosine, zidovudine plus zalcitabine, or didanosine alone"
            )
    del d["treated"], d["propensity"]
    d.update(
        dataset="actg175_four_arms.csv",
        randomization="1:1:1:1",
        arm_probabilities=[0.25] * 4,
        reference=ARMS4[0],
        description=(
            f"AIDS Clinical Trials Group Study 175 (Hammer et al. 1996), all {n} "
            "patients, randomized 1:1:1:1 to zidovudine alone, zidovudine plus "
            "didanosine, zidovudine plus zalcitabine, or didanosine alone. Outcome: "
            "CD4 count at week 20, a surrogate endpoint (a laboratory marker, not a "
            "clinical outcome such as progression or death). Real patients: bounds "
            "are public, from the protocol or natural ranges."
        ),
    )
    return d


def main(argv: Sequence[str]) -> None:
    """Write both trials and their dictionaries next to this script; ``argv[1]``, if given, is
    the wheel's path."""

    wheel = wheel_bytes(argv[1] if len(argv) > 1 else None)
    for stem, arms, describe in (
        ("actg175_trial", ARMS, dictionary),
        ("actg175_four_arms", ARMS4, four_arm_dictionary),
    ):
        trial = extract(wheel, arms)
        trial.to_csv(HERE / f"{stem}.csv", index=False, lineterminator="\n")
        text = json.dumps(describe(len(trial)), indent=2, ensure_ascii=False) + "\n"
        (HERE / f"{stem}.json").write_text(text, encoding="utf-8")
        print(f"wrote {stem}.csv ({len(trial)} patients) and {stem}.json")


if __name__ == "__main__":
    main(sys.argv)
