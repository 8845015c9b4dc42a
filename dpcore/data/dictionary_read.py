"""Reading a public data dictionary (JSON or the CSV table) into a :class:`Dictionary`.

Every malformed entry ends in a :class:`DictionaryError` naming the entry and what to change.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

from .csv_io import _duplicates, _name_list, _q
from .dictionary import (
    _DESIGN,
    CSV_COLUMNS,
    LEVEL_SEP,
    ROLES,
    TYPES,
    Column,
    Dictionary,
    DictionaryError,
    _column_dict,
    _label,
    _pair,
)

__all__ = ["read_dictionary", "trial_arguments"]


def read_dictionary(source):
    """Read a public data dictionary from JSON or CSV.

    Parameters
    ----------
    source : str, path, bytes, file object, dict or Dictionary
        A path (``.json`` or ``.csv``), the file's bytes or text, an open file (a Streamlit
        upload works), the parsed JSON as a dict, or a Dictionary (returned as it is). JSON is recognised by its leading ``{``.

    Returns
    -------
    Dictionary

    Raises
    ------
    DictionaryError
        On malformed input; the message names the entry and what to change.

    Examples
    --------
    >>> d = read_dictionary(b"column,role,type,lower,upper,levels,unit\\n"
    ...                     b"age,covariate,numeric,18,90,,years\\n"
    ...                     b"arm,treatment,label,,,drug|placebo,\\n"
    ...                     b"days,outcome,numeric,0,30,,days\\n"
    ...                     b"larger_is_better,design,,,,false,\\n")
    >>> d.treatment, d.treated, d.outcome_bounds, d.bounds, d.larger_is_better
    ('arm', 'drug', (0.0, 30.0), {'age': (18.0, 90.0)}, False)
    """
    if isinstance(source, Dictionary):
        return source
    if isinstance(source, dict):
        return _from_dict(source)
    text = _text(source)
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DictionaryError(f"the dictionary is not valid JSON: {exc.msg} at line "
                                  f"{exc.lineno}, column {exc.colno}") from None
        return _from_dict(data)
    return _from_csv(text)


def trial_arguments(dictionary, **given):
    """read_trial's column arguments, each from the dictionary unless given explicitly.

    A dictionary's categorical columns are kept only among explicitly given covariates; its
    two arms only when its treatment column is the one used.
    """
    d = read_dictionary(dictionary)
    filled = {k: v if given.get(k) is None else given[k] for k, v in d.read_trial_kwargs().items()}
    cat = filled["categorical"]
    if given.get("categorical") is None and cat and given.get("covariates") is not None:
        filled["categorical"] = {c: v for c, v in cat.items() if c in given["covariates"]} or None
    if given.get("arms") is None and filled["treatment"] != d.treatment:
        filled["arms"] = None
    return filled


def _text(source):
    if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source
                                    and source.strip().lower().endswith((".json", ".csv"))):
        try:
            raw = Path(source).read_bytes()
        except OSError as exc:
            raise DictionaryError(f"cannot open the dictionary {_q(str(source))}: "
                                  f"{exc.strerror}") from None
    elif isinstance(source, str):
        return source
    elif isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read()
        if isinstance(raw, str):
            return raw
    else:
        raise TypeError(f"source must be a path, bytes, text, a file or a dict, got "
                        f"{type(source).__name__}")
    for enc in ("utf-8-sig", "cp1252"):
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            continue
    raise DictionaryError("the dictionary is not text (UTF-8 or Windows-1252)")


def _from_dict(data):
    if not isinstance(data, dict) or not isinstance(data.get("columns"), list):
        raise DictionaryError("a JSON dictionary needs a 'columns' list of "
                              "{name, role, type, bounds, levels, unit}")
    cols = []
    for i, c in enumerate(data["columns"]):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise DictionaryError(f"columns[{i}] needs a 'name' (text)")
        unknown = set(c) - {"name", "role", "type", "unit", "meaning", "bounds", "levels"}
        if unknown:
            raise DictionaryError(f"column {_q(c['name'])} has unknown keys {_name_list(sorted(unknown))}")
        cols.append(_column(c["name"], c.get("role", "covariate"), c.get("type", "numeric"),
                            c.get("unit") or "", c.get("bounds"), c.get("levels"),
                            c.get("meaning") or ""))
    cols = _merge_design_keys(cols, data)
    design = {k: data.get(k) for k in _DESIGN if k != "larger_is_better"}
    treated = _label(design["treated"])
    cols = [_treated_first(c, treated) for c in cols]
    return Dictionary(
        columns=tuple(cols), treated=treated,
        propensity=_probability(design["propensity"], "propensity"),
        min_propensity=_probability(design["min_propensity"], "min_propensity"),
        randomization=str(design["randomization"] or ""),
        larger_is_better=_bool(data.get("larger_is_better"), "larger_is_better"),
        dataset=str(design["dataset"] or ""), description=str(design["description"] or ""),
        extra={k: v for k, v in data.items() if k not in (*_DESIGN, "columns", "treatment",
                                                          "outcome", "outcome_bounds")},
    )


def _treated_first(c, treated):
    """The treatment's levels in the order (treated, control), as Trial.arms has them."""
    if c.role != "treatment" or not c.levels or treated is None:
        return c
    return replace(c, levels=tuple(sorted(c.levels, key=lambda v: str(v) != str(treated))))


def _merge_design_keys(cols, data):
    """Top-level treatment, outcome and outcome_bounds agree with (or fill) the columns."""
    by_name = {c.name: i for i, c in enumerate(cols)}
    for role in ("treatment", "outcome"):
        name = data.get(role)
        if name is None:
            continue
        if name not in by_name:
            raise DictionaryError(f"{role} {_q(name)} is not among the dictionary's columns")
        c = cols[by_name[name]]
        if c.role != role:
            raise DictionaryError(f"{role} {_q(name)} has role {_q(c.role)} in its column entry")
    if data.get("outcome_bounds") is not None:
        name = data.get("outcome") or next((c.name for c in cols if c.role == "outcome"), None)
        if name is None:
            raise DictionaryError("outcome_bounds are given but no column is the outcome")
        top = _pair(data["outcome_bounds"], "outcome_bounds")
        c = cols[by_name[name]]
        if c.bounds is not None and c.bounds != top:
            raise DictionaryError(f"outcome_bounds {list(top)} differ from the bounds "
                                  f"{list(c.bounds)} of column {_q(name)}")
        cols[by_name[name]] = replace(c, bounds=top)
    return cols


def _from_csv(text):
    rows = [r for r in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in r)]
    if not rows:
        raise DictionaryError("the dictionary file is empty")
    header = [h.strip().lower() for h in rows[0]]
    if header[0] == "name":
        header[0] = "column"
    need = [h for h in CSV_COLUMNS[:3] if h not in header]
    if need:
        raise DictionaryError(f"a CSV dictionary needs the columns {', '.join(CSV_COLUMNS[:7])}; "
                              f"{_name_list(need)} missing from its first row")
    unknown = [h for h in header if h not in CSV_COLUMNS]
    if unknown:
        raise DictionaryError(f"unknown dictionary columns {_name_list(unknown)}; the columns "
                              f"are {', '.join(CSV_COLUMNS)}")
    cols, design = [], {}
    for k, r in enumerate(rows[1:], start=2):
        cell = {h: (r[j].strip() if j < len(r) else "") for j, h in enumerate(header)}
        name = cell["column"]
        if not name:
            raise DictionaryError(f"line {k} of the dictionary has no column name")
        if cell["role"].lower() == "design":
            if name not in _DESIGN:
                raise DictionaryError(f"line {k}: design key {_q(name)} is not one of "
                                      f"{', '.join(_DESIGN)}")
            design[name] = cell.get("levels", "")
            continue
        lo, hi = cell.get("lower", ""), cell.get("upper", "")
        if bool(lo) != bool(hi):
            raise DictionaryError(f"column {_q(name)} (line {k}) has one bound only; give both "
                                  "lower and upper, or neither")
        bounds = (_number(lo, name, "lower"), _number(hi, name, "upper")) if lo else None
        levels = cell.get("levels", "")
        levels = [_parse_level(v) for v in levels.split(LEVEL_SEP)] if levels else None
        cols.append(_column(name, cell["role"] or "covariate", cell["type"] or "numeric",
                            cell.get("unit", ""), bounds, levels, cell.get("meaning", "")))
    treatment = next((c for c in cols if c.role == "treatment"), None)
    treated = treatment.levels[0] if treatment is not None and treatment.levels else None
    return _from_dict({"columns": [_column_dict(c) for c in cols], "treated": treated,
                       **{k: _parse_design(k, v) for k, v in design.items() if v != ""}})


