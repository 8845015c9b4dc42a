"""A trial's public data dictionary: roles, types, units, bounds, levels and the design.

Everything in a dictionary is public: it is written from the protocol or from each variable's
natural range before the data are seen, and nothing here ever fills a bound or a level from the
data (ARCHITECTURE.md, privacy rules 2 and 8). Two equivalent formats are read and written:

- JSON, as ``demo_data/*.json``: top-level design keys (``treatment``, ``treated``, ``outcome``,
  ``outcome_bounds``, ``larger_is_better``, ``propensity``, ``randomization``,
  ``min_propensity``, ``dataset``, ``description``) and a ``columns`` list of
  ``{name, role, type, unit, meaning, bounds, levels}``.
- CSV, one row per column: ``column, role, type, lower, upper, levels, unit`` (and an optional
  ``meaning``). Levels are separated by ``|``; the treatment row lists the treated arm first.
  The design goes in rows whose role is ``design``: the ``column`` cell names the key
  (``larger_is_better``, ``propensity``, ...) and the ``levels`` cell holds its value.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

from .csv_io import TrialDataError, _duplicates, _name_list, _q

__all__ = ["Column", "Dictionary", "DictionaryError", "read_dictionary"]

ROLES = ("covariate", "treatment", "outcome", "propensity", "identifier", "ignore")
TYPES = ("numeric", "binary", "categorical", "label")
CSV_COLUMNS = ("column", "role", "type", "lower", "upper", "levels", "unit", "meaning")
LEVEL_SEP = "|"
# Design keys of the JSON file and of the CSV table's "design" rows, with their readers.
_DESIGN = ("treated", "propensity", "min_propensity", "randomization", "larger_is_better",
           "dataset", "description")


class DictionaryError(TrialDataError):
    """A data dictionary that cannot be read; the message says which entry to change."""


@dataclass(frozen=True)
class Column:
    """One column of the trial file as the dictionary describes it (all public).

    ``bounds`` is ``(lower, upper)`` or None; a ``binary`` column is 0/1 and needs none.
    ``levels`` are the categories of a categorical covariate (baseline first) or the two arms
    of the treatment (treated first).
    """

    name: str
    role: str = "covariate"
    type: str = "numeric"
    unit: str = ""
    bounds: tuple | None = None
    levels: tuple | None = None
    meaning: str = ""

    @property
    def public_bounds(self):
        """(lower, upper) from the dictionary; (0, 1) for a binary column; else None."""
        return (0.0, 1.0) if self.type == "binary" and self.bounds is None else self.bounds


@dataclass(frozen=True)
class Dictionary:
    """Public metadata of a two-arm randomized trial.

    Attributes
    ----------
    columns : tuple of Column
    treatment, outcome : str or None
        The columns with those roles.
    treated : label or None
        The treated arm's label.
    outcome_bounds : (lo, hi) or None
        Public bounds of the outcome.
    larger_is_better : bool or None
    propensity : float or None
        The known randomization probability P(treated) (2/3 for 2:1).
    min_propensity : float or None
        A public lower bound on every row's propensity of either arm, for a trial whose
        propensity is a per-row column (weights and the private evaluation need it).
    randomization, dataset, description : str
    """

    columns: tuple = ()
    treated: object = None
    propensity: float | None = None
    min_propensity: float | None = None
    randomization: str = ""
    larger_is_better: bool | None = None
    dataset: str = ""
    description: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        _check(self)

    # ----------------------------------------------------------------------------- views
    def column(self, name):
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def _role(self, role):
        names = [c.name for c in self.columns if c.role == role]
        return names[0] if names else None

    @property
    def treatment(self):
        return self._role("treatment")

    @property
    def outcome(self):
        return self._role("outcome")

    @property
    def propensity_column(self):
        return self._role("propensity")

    @property
    def outcome_bounds(self):
        return self.column(self.outcome).bounds if self.outcome else None

    @property
    def covariates(self):
        return [c.name for c in self.columns if c.role == "covariate"]

    @property
    def categorical(self):
        """``{column: levels}`` of the categorical covariates, baseline first."""
        return {c.name: list(c.levels) for c in self.columns
                if c.role == "covariate" and c.type == "categorical"}

    @property
    def bounds(self):
        """``{column: (lower, upper)}`` of the numeric and binary covariates with public bounds."""
        return {c.name: c.public_bounds for c in self.columns if c.role == "covariate"
                and c.type != "categorical" and c.public_bounds is not None}

    @property
    def missing_bounds(self):
        """Numeric covariates (and the outcome) the dictionary gives no bounds for."""
        return [c.name for c in self.columns if c.role in ("covariate", "outcome")
                and c.type == "numeric" and c.bounds is None]

    def read_trial_kwargs(self):
        """Keyword arguments of :func:`dpcore.data.read_trial` that this dictionary fixes."""
        if not (self.treatment and self.outcome):
            raise DictionaryError("the dictionary names no treatment or no outcome column")
        return {"treatment": self.treatment, "outcome": self.outcome,
                "covariates": self.covariates, "categorical": self.categorical or None,
                "propensity": self.propensity_column, "treated": self.treated}

    def table(self):
        """The columns as a DataFrame ``column, role, type, lower, upper, levels, unit``."""
        import pandas as pd

        return pd.DataFrame(_rows(self), columns=list(CSV_COLUMNS))

    # ------------------------------------------------------------------------- writing
    def to_dict(self):
        out = {"dataset": self.dataset, "description": self.description}
        out.update({k: v for k, v in self.extra.items() if k not in out})
        out.update({"treatment": self.treatment, "treated": self.treated,
                    "outcome": self.outcome, "outcome_bounds": _list(self.outcome_bounds),
                    "larger_is_better": self.larger_is_better, "propensity": self.propensity,
                    "min_propensity": self.min_propensity, "randomization": self.randomization})
        out["columns"] = [_column_dict(c) for c in self.columns]
        return {k: v for k, v in out.items() if v not in (None, "")}

    def to_json(self):
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def to_csv(self):
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        w.writerows(_rows(self))
        for key in _DESIGN:
            value = getattr(self, key)
            if key == "treated" and self.treatment and self.column(self.treatment).levels:
                continue  # the treatment row lists it first
            if value not in (None, ""):
                w.writerow([key, "design", "", "", "", _cell(value), "", ""])
        return out.getvalue()

    def with_bounds(self, **bounds):
        """A copy with the given columns' bounds set: ``d.with_bounds(age=(18, 90))``."""
        cols = tuple(replace(c, bounds=_pair(bounds[c.name], c.name)) if c.name in bounds else c
                     for c in self.columns)
        return replace(self, columns=cols)


