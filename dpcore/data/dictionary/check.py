"""Checking a data dictionary as a whole, alone or against its trial file (``dpcore dictionary check``).

:func:`check_dictionary` lists every problem at once: what the reader found (bad entries,
each with its fix), what the JSON Schema finds (when :mod:`jsonschema` is installed; the
reader's own checks cover the same ground without it), what a private release still needs
(outcome bounds, direction, the design, bounds of every numeric covariate, the treated arm),
and, given the CSV file, whether the file's columns and cells fit the dictionary. The file's
cells are data: the notes about them are for the analyst who holds the file, never for a
download or a shared link.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

import numpy as np

from ..cells import parse_numbers
from ..csv_io import read_cells
from ..errors import TrialDataError, name_list, quote
from ..labels import label_key
from ..trial import read_arms_trial, read_trial
from .model import Dictionary
from .problems import DictionaryError, Problem
from .read import dictionary_text, read_dictionary

__all__ = ["check_dictionary", "release_problems", "schema", "schema_problems"]


#: Above this share of a column's cells outside its public levels, ``check --data`` reports a
#: problem (the levels are misspelled), not a note (a few stray cells).
LEVEL_TYPO_SHARE = 0.05


def schema() -> dict:
    """The JSON Schema of the dictionary's JSON form (shipped as ``dictionary.schema.json``)."""
    text = resources.files("dpcore.data").joinpath("dictionary.schema.json").read_text("utf-8")
    return json.loads(text)


def schema_problems(data: Any) -> list[Problem]:
    """The JSON Schema's findings for a parsed JSON dictionary; [] without :mod:`jsonschema`.

    The reader checks everything the schema does (and more), so the core needs no
    jsonschema; with it installed, a finding is also reported with its JSON path.
    """
    if not isinstance(data, dict) or ("fields" in data and "columns" not in data):
        return []  # a Frictionless Table Schema has its own schema
    try:
        import jsonschema
    except ImportError:
        return []
    validator = jsonschema.Draft202012Validator(schema())
    out = []
    for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
        path = "/".join(str(p) for p in err.path) or "dictionary"
        out.append(
            Problem(
                f"schema: {path}",
                str(err.validator),
                err.message[:200],
                "see docs/dictionary.md for this key",
            )
        )
    return out


def release_problems(d: Dictionary) -> list[Problem]:
    """What a private release still needs from the dictionary, each with its fix."""
    out = []
    if d.treatment is None:
        out.append(
            Problem(
                "dictionary",
                "treatment",
                "no column is the treatment",
                'name it: "treatment": "<column>"',
            )
        )
    else:
        levels = d.column(d.treatment).levels
        if not levels:
            out.append(
                Problem(
                    f"column {quote(d.treatment)}",
                    "levels",
                    "the two arms are not listed, so they would be read off the data",
                    "list them, e.g. levels drug|placebo",
                )
            )
        elif len(levels) > 2:  # K arms: two are chosen per release, or a rule over all K
            if d.arm_probabilities is None:
                out.append(
                    Problem(
                        "dictionary",
                        "arm_probabilities",
                        f"the design's probability of each of the {len(levels)} arms is not given",
                        "write arm_probabilities, one per arm in the levels' order, "
                        "e.g. 0.25 each for 1:1:1:1 (or randomization 1:1:1:1)",
                    )
                )
        elif d.treated is None:
            out.append(
                Problem(
                    "dictionary",
                    "treated",
                    "the treated arm is not named",
                    f"name it: treated = {quote(levels[0])} or {quote(levels[1])}",
                )
            )
    if d.outcome is None:
        out.append(
            Problem(
                "dictionary",
                "outcome",
                "no column is the outcome",
                'name it: "outcome": "<column>"',
            )
        )
    elif d.outcome_bounds is None:
        out.append(
            Problem(
                f"column {quote(d.outcome)}",
                "bounds",
                "the outcome has no public bounds",
                "give its range from the protocol, e.g. outcome_bounds [0, 30]",
            )
        )
    if d.larger_is_better is None:
        out.append(
            Problem(
                "dictionary",
                "larger_is_better",
                "the outcome's direction is not given",
                "write larger_is_better = true (larger is better) or false",
            )
        )
    if d.arms is not None and len(d.arms) > 2:
        pass  # the design is arm_probabilities, checked above
    elif d.propensity is None and d.propensity_column is None:
        out.append(
            Problem(
                "dictionary",
                "propensity",
                "the design's P(treated) is not given",
                "write propensity = 0.5 (1:1), 0.6667 (2:1), or name a propensity column",
            )
        )
    elif d.propensity_column is not None and d.min_propensity is None:
        out.append(
            Problem(
                "dictionary",
                "min_propensity",
                "a per-row propensity needs a public lower bound for the weight bound",
                "write min_propensity, e.g. 0.1",
            )
        )
    for name in d.missing_bounds:
        if name != d.outcome:
            out.append(
                Problem(
                    f"column {quote(name)}",
                    "bounds",
                    "a numeric covariate has no public bounds",
                    "give its natural range, e.g. lower 18, upper 90 (or role ignore)",
                )
            )
    return out


