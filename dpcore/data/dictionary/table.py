"""A data dictionary written as a CSV table, read into the JSON form.

One row per column: ``column, role, type, lower, upper, levels, unit`` (optional ``meaning``
and ``treated``); levels separated by ``|`` (or ``;``, or ``,`` inside a quoted cell); the
design in rows whose role is ``design``; the delimiter read from the header line.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from ..errors import name_list, quote
from .entries import EntryReader
from .problems import DictionaryError, Problem
from .vocabulary import CSV_COLUMNS, DESIGN_KEYS, KEY, parse_level, split_levels

__all__ = ["table_form"]


def table_form(reader: EntryReader, text: str) -> dict[str, Any]:
    """The JSON form of a dictionary written as a CSV table (one row per column, the design in
    rows whose role is ``design``); each bad cell is a problem collected by ``reader``."""
    lines = text.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    delimiter = max(
        (",", ";", "\t"), key=lambda d: (len(next(csv.reader([first], delimiter=d))), d == ",")
    )
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter)]
    numbered = [(k, r) for k, r in enumerate(rows, start=1) if any(c.strip() for c in r)]
    if not numbered:
        raise DictionaryError(
            [
                Problem(
                    "dictionary",
                    "",
                    "the dictionary file is empty",
                    "write a header line: " + ",".join(CSV_COLUMNS[:7]),
                )
            ]
        )
    _, head = numbered[0]
    header = [h.strip().lower() for h in head]
    header = [KEY.get(h, h) if h else "" for h in header]  # a spreadsheet's empty columns
    header = ["column" if h == "name" else h for h in header]
    need = [h for h in ("column", "role") if h not in header]
    if need:
        raise DictionaryError(
            [
                Problem(
                    "line 1",
                    "header",
                    f"the columns {name_list(need)} are missing from the first row",
                    "a CSV dictionary starts with the header " + ",".join(CSV_COLUMNS[:7]),
                )
            ]
        )
    known = set(CSV_COLUMNS) | {"lower", "upper", "treated", "value"}
    for h in header:
        if h and h not in known:
            reader.add(
                "line 1",
                quote(h),
                "unknown dictionary column",
                f"use {', '.join(CSV_COLUMNS)} (and treated), or remove it",
            )
    columns, design = [], {}
    for k, r in numbered[1:]:
        cell = {h: (r[j].strip() if j < len(r) else "") for j, h in enumerate(header)}
        name = cell.get("column", "")
        if not name:
            reader.add(
                f"line {k}",
                "column",
                "the line has no column name",
                "write the column's header in the first cell",
            )
            continue
        if cell.get("role", "").lower() == "design":
            key = name.lower()
            if key not in DESIGN_KEYS:
                reader.add(
                    f"line {k}",
                    "design",
                    f"design key {quote(name)} is unknown",
                    f"use one of {', '.join(DESIGN_KEYS)}",
                )
                continue
            design[key] = cell.get("levels", "") or cell.get("value", "")
            continue
        entry: dict[str, Any] = {
            "name": name,
            "role": cell.get("role") or None,
            "type": cell.get("type") or None,
            "unit": cell.get("unit", ""),
            "meaning": cell.get("meaning", ""),
        }
        lo, hi = cell.get("lower", ""), cell.get("upper", "")
        if lo or hi:
            entry["lower"], entry["upper"] = (
                reader.number(lo, name, "lower", k),
                reader.number(hi, name, "upper", k),
            )
            if entry["lower"] is None and entry["upper"] is None:
                del entry["lower"], entry["upper"]
        if cell.get("value"):
            entry["value"] = reader.number(cell["value"], name, "value", k)
        if cell.get("levels"):
            entry["levels"] = [parse_level(v) for v in split_levels(cell["levels"])]
        if cell.get("treated"):
            design.setdefault("treated", cell["treated"])
        columns.append(entry)
    out: dict[str, Any] = {"columns": columns}
    for key, value in design.items():
        if value == "":
            continue
        if key == "treated":
            out[key] = parse_level(value)
        elif key == "missing_values":
            out[key] = split_levels(value)
        else:
            out[key] = value
    return out
