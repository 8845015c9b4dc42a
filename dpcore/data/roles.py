"""The roles a caller gives a trial's columns (treatment, outcome, propensity, covariates,
categorical levels): each named column exists, plays one role, and is named once."""

from __future__ import annotations

import numpy as np

from .columns import _strip_label
from .csv_io import TrialDataError, _duplicates, _name_list, _q, parse_numbers


def check_names(value, name, single=False):
    if single:
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a column name (str), got {type(value).__name__}")
        return value
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a list of column names, got {value!r:.80}")
    value = list(value)
    dup = _duplicates(value)
    if dup:
        raise TrialDataError(f"{name} names {_name_list(dup)} more than once")
    return value


def check_choice(value, name, options):
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")


def check_categorical(categorical):
    if categorical is None:
        return {}
    if isinstance(categorical, dict):
        out = {}
        for col, levels in categorical.items():
            check_names(col, "categorical", single=True)
            levels = [_strip_label(v) for v in levels]
            if len(levels) < 1 or _duplicates(levels):
                raise TrialDataError(
                    f"categorical levels of {_q(col)} must be distinct and not empty"
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
            f"no column named {_name_list(unknown)} in the file; its columns are "
            f"{_name_list(columns, limit=25)}.{hint}"
        )
    roles = {}
    for role, c in named[: 2 + (propensity is not None)]:
        if c in roles:
            raise TrialDataError(f"column {_q(c)} is chosen both as {roles[c]} and as {role}")
        roles[c] = role
    for c in list(covariates or ()) + list(categorical):
        if c in roles:
            raise TrialDataError(f"column {_q(c)} is the {roles[c]}; it cannot also be a covariate")
    if covariates is not None:
        extra = [c for c in categorical if c not in covariates]
        if extra:
            raise TrialDataError(
                f"categorical column {_name_list(extra)} is not among the covariates"
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
