"""The roles of a trial's columns (treatment, outcome, propensity, covariates, categorical
levels): guessed from the names for a mapping screen (:func:`guess_columns`), taken from a data
dictionary unless given (:func:`trial_arguments`), and checked: each named column exists,
plays one role, and is named once."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .cells import parse_numbers
from .dictionary.read import read_dictionary
from .errors import TrialDataError, column_name, duplicates, name_list, quote
from .labels import label_key, strip_label

__all__ = [
    "check_categorical",
    "check_names",
    "check_roles",
    "default_covariates",
    "guess_columns",
    "is_identifier",
    "trial_arguments",
]


def check_names(value, name, single=False):
    if single:
        return column_name(value, name)
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a list of column names, got {value!r:.80}")
    value = list(value)
    dup = duplicates(value)
    if dup:
        raise TrialDataError(f"{name} names {name_list(dup)} more than once")
    return value


def check_categorical(categorical):
    if categorical is None:
        return {}
    if isinstance(categorical, dict):
        out = {}
        for col, levels in categorical.items():
            check_names(col, "categorical", single=True)
            levels = [strip_label(v) for v in levels]
            if len(levels) < 1 or duplicates(levels):
                raise TrialDataError(
                    f"categorical levels of {quote(col)} must be distinct and not empty"
                )
            out[col] = tuple(levels)
        return out
    return {c: None for c in check_names(categorical, "categorical")}


def check_roles(columns, treatment, outcome, propensity, covariates, categorical):
    """Every named column exists and plays one role."""
    named = [("treatment", treatment), ("outcome", outcome)]
    if propensity is not None:
        named.append(("propensity", propensity))
    named += [("covariate", c) for c in covariates or ()]
    named += [("categorical column", c) for c in categorical]
    unknown = [c for _, c in named if c not in columns]
    if unknown:
        hint = ""
        if all(_looks_numeric(c) for c in columns):
            hint = " The first row looks like data: add a header row with column names."
        elif len(columns) == 1:
            hint = " The file has a single column: is it separated by something other than comma, semicolon, tab or pipe?"
        raise TrialDataError(
            f"no column named {name_list(unknown)} in the file; its columns are "
            f"{name_list(columns, limit=25)}.{hint}"
        )
    roles: dict[Any, str] = {}
    for role, c in named[: 2 + (propensity is not None)]:
        if c in roles:
            raise TrialDataError(f"column {quote(c)} is chosen both as {roles[c]} and as {role}")
        roles[c] = role
    for c in list(covariates or ()) + list(categorical):
        if c in roles:
            raise TrialDataError(
                f"column {quote(c)} is the {roles[c]}; it cannot also be a covariate"
            )
    if covariates is not None:
        extra = [c for c in categorical if c not in covariates]
        if extra:
            raise TrialDataError(
                f"categorical column {name_list(extra)} is not among the covariates"
            )


def default_covariates(table, treatment, outcome, propensity, categorical):
    """Every other column with at least one number cell, plus the categorical ones.

    A convenience for exploring a file: which columns qualify is read off the data (a
    column of text with one number in it is taken). A private release names its covariates
    (or takes them from the dictionary).
    """
    out = []
    for c in table.header:
        if c in (treatment, outcome, propensity) or c.startswith("Unnamed: "):
            continue
        if c in categorical:
            out.append(c)
            continue
        if _has_number(table.cells[c], table.decimal):
            out.append(c)
    return out


def _has_number(cells, decimal, chunk=512):
    """Whether any cell reads as a number, reading from the top and stopping at the first."""
    start = 0
    while start < len(cells):
        if np.isfinite(parse_numbers(cells[start : start + chunk], decimal)).any():
            return True
        start, chunk = start + chunk, min(chunk * 4, 1 << 16)
    return False


def _looks_numeric(name):
    try:
        float(name)
        return True
    except ValueError:
        return False


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
                f"the dictionary lists {len(d.arms)} arms of {quote(d.treatment)} "
                f"({name_list(d.arms)}); choose the two to compare, e.g. arms=({d.arms[0]!r}, "
                f"{d.arms[1]!r}) (the first is the treated one), or fit a rule over all of them "
                "with dpcore.owl.karm.KArmOWL (read_arms_trial)"
            )
        a, b = arms
        treated = given.get("treated")
        if treated is not None and label_key(treated) == label_key(b):
            a, b = b, a
        elif treated is not None and label_key(treated) != label_key(a):
            raise TrialDataError(
                f"treated={treated!r} is not one of the compared arms {name_list(arms)}"
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


# --------------------------------------------------------------------------------------------
# Roles guessed from the columns' names


def guess_columns(columns: Sequence[str]) -> dict[str, Any]:
    """Guess the role of each column from its name alone (defaults for a mapping screen).

    Parameters
    ----------
    columns : sequence of str

    Returns
    -------
    dict with ``treatment``, ``outcome`` and ``propensity`` (a column name or None) and
    ``covariates`` (the remaining columns, leaving out identifiers such as ``id`` or
    ``patient_id`` and unnamed columns). Names only: whether a column is numeric is checked
    by :func:`read_trial`.

    Examples
    --------
    >>> guess_columns(["patient_id", "age", "site", "arm", "days_in_hospital"])
    {'treatment': 'arm', 'outcome': 'days_in_hospital', 'propensity': None, 'covariates': ['age', 'site']}
    """
    columns = [str(c) for c in columns]
    guess: dict[str, Any] = {"treatment": None, "outcome": None, "propensity": None}
    for tier in (0, 1):
        for role in ("propensity", "treatment", "outcome"):
            if guess[role] is None:
                guess[role] = next(
                    (c for c in columns if c not in guess.values() and _role_match(c, role, tier)),
                    None,
                )
    taken = set(guess.values())
    guess["covariates"] = [c for c in columns if c not in taken and not is_identifier(c)]
    return guess


_ID_NAMES = frozenset(
    [
        "id",
        "patient",
        "patient_id",
        "subject",
        "subject_id",
        "record",
        "record_id",
        "index",
        "row",
        "row_id",
        "participant",
        "participant_id",
        "study_id",
    ]
)
_ROLE_WORDS = {
    "treatment": (
        {
            "treatment",
            "treated",
            "treat",
            "trt",
            "tx",
            "arm",
            "group",
            "assignment",
            "allocation",
            "randomized",
            "randomised",
            "intervention",
            "a",
        },
        {
            "treatment",
            "treated",
            "treat",
            "trt",
            "arm",
            "group",
            "allocation",
            "assignment",
            "assigned",
            "randomized",
            "randomised",
        },
    ),
    "outcome": (
        {"outcome", "y", "b", "response", "result", "reward", "endpoint", "los", "length_of_stay"},
        {
            "outcome",
            "response",
            "result",
            "reward",
            "endpoint",
            "days",
            "los",
            "stay",
            "score",
            "y",
        },
    ),
    "propensity": (
        {
            "propensity",
            "ps",
            "pscore",
            "propensity_score",
            "p_treat",
            "p_treated",
            "prob_treat",
            "p_treatment",
            "pi",
        },
        {"propensity", "pscore", "ps", "probability", "prob"},
    ),
}


def _norm(name):
    return re.sub(r"[^0-9a-z]+", "_", str(name).strip().lower()).strip("_")


def _role_match(name, role, tier):
    exact, tokens = _ROLE_WORDS[role]
    n = _norm(name)
    return n in exact if tier == 0 else bool(set(n.split("_")) & tokens)


def is_identifier(name: str) -> bool:
    """Whether a column's name reads as a patient identifier (id, patient_id, …_id)."""
    n = _norm(name)
    return n in _ID_NAMES or n.endswith("_id") or n.startswith("unnamed") or n == ""
