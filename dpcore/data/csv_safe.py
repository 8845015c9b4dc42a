"""Every CSV the project writes goes through here: cells a spreadsheet would run are neutralised.

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (also after
leading spaces or invisible characters such as a zero-width space or a byte-order mark, or in
its full-width Unicode form, as in ``＝``) is prefixed with ``'``, so
that Excel, LibreOffice or Google Sheets show it as text instead of evaluating a formula
(OWASP's "CSV injection"). Numbers are left untouched (a float column's ``-1.5`` stays a
number); text is guarded whatever follows, as OWASP advises (``"+1"`` as text becomes
``'+1``: some spreadsheets run ``+1+cmd|...`` as a formula). A cell holding a line
end (LF or a bare CR) is quoted, so it stays one cell and cannot split its row.

Use :func:`write_csv` for a DataFrame, :func:`write_rows` for rows of cells (a dictionary's)
and :func:`neutral` for a single cell.
"""

from __future__ import annotations

import csv
import io
import os
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, overload

__all__ = ["FORMULA_START", "neutral", "neutral_frame", "write_csv", "write_rows"]

#: The first characters that make a spreadsheet evaluate a cell (the Unicode minus too).
FORMULA_START = ("=", "+", "-", "\u2212", "@", "\t", "\r")
# Characters a spreadsheet may skip, or a reader may show as nothing, before a formula prefix:
# spaces and separators, format characters (zero-width space U+200B, joiners, the byte-order
# mark U+FEFF, U+2060) and control characters.
_INVISIBLE = frozenset({"Zs", "Zl", "Zp", "Cf", "Cc"})


def _visible_start(text: str) -> str:
    """``text`` from its first character that is not invisible (:data:`_INVISIBLE`)."""
    for i, ch in enumerate(text):
        if unicodedata.category(ch) not in _INVISIBLE:
            return text[i:]
    return ""


def neutral(cell: Any, *, keep_numbers: bool = False) -> Any:
    """A cell a spreadsheet will not run as a formula.

    Parameters
    ----------
    cell : object
        A cell value. Only text can be a formula: anything else is returned as it is.
    keep_numbers : bool, default False
        Leave text that reads as a number (``"-10.0"``) as it is: for writers, such as the
        data dictionary's, whose numbers reach the file as text and must read back as numbers.

    Returns
    -------
    object
        ``"'" + cell`` for text that starts (after spaces or invisible characters, in NFKC
        form) with one of :data:`FORMULA_START`; otherwise ``cell``.

    Examples
    --------
    >>> [neutral(c) for c in ("=1+2", " @SUM(A1)", "-1.5", -1.5, "plain", "\u200b=1+2")]
    ["'=1+2", "' @SUM(A1)", "'-1.5", -1.5, 'plain', "'\u200b=1+2"]
    """
    if not isinstance(cell, str) or not cell:
        return cell
    folded = unicodedata.normalize("NFKC", cell)
    heads = (cell, folded.lstrip(" "), _visible_start(folded))
    if not any(head.startswith(FORMULA_START) for head in heads):
        return cell
    if keep_numbers:
        try:
            float(cell)
        except ValueError:
            pass
        else:
            return cell
    return "'" + cell


def neutral_frame(frame: Any) -> Any:
    """A copy of a DataFrame with every text cell and every header neutralised."""
    import pandas as pd

    out = frame.copy()
    out.columns = [neutral(c) if isinstance(c, str) else c for c in out.columns]
    if not isinstance(out.index, pd.RangeIndex):
        out.index = out.index.map(neutral)
    for j in range(out.shape[1]):
        column = out.iloc[:, j]
        if column.dtype == object or isinstance(column.dtype, pd.StringDtype):
            out.isetitem(j, column.astype(object).map(neutral))
        elif isinstance(column.dtype, pd.CategoricalDtype):
            out.isetitem(
                j, column.cat.rename_categories([neutral(c) for c in column.cat.categories])
            )
    return out


def _has_cr(frame: Any) -> bool:
    import pandas as pd

    texts = [c for c in frame.columns if isinstance(c, str)]
    for j in range(frame.shape[1]):
        column = frame.iloc[:, j]
        if column.dtype == object or isinstance(column.dtype, pd.StringDtype):
            texts.extend(v for v in column.dropna().unique() if isinstance(v, str))
        elif isinstance(column.dtype, pd.CategoricalDtype):
            texts.extend(str(v) for v in column.cat.categories)
    return any("\r" in t for t in texts)


def write_rows(rows: Iterable[Sequence[Any]], *, keep_numbers: bool = False) -> str:
    """Rows of cells as CSV text (LF line ends), every text cell neutralised (:func:`neutral`).

    A row holding a bare CR in a cell is written with every cell quoted: :mod:`csv` quotes a
    cell only for the characters of its own line terminator, and a reader that takes CR as a
    line end (a spreadsheet, Python's universal newlines) would otherwise split the row.

    Examples
    --------
    >>> print(write_rows([["a", "b"], ["=1", "x"]]), end="")
    a,b
    '=1,x
    >>> write_rows([["one", "x\\ry"]])
    '"one","x\\ry"\\n'
    """
    out = io.StringIO()
    plain = csv.writer(out, lineterminator="\n")
    quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    for row in rows:
        cells = [neutral(c, keep_numbers=keep_numbers) for c in row]
        has_cr = any(isinstance(c, str) and "\r" in c for c in cells)
        (quoted if has_cr else plain).writerow(cells)
    return out.getvalue()


@overload
def write_csv(frame: Any, path_or_buf: None = None, **to_csv: Any) -> str: ...
@overload
def write_csv(
    frame: Any, path_or_buf: str | os.PathLike[str] | Any, **to_csv: Any
) -> str | None: ...
def write_csv(
    frame: Any, path_or_buf: str | os.PathLike[str] | Any = None, **to_csv: Any
) -> str | None:
    """Write a DataFrame as CSV with every text cell neutralised.

    Parameters
    ----------
    frame : pandas.DataFrame
    path_or_buf : str, Path, text file or None
        Where to write; None returns the text.
    **to_csv
        Passed to :meth:`pandas.DataFrame.to_csv` (``index=False`` is the default here).
        Quoting is at least minimal, so a cell with a line end is quoted whole.

    Returns
    -------
    str or None
        The CSV text when ``path_or_buf`` is None.
    """
    to_csv.setdefault("index", False)
    if to_csv.get("quoting", csv.QUOTE_MINIMAL) == csv.QUOTE_NONE:
        raise ValueError("quoting=csv.QUOTE_NONE would let a line end inside a cell split its row")
    safe = neutral_frame(frame)
    if "\r" not in to_csv.get("lineterminator", "\n") and _has_cr(safe):
        # pandas quotes a cell holding the line terminator's characters only: a bare CR would
        # end the row in a reader that takes CR as a line end. Quote every text cell then.
        if to_csv.get("quoting", csv.QUOTE_MINIMAL) == csv.QUOTE_MINIMAL:
            to_csv["quoting"] = csv.QUOTE_NONNUMERIC
    text = safe.to_csv(None, **to_csv)
    if path_or_buf is None:
        return text
    if isinstance(path_or_buf, (str, os.PathLike)):
        Path(path_or_buf).write_text(text, encoding="utf-8", newline="")
    else:
        path_or_buf.write(text)
    return None
