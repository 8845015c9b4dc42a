"""A CSV cell as the trial reader reads it, each on its own: stripped, Unicode NFC, the usual
missing-value words missing, a number read from the cell alone.

Reading a cell never depends on any other cell (docs/architecture.md, privacy rules 8 and 10):
a cell that does not read as a number is missing, never a reason to read its column
differently. The ledger's dataset identity writes numbers as :func:`number_text` does.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["NA_TOKENS", "normalise_cell", "normalise_column", "number_text", "parse_numbers"]

#: The cell texts that mean missing (pandas' defaults, and ``.``).
NA_TOKENS = frozenset(
    [
        "",
        ".",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    ]
)


def normalise_cell(value: str | None) -> str | None:
    """A cell as compared with public labels: stripped, Unicode NFC, None when missing.

    Examples
    --------
    >>> normalise_cell("  Cafe\\u0301 "), normalise_cell(" NA "), normalise_cell("")
    ('Café', None, None)
    """
    if value is None:
        return None
    v = value.strip()
    if v in NA_TOKENS:
        return None
    if not v.isascii():
        v = unicodedata.normalize("NFC", v)
    return v


def normalise_column(col, extra=frozenset(), ascii_only=False):
    """:func:`normalise_cell` over a column, at list-comprehension speed."""
    na = NA_TOKENS | extra if extra else NA_TOKENS
    out = [None if not isinstance(c, str) or (v := c.strip()) in na else v for c in col]
    if not ascii_only and not all(c.isascii() for c in out if c is not None):
        out = [
            None if c is None or (v := unicodedata.normalize("NFC", c)) in na else v for c in out
        ]
    return out


def parse_numbers(
    cells: Sequence[str | None] | pd.Series, decimal: str = ".", words: bool = False
) -> np.ndarray:
    """Each cell as a number on its own, NaN where it does not read as one.

    Parameters
    ----------
    cells : sequence of str or None
    decimal : {".", ","}
        With ``","`` a cell such as ``3,5`` (one comma, no dot) reads as 3.5; a dot always
        works. The choice is the file's (its delimiter), never the other cells'.
    words : bool
        Also read yes/no, true/false, y/n as 1/0 (for a column the dictionary calls binary).

    Returns
    -------
    ndarray of float

    Examples
    --------
    >>> parse_numbers(["1", " 2.5", "3,5", "x", None], decimal=",")
    array([1. , 2.5, 3.5, nan, nan])
    """
    s = cells if isinstance(cells, pd.Series) else pd.Series(list(cells), dtype=object)
    if decimal == ",":  # per cell: "3,5" is 3.5; "1,2,3" or "1.5,2" still read as nothing
        s = s.str.replace(",", ".", regex=False)
    # to_numeric with coerce reads each cell on its own: one bad cell is NaN, nothing else moves
    num = np.array(pd.to_numeric(s, errors="coerce"), dtype=float)  # a writable copy
    if words:
        todo = np.isnan(num) & s.notna().to_numpy()
        if todo.any():  # the cells that did not read, each on its own: a yes/no word
            idx = np.flatnonzero(todo)
            texts = s.iloc[idx].map(lambda v: _WORDS.get(v.casefold(), v))
            num[idx] = np.asarray(pd.to_numeric(texts, errors="coerce"), dtype=float)
    return num


_WORDS = {"yes": "1", "no": "0", "true": "1", "false": "0", "y": "1", "n": "0"}


def number_text(x: float) -> str:
    """A finite number as the canonical text every dataset identity compares: an integer
    without its ``.0``, else the shortest repr (``1``, ``2.5``, ``1e+20``)."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 2**53 else repr(x)
