"""Reading a CSV file's bytes cell by cell: one declared encoding, physical lines, public header.

The first stage of :func:`dpcore.data.read_trial`. How a file is read never depends on what
one patient's row holds (docs/architecture.md, privacy rules 8 and 10):

- **Encoding.** The whole file is decoded with one declared encoding (default UTF-8; a UTF-8
  or UTF-16 byte-order mark at the start is honoured). A file that is not valid in it is
  refused with the line and byte of the first invalid byte; the encoding is never guessed
  from the data (one Latin-1 byte in a note would otherwise change how every label reads).
- **Records are physical lines.** Each line after the header is one record; a quoted field
  may not run past the end of its line (the file is refused, naming the line), so no cell can
  merge rows and the number of records is the number of non-blank lines after the header.
  Refusing is the data-independent choice: a merged row would change the public n and every
  row after it, whereas a refusal publishes nothing. Whitespace-only lines are not records
  (no patient's row of a table with two or more columns can be blank).
- **Delimiter** declared, or detected from the header line alone (public: column names).
- **Cells** are text, stripped of surrounding spaces and put in Unicode NFC; the usual
  missing-value words (``""``, ``NA``, ``.``, ``NaN``, ``null``, ...) are missing. Numbers are
  read per cell (:func:`parse_numbers`): a cell that does not read as a number is missing,
  never a reason to read its column differently.

:class:`CellTable` is the result; :mod:`dpcore.data.columns` turns its columns into arrays.
The stages have a module each: :mod:`~dpcore.data.csv_lines` (bytes to header and records),
:mod:`~dpcore.data.csv_columns` (records to columns) and :mod:`~dpcore.data.cells` (one cell).
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Union

import numpy as np
import pandas as pd

from .cells import normalise_cell, number_text, parse_numbers
from .csv_columns import Columns, fast_columns, slow_columns
from .csv_lines import (
    BLANK_LINE,
    SAMPLE_BYTES,
    check_lines,
    check_text,
    decimal_mark,
    decode,
    encoding_of,
    line_records,
    line_start,
    read_source,
    split_header,
)
from .errors import TrialDataError, name_list

#: What the readers accept: a path, the bytes of a file, or an open binary or text file.
Source = Union[str, "os.PathLike[str]", bytes, IO[Any]]


@dataclass(frozen=True)
class CsvPreview:
    """The first rows of a CSV file as text, for a column-mapping screen (nothing converted).

    Attributes
    ----------
    columns : tuple of str
    rows : tuple of tuples of str
        Up to ``n_rows`` data rows, each padded or cut to the number of columns.
    delimiter, encoding, decimal : str
    """

    columns: tuple
    rows: tuple
    delimiter: str
    encoding: str
    decimal: str


@dataclass(frozen=True, eq=False)
class CellTable:
    """A CSV file as normalised text cells, one record per physical line.

    Attributes
    ----------
    header : tuple of str
        Column names (stripped, NFC; an empty name becomes ``Unnamed: i``).
    cells : dict
        ``{column: list}``: each record's cell as normalised text, or None when missing.
    lines : ndarray (n,)
        The physical line number (1-based, header counted) of each record.
    delimiter, encoding, decimal : str
        How the file was read; ``decimal`` is the mark a number cell may use besides the dot
        (``","`` for a semicolon, tab or pipe file, ``"."`` for a comma file).
    numbers, present, example : dict
        For the columns read as numbers: each cell's number (NaN when it is not one), which
        cells are present (not a missing-value word), and the first present cell that is not
        a number as ``(row index, text)``. Their text is not kept (``cells`` lacks them).
    """

    header: tuple
    cells: dict
    lines: np.ndarray
    delimiter: str
    encoding: str
    decimal: str
    numbers: dict = field(default_factory=dict)
    present: dict = field(default_factory=dict)
    example: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of records: the file's non-blank lines after the header."""
        return len(self.lines)

    def column(self, name: str) -> pd.Series:
        """One column's cells as an object Series (None where missing), indexed 0..n-1; a
        column read as numbers (``read_cells(numeric=...)``) as a float Series (NaN)."""
        if name in self.numbers:
            return pd.Series(self.numbers[name], dtype=float)
        return pd.Series(self.cells[name], dtype=object)


