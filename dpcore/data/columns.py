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

from .csv_io import TrialDataError, _name_list, _q

_NA_TOKENS = frozenset(
    ["", ".", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
     "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]
)
# Label pairs read as (treated, control) without asking, compared in lower case.
_TREATED_WORDS = frozenset(["treated", "treatment", "active", "drug", "intervention", "yes", "true", "t", "y"])
_CONTROL_WORDS = frozenset(["control", "placebo", "standard", "usual care", "no", "false", "c", "n"])


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


def _numeric(s, name, role):
    if not _is_numeric(s):
        num = pd.to_numeric(s, errors="coerce")
        i = int(np.argmax(num.isna().to_numpy()))
        hint = ("; name it in categorical to one-hot encode it, or leave it out" if role == "covariate"
                else "")
        raise TrialDataError(
            f"{role} {_q(name)} is not numeric: data row {_row_number(s, i)} holds {_q(s.iloc[i])}{hint}"
        )
    v = s.to_numpy(dtype=float)
    bad = ~np.isfinite(v)
    if bad.any():
        i = int(np.argmax(bad))
        raise TrialDataError(f"{role} {_q(name)} has an infinite value in data row {_row_number(s, i)}")
    return v


def _encode_treatment(s, name, treated):
    labels = [_plain(v) for v in pd.unique(s)]
    if len(labels) > 2:
        shown = ", ".join(_q(v) for v in sorted(labels, key=str)[:6])
        more = f" and {len(labels) - 6} more" if len(labels) > 6 else ""
        raise TrialDataError(
            f"treatment {_q(name)} has {len(labels)} arms ({shown}{more}); OWL compares two. "
            "Keep only the rows of the two arms you want to compare (filter the file) and upload it again"
        )
    if len(labels) < 2:
        raise TrialDataError(
            f"treatment {_q(name)} has one arm only ({_q(labels[0])}); a rule needs rows from both arms"
        )
    if treated is None:
        treated = _default_treated(labels)
        if treated is None:
            raise TrialDataError(
                f"treatment {_q(name)} has arms {_q(labels[0])} and {_q(labels[1])}: "
                "say which one is the treated arm (treated=...)"
            )
    else:
        match = [v for v in labels if _same_label(v, treated)]
        if not match:
            raise TrialDataError(
                f"treated={_q(treated)} is not an arm of {_q(name)}; its arms are "
                f"{_q(labels[0])} and {_q(labels[1])}"
            )
        treated = match[0]
    control = labels[1] if labels[0] == treated else labels[0]
    if _is_numeric(s):
        is_treated = s.to_numpy(dtype=float) == float(treated)
    else:
        is_treated = (s == treated).to_numpy(dtype=bool)
    A = np.where(is_treated, 1.0, -1.0)
    return A, (treated, control)


def default_treated(labels: Sequence[Any]) -> Any:
    """The label read as treated without asking (1 of 0/1 or -1/+1, True, drug of drug/placebo),
    or None when the user must say."""
    return _default_treated(list(labels))


def _default_treated(labels):
    key = {str(v).lower() for v in labels}
    if all(isinstance(v, bool) for v in labels):
        return True
    if key in ({"0", "1"}, {"-1", "1"}):
        return next(v for v in labels if str(v) == "1")
    low = {str(v).lower(): v for v in labels}
    t = [v for k, v in low.items() if k in _TREATED_WORDS]
    c = [v for k, v in low.items() if k in _CONTROL_WORDS]
    return t[0] if len(t) == 1 and len(c) == 1 and t[0] != c[0] else None


def _same_label(v, treated):
    if isinstance(treated, str):
        return str(v) == treated.strip()
    if isinstance(v, str):
        return v == str(treated)
    try:
        return float(v) == float(treated)
    except (TypeError, ValueError):
        return False


def _encode_covariates(frame, covariates, categorical, unknown_levels="error"):
    cols, names, categories = [], [], {}
    for c in covariates:
        s = frame[c]
        if c not in categorical:
            cols.append(_numeric(s, c, "covariate"))
            names.append(c)
            continue
        key = s.map(_plain).astype(str)
        levels = categorical[c]
        if levels is None:
            levels = tuple(sorted(pd.unique(s.map(_plain)), key=_level_key))
        outside = ~key.isin([str(v) for v in levels]).to_numpy()
        # "baseline": an unlisted value reads as the baseline (all one-hot columns 0), a
        # per-row map that needs nothing from the other rows.
        if outside.any() and unknown_levels != "baseline":
            i = int(np.argmax(outside))
            raise TrialDataError(
                f"categorical column {_q(c)} holds {_q(key.iloc[i])} in data row "
                f"{_row_number(s, i)}, which is not one of its levels {_name_list(levels, 8)}"
            )
        categories[c] = levels
        for lev in levels[1:]:
            cols.append((key == str(lev)).to_numpy(dtype=float))
            names.append(f"{c}={lev}")
    X = np.stack(cols, axis=1) if cols else np.empty((len(next(iter(frame.values()))), 0))
    X = X.reshape(len(next(iter(frame.values()))), len(cols))
    return np.ascontiguousarray(X, dtype=float), names, categories


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


_ID_NAMES = frozenset(["id", "patient", "patient_id", "subject", "subject_id", "record", "record_id",
                       "index", "row", "row_id", "participant", "participant_id", "study_id"])
_ROLE_WORDS = {
    "treatment": (
        {"treatment", "treated", "treat", "trt", "tx", "arm", "group", "assignment", "allocation",
         "randomized", "randomised", "intervention", "a"},
        {"treatment", "treated", "treat", "trt", "arm", "group", "allocation", "assignment",
         "assigned", "randomized", "randomised"},
    ),
    "outcome": (
        {"outcome", "y", "b", "response", "result", "reward", "endpoint", "los", "length_of_stay"},
        {"outcome", "response", "result", "reward", "endpoint", "days", "los", "stay", "score", "y"},
    ),
    "propensity": (
        {"propensity", "ps", "pscore", "propensity_score", "p_treat", "p_treated", "prob_treat",
         "p_treatment", "pi"},
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
