"""Reading a public data dictionary (JSON, the CSV table, or a Frictionless Table Schema).

The whole file is validated at once: every problem is collected with where it is (the
column, the entry, the line of a CSV table) and the exact fix, and either raised together in
one :class:`DictionaryError` (``strict=True``) or returned on the dictionary built from
everything valid (``strict=False``, ``Dictionary.problems``), so a page can fill its table
with what is usable and mark the rest. The format is documented in ``docs/dictionary.md``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from .csv_io import TrialDataError, _name_list, _q
from .dictionary import (
    _DESIGN,
    CSV_COLUMNS,
    LEVEL_SEP,
    ROLES,
    TYPES,
    Column,
    Dictionary,
    DictionaryError,
    Problem,
    _check,
    _label,
    _pair,
)

__all__ = ["read_dictionary", "trial_arguments"]

# What people write, in any case, for each role, type and column key.
ROLE_WORDS = {
    "covariate": ("covariate", "covariates", "feature", "predictor", "baseline", "x", "input"),
    "treatment": ("treatment", "arm", "exposure", "intervention", "group", "a"),
    "outcome": ("outcome", "response", "endpoint", "target", "y", "b"),
    "propensity": ("propensity", "propensity score", "ps", "p"),
    "identifier": ("identifier", "id", "key", "primary key"),
    "ignore": ("ignore", "ignored", "unused", "drop", "skip", "none", "note", "notes", "other"),
}
TYPE_WORDS = {
    "numeric": (
        "numeric",
        "number",
        "integer",
        "int",
        "float",
        "double",
        "real",
        "continuous",
        "count",
        "decimal",
    ),
    "binary": ("binary", "boolean", "bool", "yes/no", "dichotomous", "0/1", "logical", "flag"),
    "categorical": (
        "categorical",
        "category",
        "factor",
        "nominal",
        "ordinal",
        "enum",
        "categories",
    ),
    "label": ("label", "string", "text", "character", "str", "id"),
}
_ROLE = {w: r for r, words in ROLE_WORDS.items() for w in words}
_TYPE = {w: t for t, words in TYPE_WORDS.items() for w in words}
# Keys of a column entry (JSON) and their synonyms.
_KEYS = {
    "name": ("name", "column", "variable", "field"),
    "role": ("role",),
    "type": ("type",),
    "unit": ("unit", "units"),
    "meaning": ("meaning", "description", "label", "title"),
    "bounds": ("bounds", "range"),
    "lower": ("lower", "min", "minimum"),
    "upper": ("upper", "max", "maximum"),
    "levels": ("levels", "categories", "values", "enum"),
    "value": ("value", "constant"),
    "treated": ("treated",),
    "missing": ("missing",),
    "fill": ("fill", "fill_value"),
}
_KEY = {w: k for k, words in _KEYS.items() for w in words}
_TOP = {
    "missingvalues": "missing_values",
    "primarykey": "primaryKey",
    "larger is better": "larger_is_better",
    "outcome bounds": "outcome_bounds",
    "min propensity": "min_propensity",
}
_TRUE = ("true", "yes", "1", "larger", "higher", "y")
_FALSE = ("false", "no", "0", "smaller", "lower", "n")


def read_dictionary(source: Any, *, strict: bool = True) -> Dictionary:
    """Read a public data dictionary from JSON, a CSV table or a Frictionless Table Schema.

    Parameters
    ----------
    source : str, path, bytes, file object, dict or Dictionary
        A path (``.json`` or ``.csv``), the file's bytes or text, an open file (a Streamlit
        upload works), the parsed JSON as a dict, or a Dictionary (returned as it is). JSON is
        recognised by its leading ``{``; a JSON object with ``fields`` and no ``columns`` is a
        Frictionless Table Schema.
    strict : bool
        True (default): any problem raises. False: the dictionary of everything valid is
        returned, with the problems in ``Dictionary.problems``.

    Returns
    -------
    Dictionary

    Raises
    ------
    DictionaryError
        With ``strict=True``, when the file has problems: ``.problems`` lists every one, each
        with its location and fix; the message names them all.

    Examples
    --------
    >>> d = read_dictionary(
    ...     b"column,role,type,lower,upper,levels,unit\\n"
    ...     b"age,covariate,numeric,18,90,,years\\n"
    ...     b"arm,treatment,label,,,drug|placebo,\\n"
    ...     b"days,outcome,numeric,0,30,,days\\n"
    ...     b"treated,design,,,,drug,\\n"
    ...     b"larger_is_better,design,,,,false,\\n"
    ... )
    >>> d.treatment, d.treated, d.outcome_bounds, d.bounds, d.larger_is_better
    ('arm', 'drug', (0.0, 30.0), {'age': (18.0, 90.0)}, False)
    >>> read_dictionary({"treatment": "arm", "columns": []}, strict=False).treatment
    'arm'
    """
    if not isinstance(strict, bool):
        raise TypeError(f"strict must be True or False, got {strict!r}")
    if isinstance(source, Dictionary):
        return source
    r = _Reader()
    if isinstance(source, dict):
        d = r.from_dict(source)
    else:
        text = _text(source)
        if text.lstrip().startswith("{"):
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DictionaryError(
                    [
                        Problem(
                            f"line {exc.lineno}, column {exc.colno}",
                            "JSON",
                            f"the dictionary is not valid JSON: {exc.msg}",
                            "check the commas, quotes and brackets there",
                        )
                    ]
                ) from None
            d = r.from_dict(data)
        else:
            d = r.from_dict(r.from_csv(text))
    if r.problems and strict:
        raise DictionaryError(r.problems)
    return replace(d, problems=tuple(r.problems))


def trial_arguments(dictionary, **given):
    """read_trial's column arguments, each from the dictionary unless given explicitly.

    A dictionary's categorical columns are kept only among explicitly given covariates; its
    two arms only when its treatment column is the one used.
    """
    d = read_dictionary(dictionary)
    arms, others = given.get("arms"), []
    if d.arms is not None and len(d.arms) > 2 and given.get("treatment") in (None, d.treatment):
        # a K-arm trial read as two of its arms: the dictionary of that comparison, every
        # other arm's rows missing values (weight 0 in a release; n stays the file's)
        if arms is None or isinstance(arms, (str, bytes)) or len(arms) != 2:
            raise TrialDataError(
                f"the dictionary lists {len(d.arms)} arms of {_q(d.treatment)} "
                f"({_name_list(d.arms)}); choose the two to compare, e.g. arms=({d.arms[0]!r}, "
                f"{d.arms[1]!r}) (the first is the treated one), or fit a rule over all of them "
                "with dpcore.owl.karm.KArmOWL (read_arms_trial)"
            )
        a, b = arms
        treated = given.get("treated")
        if treated is not None and _key(treated) == _key(b):
            a, b = b, a
        elif treated is not None and _key(treated) != _key(a):
            raise TrialDataError(
                f"treated={treated!r} is not one of the compared arms {_name_list(arms)}"
            )
        d = d.for_arms(a, b)
        others = list(d.extra["other_arms"])
        given = {**given, "arms": None, "treated": None}
    filled = {k: v if given.get(k) is None else given[k] for k, v in d.read_trial_kwargs().items()}
    filled["other_arms"] = others
    filled["design_propensity"] = d.known_propensity
    filled["larger_is_better"] = d.larger_is_better
    cat = filled["categorical"]
    if given.get("categorical") is None and cat and given.get("covariates") is not None:
        filled["categorical"] = {c: v for c, v in cat.items() if c in given["covariates"]} or None
    if given.get("arms") is None and filled["treatment"] != d.treatment:
        filled["arms"] = None
    return filled


def _key(v):
    from .columns import label_key

    return label_key(v)


def _text(source):
    if isinstance(source, Path) or (
        isinstance(source, str)
        and "\n" not in source
        and source.strip().lower().endswith((".json", ".csv"))
    ):
        try:
            raw = Path(source).read_bytes()
        except OSError as exc:
            raise DictionaryError(
                f"cannot open the dictionary {_q(str(source))}: {exc.strerror}"
            ) from None
    elif isinstance(source, str):
        return source.lstrip("\ufeff")
    elif isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read()
        if isinstance(raw, str):
            return raw.lstrip("\ufeff")
    else:
        raise TypeError(
            f"source must be a path, bytes, text, a file or a dict, got {type(source).__name__}"
        )
    # A dictionary is public: trying two encodings reveals nothing about a patient.
    for enc in ("utf-8-sig", "cp1252"):
        try:
            return raw.decode(enc)
        except UnicodeDecodeError:
            continue
    raise DictionaryError("the dictionary is not text (UTF-8 or Windows-1252)")


class _Reader:
    """Collects every problem while building a dictionary from its valid parts."""

    def __init__(self):
        self.problems: list[Problem] = []

    def add(self, where, field, message, fix=""):
        self.problems.append(Problem(where, field, message, fix))

    # ------------------------------------------------------------------------ JSON form
    def from_dict(self, data):
        if not isinstance(data, dict):
            raise DictionaryError(
                [
                    Problem(
                        "dictionary",
                        "",
                        "a JSON dictionary is an object",
                        'write {"treatment": ..., "columns": [...]}',
                    )
                ]
            )
        # top-level keys in any case; Frictionless spells two in camelCase
        data = {
            _TOP.get(str(k).strip().lower(), str(k).strip().lower()): v for k, v in data.items()
        }
        if "fields" in data and "columns" not in data:
            data = self.from_frictionless(data)
        entries = data.get("columns")
        if entries is None:
            entries = []
            if not any(data.get(k) for k in ("treatment", "outcome")):
                self.add(
                    "dictionary",
                    "columns",
                    "the dictionary lists no columns",
                    "add a 'columns' list of {name, role, type, bounds, levels, unit}",
                )
        elif not isinstance(entries, list):
            self.add(
                "dictionary",
                "columns",
                "'columns' must be a list",
                'write \'columns\': [{"name": ..., "role": ...}, ...]',
            )
            entries = []
        cols = []
        for i, e in enumerate(entries):
            c = self.column_entry(e, i)
            if c is not None:
                cols.append(c)
        cols = self.top_level_roles(cols, data)
        treated = _label(data.get("treated")) if data.get("treated") not in (None, "") else None
        propensity = self.probability(data.get("propensity"), "propensity")
        ratio = str(data.get("randomization") or "")
        propensity = self.from_ratio(ratio, propensity)
        propensity = self.constant_propensity(cols, propensity)
        missing = data.get("missing_values")
        missing = self.missing_values(missing)
        arm_probabilities = self.arm_probabilities(data.get("arm_probabilities"), ratio, cols)
        d_kwargs = dict(
            arm_probabilities=arm_probabilities,
            treated=treated,
            propensity=propensity,
            min_propensity=self.probability(data.get("min_propensity"), "min_propensity"),
            randomization=ratio,
            larger_is_better=self.boolean(data.get("larger_is_better"), "larger_is_better"),
            dataset=str(data.get("dataset") or ""),
            description=str(data.get("description") or ""),
            missing_values=missing,
            extra={
                k: v
                for k, v in data.items()
                if k
                not in (
                    *_DESIGN,
                    "columns",
                    "treatment",
                    "outcome",
                    "outcome_bounds",
                    "missingValues",
                    "fields",
                    "primaryKey",
                )
            },
        )
        return self.assemble(cols, d_kwargs)

    def assemble(self, cols, kw):
        """The Dictionary of the valid parts: each part a check names is left out."""
        treatment = next((c for c in cols if c.role == "treatment"), None)
        if treatment is not None and treatment.levels and len(treatment.levels) == 2:
            from .columns import default_treated, label_key

            if kw["treated"] is None:
                kw["treated"] = default_treated(list(treatment.levels))
            else:  # the level's own spelling: treated "yes" names the level "Yes"
                key = label_key(kw["treated"])
                kw["treated"] = next(
                    (v for v in treatment.levels if label_key(v) == key), kw["treated"]
                )
            cols = [_treated_first(c, kw["treated"]) for c in cols]
        for _ in range(len(cols) + 4):
            try:
                probe = Dictionary.__new__(Dictionary)
                object.__setattr__(probe, "columns", tuple(cols))
                for k, v in kw.items():
                    object.__setattr__(probe, k, v)
                found = _check(probe)
            except Exception:  # pragma: no cover - _check reads plain attributes only
                found = []
            if not found:
                break
            self.problems.extend(p for p in found if p not in self.problems)
            cols, kw = _drop(found, cols, kw)
        return Dictionary(columns=tuple(cols), **kw)

    def column_entry(self, e, i):
        if not isinstance(e, dict):
            self.add(
                f"columns[{i}]",
                "",
                "each column entry is an object",
                'write {"name": ..., "role": ..., "type": ...}',
            )
            return None
        entry, unknown = {}, []
        default_role = e.get("_role_default", "covariate")
        for k, v in e.items():
            if k == "_role_default":
                continue
            key = _KEY.get(str(k).strip().lower())
            if key is None:
                unknown.append(k)
            else:
                entry[key] = v
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            self.add(
                f"columns[{i}]",
                "name",
                "the entry has no column name",
                'add "name": the column\'s header in the file',
            )
            return None
        name = name.strip()
        where = f"column {_q(name)}"
        if unknown:
            self.add(
                where,
                _name_list(unknown),
                "unknown keys",
                "use name, role, type, unit, meaning, bounds, levels, missing (or remove them)",
            )
        return self.column(where, name, entry, default_role)

    def column(self, where, name, entry, default_role="covariate"):
        role = self.word(entry.get("role"), _ROLE, ROLES, default_role, where, "role")
        type_ = self.word(entry.get("type"), _TYPE, TYPES, None, where, "type")
        before = len(self.problems)
        levels = self.levels(entry.get("levels"), where)
        bad_levels = len(self.problems) > before
        if type_ is None:
            type_ = (
                "categorical"
                if levels and role == "covariate"
                else "label"
                if role in ("treatment", "identifier", "ignore")
                else "numeric"
            )
        constant = role == "propensity"
        bounds = None
        if "value" in entry and entry["value"] not in (None, ""):
            bounds = self.pair([entry["value"], entry["value"]], name, True)
        elif entry.get("bounds") is not None:
            bounds = self.pair(entry["bounds"], name, constant)
        elif entry.get("lower") not in (None, "") or entry.get("upper") not in (None, ""):
            lo, hi = entry.get("lower"), entry.get("upper")
            if lo in (None, "") or hi in (None, ""):
                self.add(
                    where,
                    "bounds",
                    "one bound only is given",
                    "give both lower and upper, or neither",
                )
            else:
                bounds = self.pair([lo, hi], name, constant)
        if role == "propensity" and levels and len(levels) == 1:  # a single value
            bounds, levels = self.pair([levels[0], levels[0]], name, True), None
        if role == "propensity" and bounds is not None and not 0 < bounds[0] <= bounds[1] < 1:
            self.add(
                where,
                "bounds",
                f"a propensity lies strictly between 0 and 1, got [{bounds[0]:g}, {bounds[1]:g}]",
                "give P(treated), e.g. 0.5 or [0.2, 0.8]",
            )
            bounds = None
        if type_ == "binary" and levels is not None and len(levels) != 2:
            self.add(
                where,
                "levels",
                f"a binary column has two levels, got {len(levels)}",
                "list the level read as 0 first, then the one read as 1 (e.g. no|yes)",
            )
            levels = None
        if type_ == "categorical" and role == "covariate" and not levels:
            if not bad_levels:
                self.add(
                    where,
                    "levels",
                    "a categorical column needs its public levels (never read off the data)",
                    f"write them baseline first, e.g. A{LEVEL_SEP}B{LEVEL_SEP}C",
                )
            type_ = "label"
            role = "ignore"
        if type_ == "binary" and bounds not in (None, (0.0, 1.0)):
            self.add(
                where,
                "bounds",
                f"a binary column is 0/1; its bounds cannot be {list(bounds)}",
                "remove the bounds, or give type numeric",
            )
            bounds = None
        return Column(
            name,
            role,
            type_,
            str(entry.get("unit") or ""),
            bounds,
            levels,
            str(entry.get("meaning") or ""),
            self.fill(entry, where, role, type_, bounds, levels),
        )

    def fill(self, entry, where, role, type_, bounds, levels):
        """A covariate's public fill-in value: ``"missing": {"fill": v}`` (or ``"fill": v``); a
        number within its bounds (0 or 1 for a binary one) or one of a categorical one's levels."""
        missing = entry.get("missing")
        value = entry.get("fill")
        if isinstance(missing, dict):
            value = missing.get("fill", value)
        elif missing not in (None, ""):
            self.add(where, "missing", "must be an object", 'write "missing": {"fill": value}')
            return None
        if value in (None, ""):
            return None
        if role != "covariate":
            self.add(where, "missing", "a fill-in value is for a covariate", "remove it")
            return None
        if type_ == "categorical":
            keys = [str(v).strip().casefold() for v in levels or ()]
            if str(value).strip().casefold() not in keys:
                self.add(
                    where,
                    "missing",
                    f"the fill-in value {value!r} is not one of the levels",
                    "give one of its levels",
                )
                return None
            return value
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.add(where, "missing", f"the fill-in value {value!r} is not a number", "give one")
            return None
        low, high = (0.0, 1.0) if type_ == "binary" and bounds is None else bounds or (None, None)
        if low is not None and not low <= number <= high:
            self.add(
                where,
                "missing",
                f"the fill-in value {number:g} lies outside the bounds [{low:g}, {high:g}]",
                "give a value within the public bounds",
            )
            return None
        return int(number) if number.is_integer() else number

    def top_level_roles(self, cols, data):
        """Top-level treatment, outcome and outcome_bounds agree with (or add) the columns."""
        by_name = {c.name: i for i, c in enumerate(cols)}
        for role in ("treatment", "outcome"):
            name = data.get(role)
            if name is None:
                continue
            if not isinstance(name, str) or not name.strip():
                self.add(
                    "dictionary",
                    role,
                    f"{role} must be a column name, got {_q(name)}",
                    f'write "{role}": the column\'s header',
                )
                continue
            name = name.strip()
            if name not in by_name:
                # named at the top level only: the column is described by that alone
                cols.append(Column(name, role, "label" if role == "treatment" else "numeric"))
                by_name[name] = len(cols) - 1
                continue
            c = cols[by_name[name]]
            if c.role != role:
                if c.role in ("covariate", "ignore") and "role" not in _raw_keys(data, name):
                    cols[by_name[name]] = replace(
                        c,
                        role=role,
                        type=c.type if role == "outcome" or c.type != "numeric" else "label",
                    )
                else:
                    self.add(
                        f"column {_q(name)}",
                        "role",
                        f"the top level names it the {role} but its entry says {c.role}",
                        f"give it role {role}, or name another column at the top level",
                    )
        if data.get("outcome_bounds") is not None:
            name = data.get("outcome") or next((c.name for c in cols if c.role == "outcome"), None)
            if name is None or name not in by_name:
                self.add(
                    "dictionary",
                    "outcome_bounds",
                    "outcome bounds are given but no column is the outcome",
                    'name it: "outcome": "<column>"',
                )
                return cols
            try:
                top = _pair(data["outcome_bounds"], "outcome_bounds")
            except DictionaryError as exc:  # a key of the dictionary, not a column's bounds
                top = None
                self.problems.extend(
                    replace(q, where="dictionary", field="outcome_bounds") for q in exc.problems
                )
            c = cols[by_name[name]]
            if top is not None and c.bounds is not None and c.bounds != top:
                self.add(
                    f"column {_q(name)}",
                    "bounds",
                    f"outcome_bounds {list(top)} differ from the column's bounds {list(c.bounds)}",
                    "give the same bounds, or one of them only",
                )
            elif top is not None:
                cols[by_name[name]] = replace(c, bounds=top)
        return cols

    def constant_propensity(self, cols, propensity):
        """A propensity column with equal bounds is the design's constant P(treated)."""
        col = next((c for c in cols if c.role == "propensity"), None)
        if propensity is None and col is not None and col.bounds and col.bounds[0] == col.bounds[1]:
            return col.bounds[0]
        return propensity

    def arm_probabilities(self, value, ratio, cols):
        """Each arm's probability in the order of the treatment's levels: from a list, a
        ``{label: p}`` object, ``a|b|c`` text, or a ratio with one part per arm (``1:1:1``)."""
        from .columns import label_key

        levels = next((c.levels for c in cols if c.role == "treatment"), None) or ()
        if value in (None, "", []):
            parts = re.fullmatch(r"\s*\d+(?:\.\d+)?(?:\s*:\s*\d+(?:\.\d+)?){2,}\s*", ratio or "")
            if not parts:
                return None
            value = [float(v) for v in ratio.split(":")]
            value = [v / sum(value) for v in value] if sum(value) > 0 else value
        if isinstance(value, dict):
            given = {label_key(k): v for k, v in value.items()}
            if set(given) != {label_key(v) for v in levels}:
                self.add(
                    "dictionary",
                    "arm_probabilities",
                    "the arm probabilities name "
                    f"{_name_list(list(value))}, not the treatment's levels "
                    f"{_name_list(levels)}",
                    "give one probability per arm, by its label",
                )
                return None
            value = [given[label_key(v)] for v in levels]
        if isinstance(value, str):
            value = split_levels(value)
        if not isinstance(value, (list, tuple)):
            self.add(
                "dictionary",
                "arm_probabilities",
                "arm probabilities must be a list",
                "write them in the order of the treatment's levels, e.g. [0.5, 0.25, 0.25]",
            )
            return None
        out = [self.probability(v, "arm_probabilities") for v in value]
        return None if any(p is None for p in out) else tuple(out)

    def from_ratio(self, ratio, propensity):
        """P(treated) from a ratio such as ``2:1`` (treated first), if not given as a number."""
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*", ratio or "")
        if not m or float(m[1]) + float(m[2]) == 0:
            return propensity
        p = float(m[1]) / (float(m[1]) + float(m[2]))
        if propensity is not None and abs(p - propensity) > 1e-3:  # 0.6667 is 2:1
            self.add(
                "dictionary",
                "randomization",
                f"the ratio {ratio} (P(treated) = {p:.4g}) and propensity {propensity:g} disagree",
                "write the ratio treated:control, or correct the propensity",
            )
            return propensity
        return propensity if propensity is not None else (p if 0 < p < 1 else None)

    # ------------------------------------------------------------------------- CSV table
    def from_csv(self, text):
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
        header = [_KEY.get(h, h) if h else "" for h in header]  # a spreadsheet's empty columns
        header = ["column" if h == "name" else h for h in header]
        need = [h for h in ("column", "role") if h not in header]
        if need:
            raise DictionaryError(
                [
                    Problem(
                        "line 1",
                        "header",
                        f"the columns {_name_list(need)} are missing from the first row",
                        "a CSV dictionary starts with the header " + ",".join(CSV_COLUMNS[:7]),
                    )
                ]
            )
        known = set(CSV_COLUMNS) | {"lower", "upper", "treated", "value"}
        for h in header:
            if h and h not in known:
                self.add(
                    "line 1",
                    _q(h),
                    "unknown dictionary column",
                    f"use {', '.join(CSV_COLUMNS)} (and treated), or remove it",
                )
        columns, design = [], {}
        for k, r in numbered[1:]:
            cell = {h: (r[j].strip() if j < len(r) else "") for j, h in enumerate(header)}
            name = cell.get("column", "")
            if not name:
                self.add(
                    f"line {k}",
                    "column",
                    "the line has no column name",
                    "write the column's header in the first cell",
                )
                continue
            if cell.get("role", "").lower() == "design":
                key = name.lower()
                if key not in _DESIGN:
                    self.add(
                        f"line {k}",
                        "design",
                        f"design key {_q(name)} is unknown",
                        f"use one of {', '.join(_DESIGN)}",
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
                    self.number(lo, name, "lower", k),
                    self.number(hi, name, "upper", k),
                )
                if entry["lower"] is None and entry["upper"] is None:
                    del entry["lower"], entry["upper"]
            if cell.get("value"):
                entry["value"] = self.number(cell["value"], name, "value", k)
            if cell.get("levels"):
                entry["levels"] = [_parse_level(v) for v in split_levels(cell["levels"])]
            if cell.get("treated"):
                design.setdefault("treated", cell["treated"])
            columns.append(entry)
        out: dict[str, Any] = {"columns": columns}
        for key, value in design.items():
            if value == "":
                continue
            if key == "treated":
                out[key] = _parse_level(value)
            elif key == "missing_values":
                out[key] = split_levels(value)
            else:
                out[key] = value
        return out

    # ------------------------------------------------------------------ Frictionless form
    def from_frictionless(self, data):
        """A Frictionless Table Schema as the JSON form (roles from ``role`` or the top level)."""
        fields = data.get("fields")
        if not isinstance(fields, list):
            self.add(
                "dictionary",
                "fields",
                "'fields' must be a list",
                'write \'fields\': [{"name": ..., "type": ...}, ...]',
            )
            fields = []
        keys = data.get("primaryKey") or []
        keys = [keys] if isinstance(keys, str) else list(keys)
        columns = []
        for i, f in enumerate(fields):
            if not isinstance(f, dict):
                self.add(
                    f"fields[{i}]",
                    "",
                    "each field is an object",
                    'write {"name": ..., "type": ...}',
                )
                continue
            cons = f.get("constraints") or {}
            ftype = str(f.get("type") or "any").lower()
            entry: dict[str, Any] = {
                "name": f.get("name"),
                "unit": f.get("unit", ""),
                "meaning": f.get("description") or f.get("title") or "",
            }
            if f.get("role"):
                entry["role"] = f["role"]
            elif f.get("name") in keys:
                entry["role"] = "identifier"
            enum = cons.get("enum")
            if ftype == "boolean":
                entry["type"] = "binary"
                levels = self.boolean_levels(f, f"fields[{i}]")
                if levels is not None:
                    entry["levels"] = levels
            elif enum:
                entry["type"] = (
                    "categorical" if entry.get("role", "covariate") == "covariate" else "label"
                )
                entry["levels"] = enum
            elif ftype in ("number", "integer"):
                entry["type"] = "numeric"
            elif ftype in ("string", "any"):
                entry["type"] = "label"
                entry["_role_default"] = "ignore"  # unless the top level names it
            else:
                entry["type"] = ftype  # reported as an unknown type
            if "minimum" in cons or "maximum" in cons:
                entry["lower"], entry["upper"] = cons.get("minimum"), cons.get("maximum")
            if f.get("levels"):
                entry["levels"] = f["levels"]
            columns.append(entry)
        out = {k: v for k, v in data.items() if k not in ("fields", "primaryKey")}
        out["columns"] = columns
        if isinstance(data.get("missing_values"), list):
            # Frictionless lists every missing marker; "" is always one here
            out["missing_values"] = [v for v in data["missing_values"] if v != ""]
        return out

    def boolean_levels(self, field, where):
        """A Table Schema boolean's ``falseValues`` and ``trueValues`` as a binary column's
        two levels (false first), or None when it gives neither (the usual words read)."""
        false, true = field.get("falseValues"), field.get("trueValues")
        if false is None and true is None:
            return None
        given = [v if isinstance(v, list) else [v] for v in (false or [], true or [])]
        if any(len(v) != 1 for v in given):
            self.add(
                where,
                "trueValues",
                "a binary column has two levels: one value read as false, one as true "
                f"(got falseValues {false!r}, trueValues {true!r})",
                'write "falseValues": ["N"], "trueValues": ["Y"] as the file writes them',
            )
            return None
        return [str(given[0][0]), str(given[1][0])]

    # ------------------------------------------------------------------ single entries
    def word(self, value, table, allowed, default, where, field):
        if value is None or (isinstance(value, str) and not value.strip()):
            return default
        text = str(value).strip().lower()
        if text in table:
            return table[text]
        self.add(
            where, field, f"{field} {_q(value)} is unknown", f"use one of {', '.join(allowed)}"
        )
        return default

    def levels(self, value, where):
        if value is None:
            return None
        if isinstance(value, str):
            value = [_parse_level(v) for v in split_levels(value)]
        if not isinstance(value, (list, tuple)):
            self.add(where, "levels", "levels must be a list", 'write ["A", "B", "C"]')
            return None
        levels = tuple(_label(v) for v in value)
        from .columns import label_key

        keys = [label_key(v) for v in levels]
        if not levels or len(set(keys)) < len(keys):
            dup = sorted({str(v) for v, k in zip(levels, keys) if keys.count(k) > 1})
            self.add(
                where,
                "levels",
                "levels must be distinct and not empty"
                + (f" ({_name_list(dup)} read as the same level)" if dup else ""),
                "list each level once (1, 01 and 1.0 are one level; case is ignored)",
            )
            return None
        return levels

    def pair(self, value, name, constant=False):
        try:
            return _pair(value, name, constant)
        except DictionaryError as exc:
            self.problems.extend(exc.problems)
            return None

    def number(self, text, name, which, line):
        try:
            return float(
                text.replace(",", ".") if text.count(",") == 1 and "." not in text else text
            )
        except ValueError:
            self.add(
                f"line {line} (column {_q(name)})",
                which,
                f"{which} bound {_q(text)} is not a number",
                "write a number such as 18 or 0.5 (or leave both bounds empty)",
            )
            return None

    def probability(self, value, name):
        if value is None or value == "":
            return None
        try:
            text = str(value).strip()
            p = float(text.replace(",", ".") if text.count(",") == 1 and "." not in text else value)
        except (TypeError, ValueError):
            self.add(
                "dictionary",
                name,
                f"{name} must be a number between 0 and 1, got {_q(value)}",
                "write P(treated), e.g. 0.5 for 1:1 or 0.6667 for 2:1",
            )
            return None
        if not 0.0 < p < 1.0:
            self.add(
                "dictionary",
                name,
                f"{name} must lie strictly between 0 and 1, got {p:g}",
                "if it is a percentage, divide it by 100",
            )
            return None
        return p

    def boolean(self, value, name):
        if value is None or isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        self.add(
            "dictionary",
            name,
            f"{name} must be true or false, got {_q(value)}",
            f"write {name} = true (larger outcomes are better) or false",
        )
        return None

    def missing_values(self, value):
        if value is None:
            return ()
        if isinstance(value, str):
            value = split_levels(value)
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            self.add(
                "dictionary",
                "missing_values",
                "missing_values must be a list of texts",
                'write ["-99", "unknown"]',
            )
            return ()
        return tuple(v.strip() for v in value if v.strip())


def split_levels(text: str) -> list[str]:
    """A levels cell split on ``|``, else ``;``, else ``,`` (a level with a comma needs ``|``).

    Examples
    --------
    >>> split_levels("drug, 10 mg|placebo"), split_levels("-1;1"), split_levels("A, B")
    (['drug, 10 mg', 'placebo'], ['-1', '1'], ['A', 'B'])
    """
    text = str(text)
    sep = next((s for s in (LEVEL_SEP, ";", ",") if s in text), LEVEL_SEP)
    return [v.strip() for v in text.split(sep) if v.strip()]


def _raw_keys(data, name):
    for e in data.get("columns") or ():
        if isinstance(e, dict) and str(e.get("name", "")).strip() == name:
            return {str(k).lower() for k in e}
    return set()


def _drop(problems, cols, kw):
    """Leave out what each problem names, so the rest builds a valid Dictionary."""
    cols = list(cols)
    for p in problems:
        if p.field == "treated":
            kw["treated"] = None
        elif p.field == "propensity":
            kw["propensity"] = None
        elif p.field == "arm_probabilities":
            kw["arm_probabilities"] = None
        elif p.field == "name":
            seen, out = set(), []
            for c in cols:
                if c.name not in seen:
                    out.append(c)
                seen.add(c.name)
            cols = out
        elif p.field == "role":
            role = re.search(r"role (\w+)", p.message)
            if role:
                first = True
                for i, c in enumerate(cols):
                    if c.role == role[1]:
                        if not first:
                            cols[i] = replace(c, role="ignore")
                        first = False
        elif p.field in ("levels", "bounds"):
            for i, c in enumerate(cols):
                if p.where == f"column {_q(c.name)}":
                    if p.field == "levels" and c.role == "treatment":
                        cols[i] = replace(c, levels=None)
                    elif p.field == "levels":
                        cols[i] = replace(c, role="ignore", type="label", levels=None)
                    else:
                        cols[i] = replace(c, bounds=None)
    return cols, kw


def _treated_first(c, treated):
    """The treatment's levels in the order (treated, control), as Trial.arms has them."""
    if c.role != "treatment" or not c.levels or treated is None:
        return c
    from .columns import label_key

    key = label_key(treated)
    return replace(c, levels=tuple(sorted(c.levels, key=lambda v: label_key(v) != key)))


def _parse_level(text):
    """A level as written: ``1`` and ``-1`` as ints, ``2.5`` as a float, ``01`` and words as text."""
    text = str(text).strip()
    if re.fullmatch(r"[+-]?(0|[1-9]\d*)", text):
        return int(text)
    if re.fullmatch(r"[+-]?\d*\.\d+([eE][+-]?\d+)?", text):
        return float(text)
    return text