def _column(name, role, type_, unit, bounds, levels, meaning):
    role, type_ = str(role).strip().lower(), str(type_).strip().lower()
    if role not in ROLES:
        raise DictionaryError(f"column {_q(name)} has role {_q(role)}; the roles are {', '.join(ROLES)}")
    if type_ not in TYPES:
        raise DictionaryError(f"column {_q(name)} has type {_q(type_)}; the types are {', '.join(TYPES)}")
    if levels is not None:
        if isinstance(levels, str) or not hasattr(levels, "__iter__"):
            raise DictionaryError(f"levels of {_q(name)} must be a list")
        levels = tuple(_label(v) for v in levels)
        if not levels or _duplicates([str(v) for v in levels]):
            raise DictionaryError(f"levels of {_q(name)} must be distinct and not empty")
    bounds = None if bounds is None else _pair(bounds, name)
    return Column(name.strip(), role, type_, str(unit), bounds, levels, str(meaning))


def _number(text, name, which):
    try:
        return float(text.replace(",", ".") if text.count(",") == 1 and "." not in text else text)
    except ValueError:
        raise DictionaryError(f"{which} bound of {_q(name)} is {_q(text)}, not a number") from None


def _probability(value, name):
    if value is None or value == "":
        return None
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise DictionaryError(f"{name} must be a number between 0 and 1, got {_q(value)}") from None
    if not 0.0 < p < 1.0:
        raise DictionaryError(f"{name} must lie strictly between 0 and 1, got {p:g}")
    return p


def _bool(value, name):
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "larger"):
        return True
    if text in ("false", "no", "0", "smaller"):
        return False
    raise DictionaryError(f"{name} must be true or false, got {_q(value)}")


def _parse_level(text):
    text = text.strip()
    try:
        v = float(text)
    except ValueError:
        return text
    return int(v) if v.is_integer() and "." not in text else v


def _parse_design(key, text):
    if key == "larger_is_better":
        return _bool(text, key)
    if key in ("propensity", "min_propensity"):
        return _probability(text, key)
    return _parse_level(text) if key == "treated" else text


