"""Seconds to read a large trial CSV with dpcore.data.read_trial and fit one private rule.

    python benchmarks/read_trial.py [n]

Writes a 10^6-row, 10-column trial (8 features of a p = 8 paper design, arm, outcome) to a
temporary folder in two dialects: comma-separated with full float precision and 0/1 arms, and
semicolon-separated with decimal commas, 6 significant digits and drug/placebo arms. For
each it times pandas' own read_csv (the floor), read_trial, and DPOWL.fit at epsilon = 1 with
public bounds. The goal is under 10 s for reading plus fitting.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's dpcore

from dpcore import DPOWL  # noqa: E402
from dpcore.data.trial import read_trial  # noqa: E402
from dpcore.owl.simulate import PAPER_TRIAL  # noqa: E402

DESIGN = replace(PAPER_TRIAL, p=8)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def write_files(folder, n):
    s = DESIGN.sample(n, rng=0)
    df = pd.DataFrame(s["X"], columns=[f"x{j + 1}" for j in range(DESIGN.p)])
    df["arm"] = (s["A"] > 0).astype(int)
    df["outcome"] = s["B"]
    plain = folder / "trial_comma.csv"
    df.to_csv(plain, index=False)
    df["arm"] = np.where(s["A"] > 0, "drug", "placebo")
    euro = folder / "trial_semicolon.csv"
    df.to_csv(euro, index=False, sep=";", decimal=",", float_format="%.6g")
    return {
        "comma, full precision, 0/1": (plain, 1),
        "semicolon, decimal comma, drug/placebo": (euro, "drug"),
    }


def main(n=10**6):
    with tempfile.TemporaryDirectory() as tmp:
        files, seconds = timed(lambda: write_files(Path(tmp), n))
        print(f"wrote two {n}-row, 10-column CSVs in {seconds:.1f} s")
        print(f"{'file':<40} {'MB':>6} {'pandas':>7} {'read_trial':>11} {'fit':>6} {'total':>6}")
        for label, (path, treated) in files.items():
            sep = ";" if "semicolon" in label else ","
            dec = "," if "decimal comma" in label else "."
            _, t_pandas = timed(lambda p=path, s=sep, d=dec: pd.read_csv(p, sep=s, decimal=d))
            trial, t_read = timed(
                lambda p=path, t=treated: read_trial(
                    p, treatment="arm", outcome="outcome", treated=t
                )
            )
            model = DPOWL(
                epsilon=1.0,
                gamma=75.0,
                feature_bounds=DESIGN.feature_bounds,
                outcome_bounds=(-12, 12),
                rng=1,
                larger_is_better=True,
            )
            _, t_fit = timed(lambda m=model, t=trial: m.fit(t.X, t.A, t.B, propensity=0.5))
            mb = path.stat().st_size / 1e6
            print(
                f"{label:<40} {mb:>6.0f} {t_pandas:>7.2f} {t_read:>11.2f} {t_fit:>6.2f} "
                f"{t_read + t_fit:>6.2f}"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10**6)
