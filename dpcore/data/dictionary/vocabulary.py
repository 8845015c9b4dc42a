"""The words of the data dictionary's format: the roles, types, keys and design entries it
names, the synonyms people write for them (in any case), and how a levels cell is written.

The format itself is documented in one place, ``docs/dictionary.md``.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "CSV_COLUMNS",
    "DESIGN_KEYS",
    "FALSE_WORDS",
    "KEY",
    "KEYS",
    "LEVEL_SEP",
    "ROLE",
    "ROLES",
    "ROLE_WORDS",
    "TOP",
    "TRUE_WORDS",
    "TYPE",
    "TYPES",
    "TYPE_WORDS",
    "parse_level",
    "plain_level",
    "split_levels",
]

#: A column's roles and types, the CSV table's columns and the separator of its levels.
ROLES = ("covariate", "treatment", "outcome", "propensity", "identifier", "ignore")
TYPES = ("numeric", "binary", "categorical", "label")
CSV_COLUMNS = ("column", "role", "type", "lower", "upper", "levels", "unit", "meaning")
LEVEL_SEP = "|"
#: Design keys of the JSON file and of the CSV table's "design" rows.
DESIGN_KEYS = (
    "treated",
    "propensity",
    "min_propensity",
    "randomization",
    "larger_is_better",
    "missing_values",
    "arm_probabilities",
    "dataset",
    "description",
)

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
#: The role and the type each word names.
ROLE = {w: r for r, words in ROLE_WORDS.items() for w in words}
TYPE = {w: t for t, words in TYPE_WORDS.items() for w in words}
# Keys of a column entry (JSON) and their synonyms.
KEYS = {
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
#: A column entry's key for each word that names it.
KEY = {w: k for k, words in KEYS.items() for w in words}
#: The top-level keys other spellings stand for (Frictionless writes two in camelCase).
TOP = {
    "missingvalues": "missing_values",
    "primarykey": "primaryKey",
    "larger is better": "larger_is_better",
    "outcome bounds": "outcome_bounds",
    "min propensity": "min_propensity",
}
#: The words that mean true and false (``larger_is_better``).
TRUE_WORDS = ("true", "yes", "1", "larger", "higher", "y")
FALSE_WORDS = ("false", "no", "0", "smaller", "lower", "n")


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


def parse_level(text: str) -> Any:
    """A level as written: ``1`` and ``-1`` as ints, ``2.5`` as a float, ``01`` and words as text."""
    text = str(text).strip()
    if re.fullmatch(r"[+-]?(0|[1-9]\d*)", text):
        return int(text)
    if re.fullmatch(r"[+-]?\d*\.\d+([eE][+-]?\d+)?", text):
        return float(text)
    return text


def plain_level(v: Any) -> Any:
    """A level as the dictionary keeps it: an integral float as an int, text stripped."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v.strip() if isinstance(v, str) else v
