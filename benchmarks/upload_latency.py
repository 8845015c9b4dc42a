"""Seconds from an uploaded 10^6-row, 10-column CSV to a released rule, along the page's path,
and the page's rerun after a release at 10^5 and 10^6 rows.

    python benchmarks/upload_latency.py [n]
    python benchmarks/upload_latency.py --wide [columns]

Builds the CSV in memory (never on disk, as an upload), then times the "Your data" page's own
calls outside Streamlit: the source digest (upload_source), the preview, the treated-arm
labels, read_trial (every row kept: the public n), and the release (the page's public
dictionary and plan through dpcore.release.release, which reads the file again and fits), then
the three downloads. The goal: read and fitted in under 10 s.

Then, for 10^5 and 10^6 rows (or n), the whole page in AppTest: upload, the public table
filled, the release (fit, ledger, the small downloads built), and three reruns with the release
on screen. The goal: a rerun after a release costs no more than 1.5 times the fit.

``--wide``: a 500-row file with 2,000 covariate columns (or ``columns``), every one chosen and
bounded in the page's table: a rerun before and after a release.
"""

from __future__ import annotations

import hashlib
import io
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's packages

from dpcore.data.csv_io import preview_csv  # noqa: E402
from dpcore.data.labels import column_labels  # noqa: E402
from dpcore.data.trial import read_trial  # noqa: E402
from dpcore.owl.simulate import PAPER_TRIAL  # noqa: E402
from dpcore_app.ui.upload import (
    compute,  # noqa: E402
    files,  # noqa: E402
)
from dpcore_app.ui.upload.charts import rule_effects  # noqa: E402

DESIGN = replace(PAPER_TRIAL, p=8)


def timed(label, fn, log):
    start = time.perf_counter()
    out = fn()
    log.append((label, time.perf_counter() - start))
    return out


def make_csv(n):
    s = DESIGN.sample(n, rng=0)
    df = pd.DataFrame(np.round(s["X"], 4), columns=[f"x{j + 1}" for j in range(DESIGN.p)])
    df["arm"] = np.where(s["A"] > 0, "drug", "placebo")
    df["outcome"] = np.round(s["B"], 4)
    out = io.StringIO()
    df.to_csv(out, index=False)
    return out.getvalue().encode()


def main(n=10**6):
    data = make_csv(n)
    print(f"{n}-row, 10-column CSV in memory: {len(data) / 1e6:.0f} MB")
    log = []
    src = timed("digest (upload_source)", lambda: compute.upload_source("big.csv", data), log)
    timed("preview", lambda: preview_csv(src.data), log)
    timed("arm labels", lambda: column_labels(src.data, "arm"), log)
    trial = timed(
        "read_trial",
        lambda: read_trial(
            src.data, treatment="arm", outcome="outcome", treated="drug", incomplete="keep"
        ),
        log,
    )
    release, rec = timed(
        "release (read again, private fit)", lambda: page_release(trial, data), log
    )
    timed("rule JSON", lambda: files.rule_json(release), log)
    timed("per-row CSV", lambda: files.rows_csv(release, trial, rec), log)
    timed(
        "HTML report",
        lambda: files.report_html(
            release,
            rule_effects(release.names, release.effects(), release.treated, release.control),
        ),
        log,
    )
    for label, seconds in log:
        print(f"  {label:<34} {seconds:6.2f} s")
    core = sum(s for label, s in log[:5])
    print(f"read and fitted (upload to released rule): {core:.2f} s (goal < 10 s)")


def page_release(trial, data):
    """What the page's release button does: the public dictionary and the plan of the page's
    settings, then the pipeline's release (it reads the file again) with fresh noise."""
    bounds = {f"x{j + 1}": (0.0, 1.0) for j in range(DESIGN.p)}
    settings = dict(
        bounds=bounds,
        outcome_bounds=(-12.0, 12.0),
        larger_is_better=True,
        W=compute.weight_bound((-12.0, 12.0), 0.5, 0.05),
        propensity=0.5,
        private=True,
        eps=1.0,
        gamma=75.0,
        gamma_source="benchmark",
    )
    d = compute.dictionary_from_settings(trial, bounds, (-12.0, 12.0), True, 0.5)
    made, rec = compute.make_release(data, d, compute.plan_from_settings(settings))
    return compute.Release(made), rec


