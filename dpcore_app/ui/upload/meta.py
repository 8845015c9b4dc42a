"""The public metadata table of the "Your data" page: one row per column the rule uses.

Columns (column, type, lower, upper, levels, unit): a numeric covariate needs public bounds, a
categorical one its public levels (baseline first), the outcome its bounds. The analyst types
them, or fills them from a data dictionary; filling them from the data is allowed only with the
release titled NOT PRIVATE (docs/architecture.md, privacy rules 2 and 8). Plain values only: the
page keeps the table in ``st.session_state`` and shows it in one ``st.data_editor``, so a rerun
costs the same whatever the file's width.

Provenance is kept per entry, not per button: each row's ``origin`` says where its lower and
upper bound and its levels came from (``typed``, ``dictionary`` or ``data``). An entry keeps
its origin until the analyst types a different value over it, so filling the table from the
data and then from a dictionary that does not describe every column leaves the undescribed
columns' data ranges marked as such, and the release NOT PRIVATE (:attr:`Meta.from_data`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

COLUMNS = ("column", "type", "lower", "upper", "levels", "unit", "from", "problem")
#: The entries whose origin is kept, and the words the table shows for each origin.
FIELDS = ("lower", "upper", "levels")
ORIGINS = ("typed", "dictionary", "data")
TYPES = ("numeric", "binary", "categorical", "outcome")
#: One row of the table as the page keeps it: ``{type, lower, upper, levels, unit, origin}``.
Row = dict[str, Any]


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
    from_data : tuple of str
        The columns whose bounds or levels in use were read off the data: any one makes the
        release NOT PRIVATE.
    binary : tuple of str
        The binary covariates read as 0/1 with their words (yes/no, y/n, true/false, each
        cell on its own); a binary column given two levels is categorical instead.
    """

    categorical: dict
    bounds: dict
    outcome_bounds: tuple | None
    problems: tuple
    levels_ready: bool = True
    from_data: tuple = ()
    binary: tuple = ()

    @property
    def complete(self) -> bool:
        return not self.problems


def empty_row(kind: str = "numeric") -> Row:
    return {
        "type": kind,
        "lower": math.nan,
        "upper": math.nan,
        "levels": "",
        "unit": "",
        "origin": {},
    }


def _origin_words(origin):
    """What the table's "from" column says of a row's origins."""
    got = [o for o in ORIGINS if o in origin.values()]
    return " + ".join("data (not private)" if o == "data" else o for o in got)


def table(
    covariates: Sequence[str],
    outcome: str,
    rows: Mapping[str, Row],
    guessed_categorical: Collection[str] = (),
    dictionary_problems: Mapping[str, Sequence[str]] | None = None,
) -> pd.DataFrame:
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
    dictionary_problems : mapping, optional
        ``{column: [sentence, ...]}``: the uploaded dictionary's invalid entries for a column
        (left out of the table), shown in the row's "problem" cell with what the row itself
        still lacks.
    """
    out = []
    for c in covariates:
        kind = "categorical" if c in guessed_categorical else "numeric"
        entry = {**empty_row(kind), **rows.get(c, {})}
        if entry["type"] == "outcome":
            entry["type"] = kind
        out.append({"column": c, **entry})
    out.append({"column": outcome, **{**empty_row(), **rows.get(outcome, {}), "type": "outcome"}})
    for row in out:
        row["from"] = _origin_words(row.pop("origin", {}))
        row["problem"] = ""
    frame = pd.DataFrame(out, columns=list(COLUMNS))
    now = rows_of(frame, rows)
    extra = dictionary_problems or {}
    frame["problem"] = [
        "; ".join([*read(None, outcome, {name: now[name]}).problems, *extra.get(name, ())])
        for name in frame["column"]
    ]
    # A stable schema keeps the editor's edits across reruns.
    return frame.astype(
        {
            "column": str,
            "type": str,
            "lower": float,
            "upper": float,
            "levels": str,
            "unit": str,
            "from": str,
            "problem": str,
        }
    )


def with_edits(frame: pd.DataFrame, state: object) -> pd.DataFrame:
    """``frame`` with a data editor's pending edits (its session-state value) applied, so
    that a table built in the run an edit triggers already shows that edit's problems."""
    edited = (state or {}).get("edited_rows", {}) if isinstance(state, dict) else {}
    if not edited:
        return frame
    frame = frame.copy()
    for index, changes in edited.items():
        i = int(index)
        if 0 <= i < len(frame):
            for col, value in changes.items():
                if col in frame.columns and col not in ("column", "from", "problem"):
                    frame.loc[frame.index[i], col] = value
    return frame


def dictionary_problems_by_column(problems: Iterable[tuple[Any, Any]]) -> dict[str, list[str]]:
    """``{column: [sentence, ...]}`` from a dictionary's problems (``(where, text)`` pairs)
    whose place is a column (``"column 'age'"``)."""
    out: dict[str, list[str]] = {}
    for where, text in problems:
        m = re.fullmatch(r"column '(.*)'", str(where))
        if m:
            out.setdefault(m.group(1), []).append(str(text))
    return out


