"""The three downloads of a release: the rule as JSON, per-row recommendations as CSV, a report.

Only the release and its public settings go into them (privacy rule 7): no value estimate,
no comparison with the non-private rule, no clipped share, no solver diagnostics. The rule
file is the release's own (:meth:`dpcore.release.Release.to_dict`), written as every surface
writes it.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from dpcore.data.columns import MISSING_SUFFIX
from dpcore.data.csv_safe import FORMULA_START, neutral  # noqa: F401 - one guard for every CSV
from dpcore.owl.rule_file import write_rule
from dpcore_app.ui.upload import explain, report_parts

if TYPE_CHECKING:
    import plotly.graph_objects as go
    from numpy.typing import ArrayLike

    from dpcore.data.trial import Trial
    from dpcore.owl.evaluation_result import PrivateEvaluation
    from dpcore_app.ui.upload.release import Release


def ledger_text(release: Release) -> str:
    """The same record in words (report), or '' before it is recorded."""
    if release.ledger_index is None:
        return ""
    delta = f", δ = {release.delta_total:g}" if release.delta_total else ""
    total = (
        "∞ (no guarantee)"
        if release.epsilon_total == float("inf")
        else f"{release.epsilon_total:g}"
    )
    return (
        f"release no. {release.ledger_index} on this file; with it the file's cumulative "
        f"spend is ε = {total}{delta}"
    )


def rule_json(release: Release) -> str:
    """The rule file: the pipeline's release (``dpcore fit``, the library and the rerun script
    write the same), with the roles that differ from the public dictionary."""
    return write_rule(release.to_dict(), None)


def apply_rule(rule: Mapping[str, Any], table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The rule file's recipe, as code: recommendations for a DataFrame with the file's columns."""
    cols = []
    for c in rule["covariates"]:
        if c in rule["one_hot"]:
            col, level = c.split("=", 1)
            cols.append((table[col].astype(str).str.strip() == level).to_numpy(dtype=float))
        else:
            cols.append(pd.to_numeric(table[c]).to_numpy(dtype=float))
    x = np.clip(np.column_stack(cols), rule["lower"], rule["upper"])
    score = rule["intercept"] + x @ np.asarray(rule["coef"])
    return np.where(score > 0, rule["treated"], rule["control"]).astype(object), score


#: The per-row file's own columns; a file column of the same name is renamed, never overwritten.
OWN_COLUMNS = ("data_row", "score", "recommendation")


def _unique(name, taken):
    """A header neutralised, then made unique among the file's headers."""
    name = neutral(str(name))
    while name in taken:
        name = f"{name} (from the file)"
    taken.add(name)
    return name


