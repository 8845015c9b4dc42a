"""Columns of a parsed CSV to arrays: cleaning, numbers, treatment labels, one-hot covariates.

The second stage of :func:`dpcore.data.read_trial`: each cell read on its own, labels compared
as :mod:`dpcore.data.labels` compares them, levels and fill-in values public.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .cells import NA_TOKENS, parse_numbers
from .errors import TrialDataError, name_list, quote
from .labels import default_treated, label_key, label_keys, level_order, strip_label, typed_label

__all__ = [
    "MISSING_SUFFIX",
    "binary_labels",
    "clean_cells",
    "encode_arms",
    "encode_covariates",
    "encode_treatment",
    "fill_covariates",
    "is_numeric",
    "read_numbers",
]


def clean_cells(s):
    """Text cells stripped, missing-value words to NaN, numbers as numbers when all are."""
    if is_numeric(s) and s.dtype != object:
        return s
    t = _strip_text(s)
    t = t.mask(t.isin(NA_TOKENS))
    filled = t.dropna()
    # Converting a million labels is slow; a text column shows itself in its first values.
    if filled.empty or pd.to_numeric(filled.iloc[:100], errors="coerce").isna().any():
        return t
    num = pd.to_numeric(t, errors="coerce")
    return num if num.notna().sum() == len(filled) else t


def _strip_text(s):
    """Spaces around text cells removed; other cells (numbers among text) kept as they are."""
    if isinstance(s.dtype, pd.StringDtype):
        return s.str.strip().astype(object)
    return s.astype(object).map(strip_label, na_action="ignore")


def is_numeric(s):
    """Whether a column is already numbers (or booleans), not text."""
    return pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype)


def read_numbers(s, name, role, decimal=".", words=False, strict=False):
    """A column's cells as numbers, each on its own: a cell that is not a finite number is NaN.

    Refused only when no present cell reads as a number (the column is text: the user chose
    the wrong column), which says nothing about any one row's value; with ``strict`` (new
    patients for a fitted rule, not a release) the first present cell that is not a number
    is refused.
    """
    if is_numeric(s):
        v = s.to_numpy(dtype=float)
    else:
        v = parse_numbers(s, decimal, words=words)
    v = np.where(np.isfinite(v), v, np.nan)
    present = s.notna().to_numpy()
    bad = present & np.isnan(v) if strict else np.zeros_like(present)
    if present.any() and not np.isfinite(v[present]).any():
        bad = present
    if bad.any():
        i = int(np.argmax(bad))
        hint = (
            "; name it in categorical to one-hot encode it, or leave it out"
            if role == "covariate"
            else ""
        )
        raise TrialDataError(
            f"{role} {quote(name)} is not numeric: data row {_row_number(s, i)} holds "
            f"{quote(s.iloc[i])}{hint}"
        )
    return v


def encode_treatment(s, name, treated, arms=None, rows=None):
    """(A, arms): A is +1 for the treated arm, -1 for the other, NaN where missing or unlisted.

    With ``arms`` (the dictionary's two public labels) a cell maps onto the arm whose
    :func:`label_key` it shares, and a cell matching neither is missing. Without them the two
    labels are read off the rows ``rows`` (data: fine for the analyst, not for a release),
    each spelled as the reader normalises it (:func:`label_key`: stripped, casefolded,
    numbers by value), never as the first row that holds it spells it: a published label
    says nothing about any one patient's cell.
    """
    keys = label_keys(s)
    if arms is None:
        seen = pd.unique(keys[rows].dropna()) if rows is not None else pd.unique(keys.dropna())
        labels = [typed_label(k) for k in seen]
        if len(labels) > 2:
            shown = ", ".join(quote(v) for v in sorted(labels, key=str)[:6])
            more = f" and {len(labels) - 6} more" if len(labels) > 6 else ""
            raise TrialDataError(
                f"treatment {quote(name)} has {len(labels)} arms ({shown}{more}); OWL compares two. "
                "Keep only the rows of the two arms you want to compare (filter the file) and "
                "upload it again, or give a data dictionary that lists every arm with its "
                "design probability (arm_probabilities): then two of them can be compared, or "
                "a rule released over all of them"
            )
        if len(labels) < 2:
            only = f" ({quote(labels[0])})" if labels else ""
            raise TrialDataError(
                f"treatment {quote(name)} has one arm only{only}; a rule needs rows from both arms"
            )
    else:
        labels = list(arms)
        if len(labels) != 2 or len({label_key(v) for v in labels}) != 2:
            raise TrialDataError(
                f"treatment {quote(name)} needs two different arm labels, got {name_list(labels)}"
            )
    if treated is None:
        treated = default_treated(labels)
        if treated is None:
            raise TrialDataError(
                f"treatment {quote(name)} has arms {quote(labels[0])} and {quote(labels[1])}: "
                "say which one is the treated arm (treated=..., or 'treated' in the dictionary)"
            )
    else:
        match = [v for v in labels if label_key(v) == label_key(treated)]
        if not match:
            raise TrialDataError(
                f"treated={quote(treated)} is not an arm of {quote(name)}; its arms are "
                f"{quote(labels[0])} and {quote(labels[1])}"
            )
        treated = match[0]
    control = labels[1] if labels[0] is treated else labels[0]
    tk, ck = label_key(treated), label_key(control)
    k = keys.to_numpy(dtype=object)
    A = np.where(k == tk, 1.0, np.where(k == ck, -1.0, np.nan))
    return A, (treated, control)


def encode_arms(s, arms):
    """Each cell's index in the public labels ``arms`` (as a float), NaN where missing or
    not one of them: a K-arm treatment, each cell read on its own."""
    keys = [label_key(v) for v in arms]
    if len(set(keys)) != len(keys):
        raise TrialDataError(f"the arms {name_list(arms)} are not distinct labels")
    index = {k: float(i) for i, k in enumerate(keys)}
    k = label_keys(s).to_numpy(dtype=object)
    return np.array([index.get(v, np.nan) for v in k], dtype=float)


def encode_covariates(
    frame, covariates, categorical, unknown_levels="error", decimal=".", binary=(), rows=None
):
    """(X, names, levels, missing): numeric cells per cell, categorical cells onto public levels.

    ``missing`` (n, k) marks, per covariate, the rows whose cell is missing (NaN for a
    numeric cell that does not read as a number). A categorical cell outside the public
    levels is an error, or with ``unknown_levels="baseline"`` the baseline (every one-hot
    column 0), a per-row map that needs nothing from the other rows.
    """
    n = len(next(iter(frame.values()))) if frame else 0
    cols, names, categories, missing = [], [], {}, []
    for c in covariates:
        s = frame[c]
        if c not in categorical:
            v = read_numbers(s, c, "covariate", decimal, words=c in binary)
            miss = np.isnan(v)
            cols.append(np.where(miss, 0.0, v))
            names.append(c)
            missing.append(miss)
            continue
        keys = label_keys(s)
        miss = keys.isna().to_numpy()
        levels = categorical[c]
        if levels is None:
            # levels read off the data (rows ``rows``): the analyst's convenience, not public
            present = keys[rows] if rows is not None else keys
            first = {k: typed_label(s[keys == k].iloc[0]) for k in pd.unique(present.dropna())}
            levels = tuple(sorted(first.values(), key=level_order))
        level_keys = [label_key(v) for v in levels]
        k = keys.to_numpy(dtype=object)
        outside = ~miss & ~np.isin(k, level_keys)
        if rows is not None:
            outside &= rows
        if outside.any() and unknown_levels != "baseline":
            i = int(np.argmax(outside))
            raise TrialDataError(
                f"categorical column {quote(c)} holds {quote(s.iloc[i])} in data row "
                f"{_row_number(s, i)}, which is not one of its levels {name_list(levels, 8)}"
            )
        categories[c] = tuple(levels)
        for lev, key in zip(levels[1:], level_keys[1:]):
            cols.append((k == key).astype(float))
            names.append(f"{c}={lev}")
        missing.append(miss)
    X = np.stack(cols, axis=1) if cols else np.empty((n, 0))
    X = X.reshape(n, len(cols))
    M = np.stack(missing, axis=1) if missing else np.zeros((n, 0), dtype=bool)
    return np.ascontiguousarray(X, dtype=float), names, categories, M


#: The name of a filled covariate's missing-indicator column in X and in a rule file.
MISSING_SUFFIX = " is missing"


def fill_covariates(X, names, categories, missing, covariates, fill):
    """Public fill-in values: a covariate's missing cell takes its fill (a number, or one of a
    categorical covariate's public levels) and a column ``"<name> is missing"`` (1 there, else
    0) follows the covariate's own, so the row keeps its other information. Returns
    (X, names, missing) with the filled covariates no longer missing. Per cell: how one row is
    read never depends on another."""
    if not fill:
        return X, names, missing
    unknown = [c for c in fill if c not in covariates]
    if unknown:
        raise TrialDataError(
            f"fill-in values are given for {name_list(unknown)}, which "
            f"{'is not a covariate' if len(unknown) == 1 else 'are not covariates'}"
        )
    X, names, missing = X.copy(), list(names), missing.copy()
    for c in covariates:
        if c not in fill:
            continue
        k = covariates.index(c)
        miss = missing[:, k]
        if c in categories:
            levels = categories[c]
            keys = [label_key(v) for v in levels]
            if label_key(fill[c]) not in keys:
                raise TrialDataError(
                    f"the fill-in value {quote(fill[c])} of {quote(c)} is not one of its levels "
                    f"{name_list(levels, 8)}"
                )
            cols = [names.index(f"{c}={lev}") for lev in levels[1:]]
            for j, key in zip(cols, keys[1:]):
                X[miss, j] = float(key == label_key(fill[c]))
            last = cols[-1] if cols else None
        else:
            try:
                value = float(fill[c])
            except (TypeError, ValueError):
                raise TrialDataError(
                    f"the fill-in value of {quote(c)} must be a number, got {quote(fill[c])}"
                ) from None
            last = names.index(c)
            X[miss, last] = value
        at = (last if last is not None else len(names) - 1) + 1
        X = np.insert(X, at, miss.astype(float), axis=1)
        names.insert(at, c + MISSING_SUFFIX)
        missing[:, k] = False
    return np.ascontiguousarray(X), names, missing


def binary_labels(s, name, levels):
    """A binary outcome written as two public labels: the first reads 0, the second 1, each
    cell on its own (:func:`dpcore.data.labels.label_key`); any other cell is missing."""
    if isinstance(levels, (str, bytes)) or len(levels) != 2:
        raise TypeError(f"outcome_levels must be the outcome's two labels, got {levels!r:.80}")
    zero, one = (label_key(v) for v in levels)
    if zero == one:
        raise TrialDataError(
            f"the binary outcome {quote(name)}'s two levels {list(levels)!r} are one label"
        )
    keys = label_keys(s)
    B = np.where(keys == zero, 0.0, np.where(keys == one, 1.0, np.nan))
    present = s.notna().to_numpy()
    if present.any() and np.isnan(B[present]).all():
        raise TrialDataError(
            f"the binary outcome {quote(name)} holds neither of its levels {list(levels)!r} in any "
            f"row (the first holds {quote(s[present].iloc[0])}): give the labels as the file "
            "writes them, the one read as 0 first"
        )
    return B


def _row_number(s, i):
    """1-based data row of position ``i`` of a filtered column."""
    return int(s.index[i]) + 1