def preview_csv(
    source: Source, n_rows: int = 5, *, encoding: str = "utf-8", delimiter: str | None = None
) -> CsvPreview:
    """Column names and the first rows of a CSV file as text, read from its first 64 KB.

    Cheap: values are not converted, and a path or seekable file is not read past its head
    (a seekable file is put back where it was). Bytes not valid in ``encoding`` show as
    U+FFFD here; :func:`read_cells` refuses them.

    Parameters
    ----------
    source : str, path, bytes or file object
    n_rows : int
    encoding : str
        The file's declared encoding (a byte-order mark overrides it).
    delimiter : str, optional
        Default: detected from the header line.

    Returns
    -------
    CsvPreview

    Examples
    --------
    >>> preview_csv(b"arm;y\\ndrug;3,5\\nplacebo;4\\n").columns
    ('arm', 'y')
    """
    n_rows = int(n_rows)
    raw = read_source(source, limit=SAMPLE_BYTES)
    enc, skip = encoding_of(raw, encoding)
    text = codecs.getincrementaldecoder(enc)(errors="replace").decode(raw[skip:], final=False)
    check_text(raw, text)
    if len(raw) >= SAMPLE_BYTES and "\n" in text:
        text = text[: text.rfind("\n") + 1]  # the last line may be cut
    header, delim, lines, start = split_header(text, delimiter)
    records = line_records(lines, start, delim, limit=n_rows)
    width = len(header)
    rows = tuple(tuple((list(map(str.strip, r)) + [""] * width)[:width]) for _, r in records)
    return CsvPreview(tuple(header), rows, delim, enc, decimal_mark(delim))


def read_cells(
    source: Source,
    *,
    encoding: str = "utf-8",
    delimiter: str | None = None,
    missing_values: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    numeric: dict | None = None,
) -> CellTable:
    """The whole file as normalised text cells (see the module docstring for the rules).

    Parameters
    ----------
    source : str, path, bytes or file object
    encoding : str
        The file's one encoding (default ``"utf-8"``; a byte-order mark overrides it). A file
        with a byte that is not valid in it is refused.
    delimiter : {",", ";", "\\t", "|"}, optional
        Default: the candidate that splits the header line into the most fields (Excel's
        ``sep=;`` first line names it too).
    missing_values : sequence of str, optional
        More cell texts that mean missing (a dictionary's ``missing_values``, e.g. ``-99``).
    columns : sequence of str, optional
        Keep the cells of these columns only (every line is still read and checked; the
        header lists every column). Default all.
    numeric : dict, optional
        ``{column: words}``: read these columns as numbers, cell by cell
        (:func:`parse_numbers`, ``words`` for yes/no cells), in chunks, so that a large file's
        text is never held at once.

    Returns
    -------
    CellTable

    Raises
    ------
    TrialDataError
        The file is empty, binary, not valid in ``encoding``, has a quoted field that runs
        past its line, or a row with more fields than the header.

    Examples
    --------
    >>> t = read_cells(b"arm;y\\n drug ;3,5\\nplacebo;NA\\n")
    >>> t.cells, t.delimiter, t.n
    ({'arm': ['drug', 'placebo'], 'y': ['3,5', None]}, ';', 2)
    """
    raw = read_source(source)
    enc, skip = encoding_of(raw, encoding)
    text = decode(raw, enc, skip)
    check_text(raw, text[:SAMPLE_BYTES])
    header, delim, lines, start = split_header(text, delimiter)
    width = len(header)
    names = list(header) if columns is None else [c for c in header if c in set(columns)]
    keep = [header.index(c) for c in names]
    end = len(text) - 1 if text.endswith("\n") else len(text)
    body = line_start(text, start) if start < len(lines) else end
    if (
        '"' not in text
        and not BLANK_LINE.search(text, body, end)
        and text.count(delim, body) == (width - 1) * (len(lines) - start)
    ):
        # no quote, no blank line and the header's field count on every line (the delimiters
        # add up): every line after the header is a record of the header's width
        numbers, simple = list(range(start + 1, len(lines) + 1)), True
    else:
        numbers, simple = check_lines(lines, start, delim, width)
    if not numbers:
        raise TrialDataError(
            f"the file has a header ({name_list(header, limit=8)}) but no data rows"
        )
    simple = simple and text.count("\r") == text.count("\r\n")
    extra = frozenset(v for v in map(normalise_cell, missing_values or ()) if v is not None)
    ascii_only = text.isascii()
    out = Columns(names, numeric or {}, extra, ascii_only, decimal_mark(delim))
    del text  # pandas reads the bytes (decoding them as they were checked to decode)
    done = simple and fast_columns(raw[skip:], enc, start, delim, width, keep, len(numbers), out)
    if not done:
        out.reset()
        for chunk in slow_columns(lines, start, delim, width, keep):
            out.add(chunk)
    del lines
    cells, nums, present, example = out.result()
    lines = np.asarray(numbers, dtype=np.int64)
    return CellTable(
        tuple(header), cells, lines, delim, enc, decimal_mark(delim), nums, present, example
    )