def rows_csv(
    release: Release,
    trial: Trial,
    recommendations: np.ndarray,
    identifiers: Mapping[str, ArrayLike] | None = None,
) -> str:
    """Per-row recommendations: data row, ticked identifiers, covariates, score, recommendation.

    ``trial`` and ``recommendations`` are the ones captured with the release; ``identifiers``
    maps each column the analyst ticked to its values on the trial's rows. Every field is
    quoted, so a carriage return or line feed inside a cell stays in that cell; text cells and
    headers are neutralised against formula injection; numbers stay numbers. A row whose
    covariates are incomplete gets no score and no recommendation, and its covariates are
    written as missing (empty), not as the values they were read as. A NOT PRIVATE release
    says so in a first column of every row (its reasons are the report's); a recorded release
    gives its number on the file and the file's cumulative ε after it as two numbers,
    ``release_no`` and ``file_epsilon_total`` (the sentence is the report's, not every row's).
    """
    x = np.clip(trial.X, release.lower, release.upper)
    score = release.intercept + x @ np.asarray(release.coef)
    labels = np.array([neutral(release.control), neutral(release.treated)], dtype=object)
    rec = labels[(np.asarray(recommendations) > 0).astype(int)]
    scored = trial.covariates_complete
    if scored is not None:
        score = np.where(scored, score, np.nan)
        rec = np.where(scored, rec, "")
    taken = set(OWN_COLUMNS)
    columns: list[tuple[str, Any]] = (
        [] if release.private else [("NOT PRIVATE", np.full(trial.n, "NOT PRIVATE", object))]
    )
    if release.ledger_index is not None:
        total = release.epsilon_total
        columns.append(("release_no", np.full(trial.n, release.ledger_index)))
        columns.append(("file_epsilon_total", np.full(trial.n, total, dtype=float)))
    taken.update(c for c, _ in columns)
    columns.append(("data_row", trial.rows))
    for c, values in (identifiers or {}).items():
        if not pd.api.types.is_numeric_dtype(np.asarray(values).dtype):
            values = pd.Series(values, dtype=object)
            values = values.map({v: neutral(v) for v in pd.unique(values)}).to_numpy()
        columns.append((_unique(c, taken), values))
    # A row missing a covariate is read with fill values (weight 0, no score): its covariates
    # are written as missing, never as the fill.
    X = trial.X if scored is None else np.where(np.asarray(scored)[:, None], trial.X, np.nan)
    X = _filled_as_missing(X, trial)
    columns += [(_unique(c, taken), X[:, j]) for j, c in enumerate(trial.covariates)]
    columns += [("score", score), ("recommendation", rec)]
    df = pd.DataFrame(dict(enumerate(v for _, v in columns)))
    df.columns = [c for c, _ in columns]
    out = io.StringIO()
    # Shortest round-trip floats: the file reproduces the scores.
    df.to_csv(out, index=False, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    return out.getvalue()


def _filled_as_missing(X, trial):
    """The covariates with the cells a public fill-in value stood in for written as missing
    (the "<column> is missing" covariate says which)."""
    names = list(trial.covariates)
    X = np.array(X, dtype=float)
    for column in trial.fills:
        missing = X[:, names.index(column + MISSING_SUFFIX)] == 1
        own = [
            j
            for j, c in enumerate(names)
            if c == column or (column in trial.categories and c.startswith(column + "="))
        ]
        X[np.ix_(missing, own)] = np.nan
    return X


def _mechanism_rows(release):
    """The learner's own public settings, as the report's table lists them."""
    s = release.settings
    if "gamma" not in s:  # the private plug-in rule
        return {
            "Learner": s["learner"],
            "Ridge (public)": f"{s['ridge']:g}",
            "L1 sensitivity of the per-arm sums": f"{s['sensitivity_l1']:g}",
        }
    return {
        "γ (regularization)": f"{s['gamma']:.4g}, from {s['gamma_source']}",
        "W (weight bound)": f"{s['W']:.4g}",
        "C": str(s["C"]),
        "Noise scale Δ = (C + 2W)/γ": f"{s['sensitivity']:.4g}",
    }


def report_html(
    release: Release,
    figure: go.Figure,
    evaluation: PrivateEvaluation | None = None,
    preview: Mapping[str, Any] | None = None,
) -> str:
    """One self-contained page for stakeholders: the rule, the privacy statement, the chart,
    and, when there are, the private evaluation and the preview at the chosen ε.

    plotly.js is inlined, so the page opens offline; every text from the file is escaped.
    ``preview`` is a dict of :func:`report_parts.preview_html`'s arguments.
    """
    sections = ""
    if evaluation is not None:
        sections += report_parts.evaluation_html(
            evaluation, release.epsilon, release.n, (preview or {}).get("unit", "")
        )
    if preview is not None:
        sections += report_parts.preview_html(**preview)
    e = html.escape
    chart = figure.to_html(full_html=False, include_plotlyjs=True, config={"displaylogo": False})
    rows = "".join(
        f"<tr><td>{e(n)}</td><td>{c:.6g}</td><td>[{lo:g}, {hi:g}]</td></tr>"
        for n, c, lo, hi in zip(release.names, release.coef, release.lower, release.upper)
    )
    settings = {
        "ε (privacy budget)": f"{release.epsilon:g} (δ = {release.delta:g})",
        **_mechanism_rows(release),
        "Propensity": release.propensity,
        f"Outcome '{release.outcome}' bounds": f"[{release.outcome_bounds[0]:g}, "
        f"{release.outcome_bounds[1]:g}], "
        + ("larger is better" if release.larger_is_better else "smaller is better"),
        "Patients": str(release.n),
        **(
            {"Roles that differ from the data dictionary": "; ".join(release.overrides)}
            if release.overrides
            else {}
        ),
        "Privacy ledger": ledger_text(release) or "not recorded",
        "Released at (UTC)": release.time,
    }
    table = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in settings.items())
    warn = (
        ""
        if release.private
        else (
            f"<p class='warn'><b>Not private.</b> {e(release.void[0].upper() + release.void[1:])} "
            "void the differential-privacy guarantee.</p>"
        )
    )
    label = f"<p>{e(release.label)}</p>" if release.label else ""  # typed, never the file name
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(release.title())}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;
color:#222}} table{{border-collapse:collapse;margin:.5rem 0}} td,th{{border:1px solid #ccc;
padding:.2rem .5rem;text-align:left}} .warn{{background:#fde8e8;padding:.5rem}}
code{{background:#f3f3f3;padding:.1rem .3rem}}</style></head><body>
<h1>{e(release.title())}</h1>
{label}
{warn}
<h2>The rule</h2>
<p>{e(explain.rule_sentence(release))}</p>
<table><tr><th>covariate</th><th>coefficient</th><th>public bounds</th></tr>
<tr><td>intercept</td><td>{release.intercept:.6g}</td><td></td></tr>{rows}</table>
{chart}
{sections}
<h2>Privacy</h2>
<p>{e(explain.release_statement(release))}</p>
<table>{table}</table>
</body></html>"""