def check_dictionary(
    dictionary: Any, data: Any = None, *, encoding: str = "utf-8", release: bool = True
) -> tuple[Dictionary | None, list[Problem], list[str]]:
    """Every problem of a dictionary (and of its trial file), at once.

    Parameters
    ----------
    dictionary : path, bytes, text, dict or Dictionary
    data : path, bytes or file object, optional
        The trial CSV: its columns are matched with the dictionary's and read with it.
    encoding : str
        The trial file's encoding.
    release : bool
        Also list what a private release still needs (:func:`release_problems`).

    Returns
    -------
    (dictionary, problems, notes)
        The dictionary of the valid parts (None when nothing could be read), every problem,
        and notes about the file's cells (counts only; for the analyst).
    """
    problems: list[Problem] = []
    raw = _json_of(dictionary)
    if raw is not None:
        problems += schema_problems(raw)
    try:
        d = read_dictionary(dictionary if raw is None else raw, strict=False)
    except DictionaryError as exc:
        return None, problems + list(exc.problems), []
    problems += list(d.problems)
    if release:
        problems += release_problems(d)
    notes: list[str] = []
    if data is not None:
        problems += _data_problems(d, data, encoding, notes)
    return d, _unique(problems), notes


def _json_of(source):
    if isinstance(source, dict):
        return source
    if isinstance(source, Dictionary):
        return None
    try:
        text = dictionary_text(source)
    except (DictionaryError, TypeError):
        return None
    if not text.lstrip().startswith("{"):
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _data_problems(d, data, encoding, notes):
    out = []
    try:
        table = read_cells(data, encoding=encoding, missing_values=d.missing_values)
    except TrialDataError as exc:
        return [Problem("data", "file", str(exc), "")]
    absent = [
        c.name
        for c in d.columns
        if c.name not in table.cells and c.role not in ("ignore", "identifier")
    ]
    for name in absent:
        out.append(
            Problem(
                f"column {quote(name)}",
                "name",
                "the trial file has no such column",
                f"rename it to one of the file's columns ({name_list(table.header, 8)}) "
                "or give it role ignore",
            )
        )
    extra = [c for c in table.header if not any(col.name == c for col in d.columns)]
    if extra:
        notes.append(
            f"the file's columns {name_list(extra, 8)} are not in the dictionary "
            "(they are not used)"
        )
    for c in d.columns:
        if c.name not in table.cells:
            continue
        cells = table.cells[c.name]
        missing = sum(v is None for v in cells)
        labelled = c.role == "outcome" and c.type == "binary" and c.levels
        if c.levels and (c.role in ("treatment", "covariate") or labelled):
            keys = {label_key(v) for v in c.levels}
            outside = sum(v is not None and label_key(v) not in keys for v in cells)
            present = sum(v is not None for v in cells)
            if present and outside > LEVEL_TYPO_SHARE * present:
                # Not a stray cell: the levels are spelled otherwise than the file writes them
                # (a release would read every such cell as the baseline or as missing).
                seen = sorted(
                    {str(v).strip() for v in cells if v is not None and label_key(v) not in keys}
                )
                out.append(
                    Problem(
                        f"column {quote(c.name)}",
                        "levels",
                        f"{outside} of {present} cells match none of the levels "
                        f"{name_list(list(c.levels), 8)}",
                        "spell the levels as the file writes them (it also has "
                        f"{name_list(seen, 6)}), or list the missing ones",
                    )
                )
            elif outside:
                what = "the baseline level" if c.role == "covariate" else "missing (weight 0)"
                notes.append(
                    f"{quote(c.name)}: {outside} cell(s) match none of the levels; they read as {what}"
                )
        elif c.role in ("covariate", "outcome", "propensity") and c.type in ("numeric", "binary"):
            num = parse_numbers(cells, table.decimal, words=c.type == "binary")
            bad = int((~np.isfinite(num)).sum()) - missing
            if bad:
                notes.append(
                    f"{quote(c.name)}: {bad} cell(s) are not numbers; they read as missing"
                )
            b = c.public_bounds
            if b is not None and np.isfinite(num).any():
                clipped = int(((num < b[0]) | (num > b[1])).sum())
                if clipped:
                    notes.append(
                        f"{quote(c.name)}: {clipped} value(s) lie outside the bounds "
                        f"[{b[0]:g}, {b[1]:g}] and will be clipped"
                    )
            if c.role == "propensity" and d.propensity is not None and np.isfinite(num).any():
                differ = np.isfinite(num) & (np.abs(num - d.propensity) > 1e-9)
                if differ.any():
                    i = int(np.argmax(differ))
                    out.append(
                        Problem(
                            f"column {quote(c.name)}",
                            "propensity",
                            f"the randomization probability {d.propensity:g} and the "
                            f"column's {num[i]:g} in data row {i + 1} disagree",
                            "remove the probability to use the column per row, or fix the column",
                        )
                    )
        if missing:
            notes.append(f"{quote(c.name)}: {missing} missing cell(s)")
    if d.treatment and d.outcome and not absent:
        try:
            if d.arms is not None and len(d.arms) > 2:  # every arm read, as a K-arm rule does
                read_arms_trial(data, dictionary=d, unknown_levels="baseline", encoding=encoding)
            else:
                read_trial(
                    data,
                    dictionary=d,
                    incomplete="keep",
                    unknown_levels="baseline",
                    encoding=encoding,
                )
        except TrialDataError as exc:
            out.append(Problem("data", "read_trial", str(exc), ""))
    return out


