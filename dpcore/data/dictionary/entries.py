"""One column's entry of a data dictionary and its single values, each read with every problem
collected (where it is, what is wrong, the fix) instead of raised.

:class:`EntryReader` is what the forms share: the JSON form (:mod:`~dpcore.data.dictionary.read`),
the CSV table (:mod:`~dpcore.data.dictionary.table`) and a Table Schema
(:mod:`~dpcore.data.dictionary.frictionless`) all read their entries through it.
"""

from __future__ import annotations

from typing import Any

from ..errors import name_list, quote
from ..labels import label_key
from .model import Column
from .problems import DictionaryError, Problem, bounds_pair
from .vocabulary import (
    FALSE_WORDS,
    KEY,
    LEVEL_SEP,
    ROLE,
    ROLES,
    TRUE_WORDS,
    TYPE,
    TYPES,
    parse_level,
    plain_level,
    split_levels,
)

__all__ = ["EntryReader"]


def _decimal_number(value: Any) -> float:
    """A bound or probability as a number: text with one comma and no dot has a decimal comma
    (``"0,5"`` is 0.5); any other value is read as it is (``float(value)``).

    Raises
    ------
    ValueError or TypeError
        When ``value`` does not read as a number.
    """
    text = str(value).strip()
    return float(text.replace(",", ".") if text.count(",") == 1 and "." not in text else value)


class EntryReader:
    """Collects every problem while reading a dictionary's entries from their valid parts."""

    def __init__(self):
        self.problems: list[Problem] = []

    def add(self, where, field, message, fix=""):
        self.problems.append(Problem(where, field, message, fix))

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
            key = KEY.get(str(k).strip().lower())
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
        where = f"column {quote(name)}"
        if unknown:
            self.add(
                where,
                name_list(unknown),
                "unknown keys",
                "use name, role, type, unit, meaning, bounds, levels, missing (or remove them)",
            )
        return self.column(where, name, entry, default_role)

    def column(self, where, name, entry, default_role="covariate"):
        role = self.word(entry.get("role"), ROLE, ROLES, default_role, where, "role")
        type_ = self.word(entry.get("type"), TYPE, TYPES, None, where, "type")
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
            keys = [label_key(v) for v in levels or ()]
            if label_key(value) not in keys:
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
        if low is not None and high is not None and not low <= number <= high:
            self.add(
                where,
                "missing",
                f"the fill-in value {number:g} lies outside the bounds [{low:g}, {high:g}]",
                "give a value within the public bounds",
            )
            return None
        return int(number) if number.is_integer() else number

    def word(self, value, table, allowed, default, where, field):
        if value is None or (isinstance(value, str) and not value.strip()):
            return default
        text = str(value).strip().lower()
        if text in table:
            return table[text]
        self.add(
            where, field, f"{field} {quote(value)} is unknown", f"use one of {', '.join(allowed)}"
        )
        return default

    def levels(self, value, where):
        if value is None:
            return None
        if isinstance(value, str):
            value = [parse_level(v) for v in split_levels(value)]
        if not isinstance(value, (list, tuple)):
            self.add(where, "levels", "levels must be a list", 'write ["A", "B", "C"]')
            return None
        levels = tuple(plain_level(v) for v in value)
        keys = [label_key(v) for v in levels]
        if not levels or len(set(keys)) < len(keys):
            dup = sorted({str(v) for v, k in zip(levels, keys) if keys.count(k) > 1})
            self.add(
                where,
                "levels",
                "levels must be distinct and not empty"
                + (f" ({name_list(dup)} read as the same level)" if dup else ""),
                "list each level once (1, 01 and 1.0 are one level; case is ignored)",
            )
            return None
        return levels

    def pair(self, value, name, constant=False):
        try:
            return bounds_pair(value, name, constant)
        except DictionaryError as exc:
            self.problems.extend(exc.problems)
            return None

    def number(self, text, name, which, line):
        try:
            return _decimal_number(text)
        except ValueError:
            self.add(
                f"line {line} (column {quote(name)})",
                which,
                f"{which} bound {quote(text)} is not a number",
                "write a number such as 18 or 0.5 (or leave both bounds empty)",
            )
            return None

    def probability(self, value, name):
        if value is None or value == "":
            return None
        try:
            p = _decimal_number(value)
        except (TypeError, ValueError):
            self.add(
                "dictionary",
                name,
                f"{name} must be a number between 0 and 1, got {quote(value)}",
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
        if text in TRUE_WORDS:
            return True
        if text in FALSE_WORDS:
            return False
        self.add(
            "dictionary",
            name,
            f"{name} must be true or false, got {quote(value)}",
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