def rows_of(frame: pd.DataFrame, before: Mapping[str, Row] | None = None) -> dict[str, Row]:
    """The table back as ``{column: {type, lower, upper, levels, unit, origin}}``.

    ``before`` holds the rows as they were (with their origins): an entry equal to its earlier
    value keeps its origin, a changed one was typed, an emptied one has none.
    """
    before = before or {}
    rows = {}
    for rec in frame.to_dict("records"):
        name = str(rec["column"])
        row = {
            "type": rec["type"] if rec["type"] in TYPES else "numeric",
            "lower": _number(rec["lower"]),
            "upper": _number(rec["upper"]),
            "levels": "" if _blank(rec["levels"]) else str(rec["levels"]),
            "unit": "" if _blank(rec["unit"]) else str(rec["unit"]),
        }
        old = before.get(name, {})
        origin = {}
        for field in FIELDS:
            if row[field] is None or row[field] == "":
                continue
            same = row[field] == old.get(field)
            origin[field] = old.get("origin", {}).get(field, "typed") if same else "typed"
        rows[name] = {**row, "origin": origin}
    return rows


def parse_levels(text: object) -> tuple[str, ...]:
    """Levels typed as ``A, B, C`` or ``A | B | C`` (baseline first): a tuple of stripped strings.

    With a ``|`` anywhere the text is split on ``|`` only, so a level that holds a comma
    (``drug, 10 mg | placebo``) stays whole.
    """
    text = str(text)
    sep = "|" if "|" in text else ","
    return tuple(v.strip() for v in text.split(sep) if v.strip())


def join_levels(levels: Iterable[object]) -> str:
    """Levels as one cell that :func:`parse_levels` reads back whole (``|`` if one has a comma)."""
    labels = [str(v) for v in levels]
    return (" | " if any("," in v or "|" in v for v in labels) else ", ").join(labels)


def read(frame: pd.DataFrame | None, outcome: str, rows: Mapping[str, Row] | None = None) -> Meta:
    """The table as a :class:`Meta` (categorical levels, bounds, what is still missing).

    ``rows`` are the rows with their origins (:func:`rows_of` with the earlier rows); without
    them every entry of ``frame`` counts as typed.
    """
    categorical: dict[str, tuple[str, ...]] = {}
    bounds: dict[str, tuple[float, float]] = {}
    problems: list[str] = []
    outcome_bounds, levels_ready = None, True
    binary = []
    if rows is None:
        if frame is None:
            raise TypeError("read() needs the table or its rows")
        rows = rows_of(frame)
    for name, row in rows.items():
        if name == outcome:
            outcome_bounds = _bounds(name, row, problems)
        elif row["type"] == "categorical":
            levels = parse_levels(row["levels"])
            if not levels:
                levels_ready = False
                problems.append(
                    f"type the public levels of {name!r} (comma-separated, baseline first)"
                )
            elif len(set(levels)) < len(levels):
                levels_ready = False
                problems.append(f"the levels of {name!r} name a level more than once")
            else:
                categorical[name] = levels
        elif row["type"] == "outcome":
            problems.append(f"{name!r} is a covariate: its type is numeric or categorical")
        elif row["type"] == "binary":
            two = parse_levels(row.get("levels") or "")
            if len(two) == 2:  # written as two labels (No/Yes): 0 is the first, the baseline
                categorical[name] = two
            else:
                bounds[name] = (0.0, 1.0)  # 0/1 by definition: one click, no bounds to type
                binary.append(name)
        else:
            got = _bounds(name, row, problems)
            if got is not None:
                bounds[name] = got
    return Meta(
        categorical,
        bounds,
        outcome_bounds,
        tuple(problems),
        levels_ready,
        _read_from_data(rows, outcome),
        tuple(binary),
    )


def _read_from_data(rows, outcome):
    """The columns whose entries in use (bounds, or a categorical column's levels) came from
    the data."""
    out = []
    for name, row in rows.items():
        kind = "outcome" if name == outcome else row["type"]
        used = {"categorical": ("levels",), "binary": ()}.get(kind, ("lower", "upper"))
        if any(row.get("origin", {}).get(f) == "data" for f in used):
            out.append(name)
    return tuple(out)


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


def from_dictionary(dictionary: Mapping[str, Any], names: Iterable[str]) -> dict[str, Row]:
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
        row.update(
            lower=_number(lo),
            upper=_number(hi),
            unit=str(e.get("unit", "")),
            levels=join_levels(e.get("levels", ())),
        )
        row["origin"] = {f: "dictionary" for f in FIELDS if row[f] not in (None, "")}
        rows[name] = row
    return rows


def from_data(
    rows: Mapping[str, Row],
    ranges: Mapping[str, tuple[float, float]],
    levels: Mapping[str, Iterable[object]],
) -> dict[str, Row]:
    """``rows`` with bounds from the data's ranges and levels from the data's values.

    Reading either off the data voids the guarantee: the page titles the release NOT PRIVATE.
    """
    out = {name: {**row, "origin": dict(row.get("origin", {}))} for name, row in rows.items()}
    for name, (lo, hi) in ranges.items():
        row = out.setdefault(name, empty_row())
        row.update(lower=lo, upper=hi if hi > lo else lo + 1.0)
        row["origin"].update(lower="data", upper="data")
    for name, values in levels.items():
        row = out.setdefault(name, empty_row("categorical"))
        row.update(levels=join_levels(values))
        row["origin"]["levels"] = "data"
    return out
