"""Reading a public data dictionary (JSON, the CSV table, or a Frictionless Table Schema).

The whole file is validated at once: every problem is collected with where it is (the
column, the entry, the line of a CSV table) and the exact fix, and either raised together in
one :class:`DictionaryError` (``strict=True``) or returned on the dictionary built from
everything valid (``strict=False``, ``Dictionary.problems``), so a page can fill its table
with what is usable and mark the rest. The format is documented in ``docs/dictionary.md``.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import file_bytes, name_list, quote
from ..labels import default_treated, label_key
from .entries import EntryReader
from .frictionless import frictionless_form
from .model import Column, Dictionary
from .problems import DictionaryError, Problem, bounds_pair, consistency_problems
from .table import table_form
from .vocabulary import DESIGN_KEYS, TOP, plain_level, split_levels

__all__ = ["dictionary_text", "read_dictionary"]


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
        text = dictionary_text(source)
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
            d = r.from_dict(table_form(r, text))
    if r.problems and strict:
        raise DictionaryError(r.problems)
    return replace(d, problems=tuple(r.problems))


def dictionary_text(source: Any) -> str:
    """The text of a dictionary given as a path, text, bytes or a file (UTF-8, else
    Windows-1252: a dictionary is public, so trying two encodings reveals nothing)."""
    if isinstance(source, Path) or (
        isinstance(source, str)
        and "\n" not in source
        and source.strip().lower().endswith((".json", ".csv"))
    ):
        raw = file_bytes(source, "the dictionary ", DictionaryError)
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


class _Reader(EntryReader):
    """Builds a dictionary from the valid parts of its JSON form, collecting every problem."""

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
        data = {TOP.get(str(k).strip().lower(), str(k).strip().lower()): v for k, v in data.items()}
        if "fields" in data and "columns" not in data:
            data = frictionless_form(self, data)
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
        treated = (
            plain_level(data.get("treated")) if data.get("treated") not in (None, "") else None
        )
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
                    *DESIGN_KEYS,
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
                found = consistency_problems(probe)
            except Exception:  # pragma: no cover - the check reads plain attributes only
                found = []
            if not found:
                break
            self.problems.extend(p for p in found if p not in self.problems)
            cols, kw = _drop(found, cols, kw)
        return Dictionary(columns=tuple(cols), **kw)

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
                    f"{role} must be a column name, got {quote(name)}",
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
                        f"column {quote(name)}",
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
                top = bounds_pair(data["outcome_bounds"], "outcome_bounds")
            except DictionaryError as exc:  # a key of the dictionary, not a column's bounds
                top = None
                self.problems.extend(
                    replace(q, where="dictionary", field="outcome_bounds") for q in exc.problems
                )
            c = cols[by_name[name]]
            if top is not None and c.bounds is not None and c.bounds != top:
                self.add(
                    f"column {quote(name)}",
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
                    f"{name_list(list(value))}, not the treatment's levels "
                    f"{name_list(levels)}",
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
                if p.where == f"column {quote(c.name)}":
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
    key = label_key(treated)
    return replace(c, levels=tuple(sorted(c.levels, key=lambda v: label_key(v) != key)))