# ---------------------------------------------------------------------------------- reading


def read_dictionary(source):
    """Read a public data dictionary from JSON or CSV.

    Parameters
    ----------
    source : str, path, bytes, file object or dict
        A path (``.json`` or ``.csv``), the file's bytes or text, an open file (a Streamlit
        upload works), or the parsed JSON as a dict. JSON is recognised by its leading ``{``.

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


# --------------------------------------------------------------------------- entries, checks


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


def _check(d):
    names = [c.name for c in d.columns]
    dup = _duplicates(names)
    if dup:
        raise DictionaryError(f"the dictionary lists {_name_list(dup)} more than once")
    for role in ("treatment", "outcome", "propensity"):
        named = [c.name for c in d.columns if c.role == role]
        if len(named) > 1:
            raise DictionaryError(f"{_name_list(named)} all have role {role}; one column can")
    for c in d.columns:
        if c.role == "covariate" and c.type == "categorical" and not c.levels:
            raise DictionaryError(f"categorical column {_q(c.name)} needs its levels "
                                  f"(e.g. A{LEVEL_SEP}B{LEVEL_SEP}C, baseline first); levels are "
                                  "never read off the data")
        if c.type == "binary" and c.bounds not in (None, (0.0, 1.0)):
            raise DictionaryError(f"binary column {_q(c.name)} is 0/1; its bounds cannot be "
                                  f"{list(c.bounds)}")
    t = d.treatment and d.column(d.treatment)
    if t and t.levels is not None:
        if len(t.levels) != 2:
            raise DictionaryError(f"treatment {_q(t.name)} must list two arms, got {len(t.levels)}")
        if d.treated is not None and str(d.treated) not in [str(v) for v in t.levels]:
            raise DictionaryError(f"treated arm {_q(d.treated)} is not one of the levels "
                                  f"{_name_list(t.levels)} of {_q(t.name)}")
    if d.propensity is not None and d.propensity_column:
        raise DictionaryError("give either a randomization probability or a propensity "
                              "column, not both")


def _pair(value, name):
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise DictionaryError(f"bounds of {_q(name)} must be two numbers [lower, upper], "
                              f"got {_q(value)}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise DictionaryError(f"bounds of {_q(name)} must be finite with lower < upper, "
                              f"got [{lo:g}, {hi:g}]")
    return lo, hi


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


def _label(v):
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v.strip() if isinstance(v, str) else v


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


def _list(pair):
    return None if pair is None else [float(v) for v in pair]


def _column_dict(c):
    out = {"name": c.name, "role": c.role, "type": c.type, "unit": c.unit,
           "meaning": c.meaning, "bounds": _list(c.bounds),
           "levels": None if c.levels is None else list(c.levels)}
    return {k: v for k, v in out.items() if v not in (None, "")}


def _cell(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


def _rows(d):
    out = []
    for c in d.columns:
        levels = c.levels
        lo, hi = c.bounds if c.bounds is not None else ("", "")
        out.append([c.name, c.role, c.type, _cell(lo) if lo != "" else "",
                    _cell(hi) if hi != "" else "",
                    LEVEL_SEP.join(str(v) for v in levels) if levels else "", c.unit, c.meaning])
    return out