def normalised_cells(
    source: Any,
    columns: Sequence[str] | None = None,
    *,
    encoding: str = "utf-8",
    delimiter: str | None = None,
) -> dict[str, list[str]]:
    """Each column's cells as canonical text, independent of how the file was written.

    For a dataset identity that survives re-saving: the same values give the same lists
    whatever the encoding, delimiter, quoting, line ends or column order. A number reads
    as its shortest float text (``1``, ``01``, ``1.0`` and ``1,0`` in a semicolon file are all
    ``"1"``); other text is stripped and NFC; a missing cell is ``""``.

    Parameters
    ----------
    source : CellTable, or what :func:`read_cells` reads
    columns : sequence of str, optional
        Default every column.
    encoding, delimiter : as in :func:`read_cells`

    Returns
    -------
    dict ``{column: [text per record]}``

    Examples
    --------
    >>> normalised_cells(b"a;b\\n01;x\\n1,5; y \\n")
    {'a': ['1', '1.5'], 'b': ['x', 'y']}
    """
    table = (
        source
        if isinstance(source, CellTable)
        else read_cells(source, encoding=encoding, delimiter=delimiter, columns=columns)
    )
    names = list(table.header if columns is None else columns)
    unknown = [c for c in names if c not in table.cells]
    if unknown:
        raise TrialDataError(f"no column named {name_list(unknown)} in the file")
    out = {}
    for c in names:
        cells = table.cells[c]
        num = parse_numbers(cells, table.decimal)
        out[c] = [
            "" if v is None else (number_text(x) if finite else v)
            for v, x, finite in zip(cells, num.tolist(), np.isfinite(num).tolist())
        ]
    return out


# --------------------------------------------------------------------------------------------
# Reading bytes, the encoding, splitting lines


def read_table(
    source: Source, *, encoding: str = "utf-8", delimiter: str | None = None
) -> pd.DataFrame:
    """The whole file as a DataFrame, for display and for applying a rule to new rows.

    Read as :func:`read_cells` reads it; then a column whose every present cell is a number
    is converted to numbers (a display convenience that looks at the whole column: a private
    release reads cells with :func:`dpcore.data.read_trial`, never through this).
    """
    table = read_cells(source, encoding=encoding, delimiter=delimiter)
    frame = {}
    for c in table.header:
        s = table.column(c)
        num = parse_numbers(s, table.decimal)
        present = s.notna().to_numpy()
        frame[c] = pd.Series(num) if present.any() and np.isfinite(num[present]).all() else s
    return pd.DataFrame(frame, columns=list(table.header))
