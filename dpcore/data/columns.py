"""Columns of a parsed CSV to arrays: cleaning, numbers, treatment labels, one-hot covariates.

The second stage of :func:`dpcore.data.read_trial`, and :func:`guess_columns`, which guesses
the role of each column from its name for a column-mapping screen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .csv_io import (
    _NA_TOKENS,
    TrialDataError,
    _name_list,
    _q,
    normalise_cell,
    number_text,
    parse_numbers,
)

# Label pairs read as (treated, control) without asking, compared in lower case.
_TREATED_WORDS = frozenset(
    ["treated", "treatment", "active", "drug", "intervention", "yes", "true", "t", "y"]
)
_CONTROL_WORDS = frozenset(
    ["control", "placebo", "standard", "usual care", "no", "false", "c", "n"]
)


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
    guess["covariates"] = [c for c in columns if c not in taken and not _is_identifier(c)]
    return guess


# --------------------------------------------------------------------------------------------
# Columns to arrays


def _clean(s):
    """Text cells stripped, missing-value words to NaN, numbers as numbers when all are."""
    if _is_numeric(s) and s.dtype != object:
        return s
    t = _strip_text(s)
    t = t.mask(t.isin(_NA_TOKENS))
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
    return s.astype(object).map(_strip_label, na_action="ignore")


def _is_numeric(s):
    return pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype)


def _numeric(s, name, role, decimal=".", words=False, strict=False):
    """A column's cells as numbers, each on its own: a cell that is not a finite number is NaN.

    Refused only when no present cell reads as a number (the column is text: the user chose
    the wrong column), which says nothing about any one row's value; with ``strict`` (new
    patients for a fitted rule, not a release) the first present cell that is not a number
    is refused.
    """
    if _is_numeric(s):
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
            f"{role} {_q(name)} is not numeric: data row {_row_number(s, i)} holds "
            f"{_q(s.iloc[i])}{hint}"
        )
    return v


def label_key(value: Any) -> str:
    """The text a label is compared by: numbers by value, other text stripped, NFC, casefolded.

    ``1``, ``"1"``, ``"01"``, ``"1.0"`` and ``"+1"`` share the key ``"1"``; ``True``, ``"TRUE"``
    and ``"true"`` share ``"true"``; ``" Drug "`` and ``"drug"`` share ``"drug"``. The key of
    a cell depends on that cell alone.

    Examples
    --------
    >>> label_key(" 01 "), label_key(1.0), label_key(True), label_key("Placebo")
    ('1', '1', 'true', 'placebo')
    """
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return number_text(float(value))
    text = normalise_cell(str(value)) or ""
    try:
        x = float(text)
    except ValueError:
        return text.casefold()
    return number_text(x) if np.isfinite(x) else text.casefold()


def _keys(s):
    """:func:`label_key` of each cell (None where missing), computed once per distinct text."""
    uniq = pd.unique(s.dropna())
    return s.map(dict(zip(uniq, map(label_key, uniq))))


def typed_label(text: str) -> Any:
    """A label cell as a plain value: ``"1"`` as 1, ``"2.5"`` as 2.5, ``"TRUE"`` as True.

    A function of the cell alone, so a label reads the same whatever the other rows hold.
    """
    key = label_key(text)
    if key in ("true", "false"):
        return key == "true"
    try:
        x = float(key)
    except ValueError:
        return text
    return _plain(x) if np.isfinite(x) else text


def _encode_treatment(s, name, treated, arms=None, rows=None):
    """(A, arms): A is +1 for the treated arm, -1 for the other, NaN where missing or unlisted.

    With ``arms`` (the dictionary's two public labels) a cell maps onto the arm whose
    :func:`label_key` it shares, and a cell matching neither is missing. Without them the two
    labels are read off the rows ``rows`` (data: fine for the analyst, not for a release),
    each spelled as the reader normalises it (:func:`label_key`: stripped, casefolded,
    numbers by value), never as the first row that holds it spells it: a published label
    says nothing about any one patient's cell.
    """
    keys = _keys(s)
    if arms is None:
        seen = pd.unique(keys[rows].dropna()) if rows is not None else pd.unique(keys.dropna())
        labels = [typed_label(k) for k in seen]
        if len(labels) > 2:
            shown = ", ".join(_q(v) for v in sorted(labels, key=str)[:6])
            more = f" and {len(labels) - 6} more" if len(labels) > 6 else ""
            raise TrialDataError(
                f"treatment {_q(name)} has {len(labels)} arms ({shown}{more}); OWL compares two. "
                "Keep only the rows of the two arms you want to compare (filter the file) and "
                "upload it again, or give a data dictionary that lists every arm with its "
                "design probability (arm_probabilities): then two of them can be compared, or "
                "a rule released over all of them"
            )
        if len(labels) < 2:
            only = f" ({_q(labels[0])})" if labels else ""
            raise TrialDataError(
                f"treatment {_q(name)} has one arm only{only}; a rule needs rows from both arms"
            )
    else:
        labels = list(arms)
        if len(labels) != 2 or len({label_key(v) for v in labels}) != 2:
            raise TrialDataError(
                f"treatment {_q(name)} needs two different arm labels, got {_name_list(labels)}"
            )
    if treated is None:
        treated = _default_treated(labels)
        if treated is None:
            raise TrialDataError(
                f"treatment {_q(name)} has arms {_q(labels[0])} and {_q(labels[1])}: "
                "say which one is the treated arm (treated=..., or 'treated' in the dictionary)"
            )
    else:
        match = [v for v in labels if label_key(v) == label_key(treated)]
        if not match:
            raise TrialDataError(
                f"treated={_q(treated)} is not an arm of {_q(name)}; its arms are "
                f"{_q(labels[0])} and {_q(labels[1])}"
            )
        treated = match[0]
    control = labels[1] if labels[0] is treated else labels[0]
    tk, ck = label_key(treated), label_key(control)
    k = keys.to_numpy(dtype=object)
    A = np.where(k == tk, 1.0, np.where(k == ck, -1.0, np.nan))
    return A, (treated, control)


def _encode_arms(s, arms):
    """Each cell's index in the public labels ``arms`` (as a float), NaN where missing or
    not one of them: a K-arm treatment, each cell read on its own."""
    keys = [label_key(v) for v in arms]
    if len(set(keys)) != len(keys):
        raise TrialDataError(f"the arms {_name_list(arms)} are not distinct labels")
    index = {k: float(i) for i, k in enumerate(keys)}
    k = _keys(s).to_numpy(dtype=object)
    return np.array([index.get(v, np.nan) for v in k], dtype=float)


def default_treated(labels: Sequence[Any]) -> Any:
    """The label read as treated without asking (1 of 0/1 or -1/+1, True, drug of drug/placebo),
    or None when the user must say."""
    return _default_treated(list(labels))


def _default_treated(labels):
    keys = [label_key(v) for v in labels]
    if set(keys) == {"true", "false"}:
        return labels[keys.index("true")]
    if set(keys) in ({"0", "1"}, {"-1", "1"}):
        return labels[keys.index("1")]
    t = [v for k, v in zip(keys, labels) if k in _TREATED_WORDS]
    c = [v for k, v in zip(keys, labels) if k in _CONTROL_WORDS]
    return t[0] if len(t) == 1 and len(c) == 1 and t[0] is not c[0] else None


def _encode_covariates(
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
            v = _numeric(s, c, "covariate", decimal, words=c in binary)
            miss = np.isnan(v)
            cols.append(np.where(miss, 0.0, v))
            names.append(c)
            missing.append(miss)
            continue
        keys = _keys(s)
        miss = keys.isna().to_numpy()
        levels = categorical[c]
        if levels is None:
            # levels read off the data (rows ``rows``): the analyst's convenience, not public
            present = keys[rows] if rows is not None else keys
            first = {k: typed_label(s[keys == k].iloc[0]) for k in pd.unique(present.dropna())}
            levels = tuple(sorted(first.values(), key=_level_key))
        level_keys = [label_key(v) for v in levels]
        k = keys.to_numpy(dtype=object)
        outside = ~miss & ~np.isin(k, level_keys)
        if rows is not None:
            outside &= rows
        if outside.any() and unknown_levels != "baseline":
            i = int(np.argmax(outside))
            raise TrialDataError(
                f"categorical column {_q(c)} holds {_q(s.iloc[i])} in data row "
                f"{_row_number(s, i)}, which is not one of its levels {_name_list(levels, 8)}"
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


def _fill_covariates(X, names, categories, missing, covariates, fill):
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
            f"fill-in values are given for {_name_list(unknown)}, which "
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
                    f"the fill-in value {_q(fill[c])} of {_q(c)} is not one of its levels "
                    f"{_name_list(levels, 8)}"
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
                    f"the fill-in value of {_q(c)} must be a number, got {_q(fill[c])}"
                ) from None
            last = names.index(c)
            X[miss, last] = value
        at = (last if last is not None else len(names) - 1) + 1
        X = np.insert(X, at, miss.astype(float), axis=1)
        names.insert(at, c + MISSING_SUFFIX)
        missing[:, k] = False
    return np.ascontiguousarray(X), names, missing


def _strip_label(v):
    return v.strip() if isinstance(v, str) else v


def _plain(v):
    """A label as a plain Python value: integral floats as int, numpy scalars unwrapped."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        v = float(v)
        return int(v) if v.is_integer() else v
    return v


def _level_key(v):
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def _row_number(s, i):
    """1-based data row of position ``i`` of a filtered column."""
    return int(s.index[i]) + 1


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


def is_identifier(name):
    """Whether a column's name reads as a patient identifier (id, patient_id, …_id)."""
    return _is_identifier(name)


def _is_identifier(name):
    n = _norm(name)
    return n in _ID_NAMES or n.endswith("_id") or n.startswith("unnamed") or n == ""
