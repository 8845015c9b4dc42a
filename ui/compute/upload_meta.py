"""The public metadata table of the "Your data" page: one row per column the rule uses.

Columns (column, type, lower, upper, levels, unit): a numeric covariate needs public bounds, a
categorical one its public levels (baseline first), the outcome its bounds. The analyst types
them, or fills them from a data dictionary; filling them from the data is allowed only with the
release titled NOT PRIVATE (ARCHITECTURE.md, privacy rules 2 and 8). Plain values only: the
page keeps the table in ``st.session_state`` and shows it in one ``st.data_editor``, so a rerun
costs the same whatever the file's width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

COLUMNS = ("column", "type", "lower", "upper", "levels", "unit")
TYPES = ("numeric", "binary", "categorical", "outcome")
#: With more candidate covariates than this, none is pre-selected (the analyst picks).
WIDE = 20


@dataclass(frozen=True)
class Meta:
    """The table read back: what ``read_trial`` and the release need, and what is missing.

    Attributes
    ----------
    categorical : dict
        ``{column: levels}`` for the categorical covariates (levels as typed, baseline first).
    bounds : dict
        ``{column: (lower, upper)}`` for the numeric covariates that have valid bounds.
    outcome_bounds : (lower, upper) or None
    problems : tuple of str
        Plain-text sentences saying what is still missing or invalid; empty when complete.
    levels_ready : bool
        Every categorical covariate has valid public levels, so the trial can be read.
    """

    categorical: dict
    bounds: dict
    outcome_bounds: tuple | None
    problems: tuple
    levels_ready: bool = True

    @property
    def complete(self):
        return not self.problems


def empty_row(kind="numeric"):
    return {"type": kind, "lower": math.nan, "upper": math.nan, "levels": "", "unit": ""}


def table(covariates, outcome, rows, guessed_categorical=()):
    """The editor's table for these covariates and outcome; ``rows`` holds what was entered.

    Parameters
    ----------
    covariates : sequence of str
    outcome : str
    rows : mapping
        ``{column: {type, lower, upper, levels, unit}}`` kept from earlier runs (typed,
        or filled from a dictionary); a column without an entry starts empty.
    guessed_categorical : collection of str
        Columns whose type starts as categorical (from their names and the preview).
    """
    out = []
    for c in covariates:
        kind = "categorical" if c in guessed_categorical else "numeric"
        entry = {**empty_row(kind), **rows.get(c, {})}
        if entry["type"] == "outcome":
            entry["type"] = kind
        out.append({"column": c, **entry})
    out.append({"column": outcome, **{**empty_row(), **rows.get(outcome, {}), "type": "outcome"}})
    frame = pd.DataFrame(out, columns=list(COLUMNS))
    # A stable schema keeps the editor's edits across reruns.
    return frame.astype({"column": str, "type": str, "lower": float, "upper": float,
                         "levels": str, "unit": str})


def rows_of(frame):
    """The table back as ``{column: {type, lower, upper, levels, unit}}`` (to keep edits)."""
    rows = {}
    for rec in frame.to_dict("records"):
        rows[str(rec["column"])] = {
            "type": rec["type"] if rec["type"] in TYPES else "numeric",
            "lower": _number(rec["lower"]), "upper": _number(rec["upper"]),
            "levels": "" if _blank(rec["levels"]) else str(rec["levels"]),
            "unit": "" if _blank(rec["unit"]) else str(rec["unit"])}
    return rows


def parse_levels(text):
    """Levels typed as ``A, B, C`` or ``A | B | C`` (baseline first): a tuple of stripped strings.

    With a ``|`` anywhere the text is split on ``|`` only, so a level that holds a comma
    (``drug, 10 mg | placebo``) stays whole.
    """
    text = str(text)
    sep = "|" if "|" in text else ","
    return tuple(v.strip() for v in text.split(sep) if v.strip())


def join_levels(levels):
    """Levels as one cell that :func:`parse_levels` reads back whole (``|`` if one has a comma)."""
    levels = [str(v) for v in levels]
    return (" | " if any("," in v or "|" in v for v in levels) else ", ").join(levels)


def dictionary_arms(dictionary, treatment):
    """``(arms, treated)`` from a public dictionary (a dict) for this treatment column, or None.

    The arms are the dictionary's own two labels, treated first when it names the treated
    one (``treated`` is None otherwise); never the data's values.
    """
    if not dictionary or treatment is None:
        return None
    from dpcore.data import read_dictionary

    d = read_dictionary(dictionary, strict=False)
    if d.treatment != treatment:
        return None
    levels = d.column(treatment).levels
    if not levels or len(levels) != 2:
        return None
    return tuple(levels), d.treated


def read(frame, outcome):
    """The table as a :class:`Meta` (categorical levels, bounds, what is still missing)."""
    categorical, bounds, problems, outcome_bounds, levels_ready = {}, {}, [], None, True
    for name, row in rows_of(frame).items():
        if name == outcome:
            outcome_bounds = _bounds(name, row, problems)
        elif row["type"] == "categorical":
            levels = parse_levels(row["levels"])
            if not levels:
                levels_ready = False
                problems.append(f"type the public levels of {name!r} (comma-separated, "
                                "baseline first)")
            elif len(set(levels)) < len(levels):
                levels_ready = False
                problems.append(f"the levels of {name!r} name a level more than once")
            else:
                categorical[name] = levels
        elif row["type"] == "outcome":
            problems.append(f"{name!r} is a covariate: its type is numeric or categorical")
        elif row["type"] == "binary":
            bounds[name] = (0.0, 1.0)  # 0/1 by definition: one click, no bounds to type
        else:
            got = _bounds(name, row, problems)
            if got is not None:
                bounds[name] = got
    return Meta(categorical, bounds, outcome_bounds, tuple(problems), levels_ready)


def _bounds(name, row, problems):
    lo, hi = row["lower"], row["upper"]
    if lo is None or hi is None:
        problems.append(f"enter public bounds (lower, upper) for {name!r}")
        return None
    if hi <= lo:
        problems.append(f"{name}: the upper bound must be above the lower bound")
        return None
    return float(lo), float(hi)


def _number(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _blank(v):
    return v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() in ("", "nan")


# --------------------------------------------------------------------------------------------
# Filling the table


def from_dictionary(dictionary, names):
    """Rows from a data dictionary's public entries (bounds, levels, unit) for ``names``."""
    entries = {c["name"]: c for c in dictionary.get("columns", ())}
    rows = {}
    for name in names:
        e = entries.get(name)
        if e is None:
            continue
        kind = e.get("type")
        row = empty_row(kind if kind in ("categorical", "binary") else "numeric")
        # A binary column is 0/1 by definition (a public fact, not read from the data).
        lo, hi = e.get("bounds") or ((0.0, 1.0) if e.get("type") == "binary" else (None, None))
        row.update(lower=_number(lo), upper=_number(hi), unit=str(e.get("unit", "")),
                   levels=join_levels(e.get("levels", ())))
        rows[name] = row
    return rows


def from_data(rows, ranges, levels):
    """``rows`` with bounds from the data's ranges and levels from the data's values.

    Reading either off the data voids the guarantee: the page titles the release NOT PRIVATE.
    """
    out = {name: dict(row) for name, row in rows.items()}
    for name, (lo, hi) in ranges.items():
        row = out.setdefault(name, empty_row())
        row.update(lower=lo, upper=hi if hi > lo else lo + 1.0)
    for name, values in levels.items():
        row = out.setdefault(name, empty_row("categorical"))
        row.update(levels=join_levels(values))
    return out


def default_covariates(candidates):
    """Covariates pre-selected on the mapping screen: all of a narrow file's, none of a wide one's."""
    return list(candidates) if len(candidates) <= WIDE else []