def _unique(problems):
    out: list[Problem] = []
    for p in problems:
        if p not in out:
            out.append(p)
    return out


def main(
    dictionary: str,
    data: str | None = None,
    *,
    encoding: str = "utf-8",
    write: Callable[[str], Any] = print,
) -> int:
    """``dpcore dictionary check``: print every problem (and notes); 1 if any problem, else 0."""
    from pathlib import Path

    d, problems, notes = check_dictionary(
        Path(dictionary), None if data is None else Path(data), encoding=encoding
    )
    for i, p in enumerate(problems, 1):
        write(f"problem {i}: {p}")
    for n in notes:
        write(f"note: {n}")
    if problems:
        write(f"{len(problems)} problem(s) in {dictionary}" + (f" with {data}" if data else ""))
        return 1
    cols = len(d.columns) if d is not None else 0
    arms = d.arms if d is not None else None
    which = (
        f"{len(arms)} arms {name_list(arms)}"
        if arms and len(arms) > 2
        else f"treated {quote(d.treated)}"
        if d is not None
        else ""
    )
    write(
        f"ok: {dictionary} describes {cols} column(s); treatment {quote(d.treatment)}, {which}, "
        f"outcome {quote(d.outcome)}"
        if d is not None
        else "ok"
    )
    return 0