def page_with(data, columns, outcome="outcome", outcome_bounds=(-12.0, 12.0), bounds=(0.0, 1.0)):
    """An AppTest session on the Your data page with ``data`` uploaded and its table filled."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=900)
    at.run()
    at.switch_page("dpcore_app/app_pages/your_data.py")
    at.run()
    at.file_uploader(key="upload").set_value(("big.csv", data, "text/csv")).run()
    digest = hashlib.sha256(data).hexdigest()[:12]
    at.multiselect(key=f"covs_{digest}").set_value(list(columns)).run()
    row = {"type": "numeric", "levels": "", "unit": ""}
    rows = {c: {**row, "lower": bounds[0], "upper": bounds[1]} for c in columns}
    rows[outcome] = {
        **row,
        "type": "outcome",
        "lower": outcome_bounds[0],
        "upper": outcome_bounds[1],
    }
    at.session_state[f"meta_rows_{digest}"] = rows
    at.session_state[f"meta_version_{digest}"] = 1
    at.run()
    return at


def median_rerun(at, reruns=3):
    times = []
    for _ in range(reruns):
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
    assert not at.exception, [e.value for e in at.exception]
    return float(np.median(times))


def rerun_after_release(n, reruns=3):
    """The page in AppTest: (fit alone, release click, median rerun with the release shown)."""
    data = make_csv(n)
    src = compute.upload_source("big.csv", data)
    trial = read_trial(
        src.data, treatment="arm", outcome="outcome", treated="drug", incomplete="keep"
    )
    bounds = {f"x{j + 1}": (0.0, 1.0) for j in range(DESIGN.p)}
    start = time.perf_counter()
    page_release(trial, data)
    fit = time.perf_counter() - start
    del trial
    at = page_with(data, bounds)
    start = time.perf_counter()
    at.button(key="release").click().run()
    release = time.perf_counter() - start
    assert not at.exception and "your_data_release" in at.session_state, [
        e.value for e in at.exception
    ]
    rerun = median_rerun(at, reruns)
    assert at.subheader[-1].value.startswith("Private treatment rule")
    return fit, release, rerun


def wide(p=2000, n=500):
    """A rerun of the page with p covariate columns, before and after a release."""
    rng = np.random.default_rng(0)
    names = [f"c{j}" for j in range(p)]
    df = pd.DataFrame(np.round(rng.random((n, p)), 3), columns=names)
    df["arm"], df["outcome"] = np.arange(n) % 2, np.round(rng.normal(size=n), 3)
    out = io.StringIO()
    df.to_csv(out, index=False)
    at = page_with(out.getvalue().encode(), names, outcome_bounds=(-5.0, 5.0))
    before = median_rerun(at)
    start = time.perf_counter()
    at.button(key="release").click().run()
    release = time.perf_counter() - start
    after = median_rerun(at)
    print(
        f"{p} covariate columns x {n} rows: rerun {before:.2f} s, release {release:.2f} s, "
        f"rerun with the release shown {after:.2f} s"
    )


def main_rerun(sizes):
    for n in sizes:
        fit, release, rerun = rerun_after_release(n)
        print(
            f"{n:>8} rows: fit {fit:5.2f} s, release click (fit, ledger, rule and report) "
            f"{release:5.2f} s, rerun with the release shown {rerun:5.2f} s "
            f"= {rerun / fit:.2f} x the fit (goal <= 1.5)"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--wide"]:
        wide(int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
    else:
        size = int(sys.argv[1]) if len(sys.argv) > 1 else None
        main(size or 10**6)
        main_rerun([size] if size else [10**5, 10**6])
