"""Arm and level labels as the trial reader compares them: each label on its own, numbers by
value, text stripped, Unicode NFC and casefolded; which of two arms is the treated one when
the labels say it (0/1, -1/+1, True/False, drug/placebo); and the labels one column of a file
holds (:func:`column_labels`, for a screen that asks which arm is the treated one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .cells import normalise_cell, number_text
from .csv_io import Source, read_cells
from .errors import TrialDataError, column_name, name_list, quote

__all__ = [
    "column_labels",
    "default_treated",
    "label_key",
    "label_keys",
    "level_order",
    "plain_label",
    "same_label",
    "strip_label",
    "typed_label",
]

# Label pairs read as (treated, control) without asking, compared in lower case.
_TREATED_WORDS = frozenset(
    ["treated", "treatment", "active", "drug", "intervention", "yes", "true", "t", "y"]
)
_CONTROL_WORDS = frozenset(
    ["control", "placebo", "standard", "usual care", "no", "false", "c", "n"]
)


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


def same_label(a: Any, b: Any) -> bool:
    """Whether two labels are one (:func:`label_key`): ``1`` and ``"01"``, ``Drug`` and ``drug``."""
    return label_key(a) == label_key(b)


def label_keys(s: pd.Series) -> pd.Series:
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
    return plain_label(x) if np.isfinite(x) else text


def default_treated(labels: Sequence[Any]) -> Any:
    """The label read as treated without asking (1 of 0/1 or -1/+1, True, drug of drug/placebo),
    or None when the user must say."""
    labels = list(labels)
    keys = [label_key(v) for v in labels]
    if set(keys) == {"true", "false"}:
        return labels[keys.index("true")]
    if set(keys) in ({"0", "1"}, {"-1", "1"}):
        return labels[keys.index("1")]
    t = [v for k, v in zip(keys, labels) if k in _TREATED_WORDS]
    c = [v for k, v in zip(keys, labels) if k in _CONTROL_WORDS]
    return t[0] if len(t) == 1 and len(c) == 1 and t[0] is not c[0] else None


def strip_label(v: Any) -> Any:
    """A text label without its surrounding spaces; any other value as it is."""
    return v.strip() if isinstance(v, str) else v


def plain_label(v: Any) -> Any:
    """A label as a plain Python value: integral floats as int, numpy scalars unwrapped."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        v = float(v)
        return int(v) if v.is_integer() else v
    return v


def level_order(v: Any) -> tuple[int, Any, str]:
    """The sort key of public levels: numbers first, by value, then text."""
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def column_labels(
    source: Source, column: str, limit: int = 20, *, encoding: str = "utf-8"
) -> tuple[Any, ...]:
    """The distinct non-missing labels of one column, each read as :func:`read_trial` reads it.

    For a screen that asks which arm is the treated one when there is no dictionary. Labels
    are data: show them only to the person who uploaded the file.

    Parameters
    ----------
    source : str, path, bytes or file object
    column : str
    limit : int
        At most this many labels are returned (sorted); a treatment column with more is an
        error in :func:`read_trial` anyway.
    encoding : str
        As in :func:`read_trial`.

    Returns
    -------
    tuple of labels (int, float, bool or str)

    Examples
    --------
    >>> column_labels(b"arm,y\\nDrug,1\\nplacebo,2\\n drug ,3\\n", "arm")
    ('drug', 'placebo')
    """
    column_name(column, "column")
    table = read_cells(source, encoding=encoding, columns=[column])
    if column not in table.cells:
        raise TrialDataError(
            f"no column named {quote(column)}; the columns are {name_list(table.header, 25)}"
        )
    # Each label as the reader normalises it (stripped, casefolded, numbers by value), not as
    # some row happens to spell it: PLACEBO and placebo are one arm, written "placebo".
    keys = {label_key(v) for v in table.cells[column] if v is not None}
    labels = (typed_label(k) for k in keys)
    return tuple(sorted(labels, key=level_order)[: int(limit)])
