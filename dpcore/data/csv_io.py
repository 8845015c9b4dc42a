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
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Union

import numpy as np
import pandas as pd

#: What the readers accept: a path, the bytes of a file, or an open binary or text file.
Source = Union[str, "os.PathLike[str]", bytes, IO[Any]]

_SAMPLE_BYTES = 64 * 1024
_DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_NA_TOKENS = frozenset(
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
_BLANK_LINE = re.compile(r"^[ \t\f\v\r]*$\n?", re.M)  # an empty or whitespace-only line
_BINARY_MAGIC = {
    b"PK\x03\x04": "a zip archive (an Excel .xlsx or .ods workbook is one)",
    b"\xd0\xcf\x11\xe0": "an old Excel .xls workbook",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"\x1f\x8b": "a gzip archive",
    b"PAR1": "a Parquet file",
}


class TrialDataError(ValueError):
    """A CSV file or a column choice that cannot be read as a two-arm randomized trial.

    The message is plain text meant for the person who uploaded the file; it quotes at most a
    short excerpt of the data (a column name, a label or one value).
    """


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
    raw = _read_source(source, limit=_SAMPLE_BYTES)
    enc, skip = _encoding(raw, encoding)
    text = codecs.getincrementaldecoder(enc)(errors="replace").decode(raw[skip:], final=False)
    _check_text(raw, text)
    if len(raw) >= _SAMPLE_BYTES and "\n" in text:
        text = text[: text.rfind("\n") + 1]  # the last line may be cut
    header, delim, lines, start = _split(text, delimiter)
    records = _records(lines, start, delim, limit=n_rows)
    width = len(header)
    rows = tuple(tuple((list(map(str.strip, r)) + [""] * width)[:width]) for _, r in records)
    return CsvPreview(tuple(header), rows, delim, enc, _decimal(delim))


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
    raw = _read_source(source)
    enc, skip = _encoding(raw, encoding)
    text = _decode(raw, enc, skip)
    _check_text(raw, text[:_SAMPLE_BYTES])
    header, delim, lines, start = _split(text, delimiter)
    width = len(header)
    names = list(header) if columns is None else [c for c in header if c in set(columns)]
    keep = [header.index(c) for c in names]
    end = len(text) - 1 if text.endswith("\n") else len(text)
    body = _line_start(text, start) if start < len(lines) else end
    if (
        '"' not in text
        and not _BLANK_LINE.search(text, body, end)
        and text.count(delim, body) == (width - 1) * (len(lines) - start)
    ):
        # no quote, no blank line and the header's field count on every line (the delimiters
        # add up): every line after the header is a record of the header's width
        numbers, simple = list(range(start + 1, len(lines) + 1)), True
    else:
        numbers, simple = _check_lines(lines, start, delim, width)
    if not numbers:
        raise TrialDataError(
            f"the file has a header ({_name_list(header, limit=8)}) but no data rows"
        )
    simple = simple and text.count("\r") == text.count("\r\n")
    extra = frozenset(v for v in map(normalise_cell, missing_values or ()) if v is not None)
    ascii_only = text.isascii()
    out = _Columns(names, numeric or {}, extra, ascii_only, _decimal(delim))
    del text  # pandas reads the bytes (decoding them as they were checked to decode)
    done = simple and _fast_columns(raw[skip:], enc, start, delim, width, keep, len(numbers), out)
    if not done:
        out.reset()
        for chunk in _slow_columns(lines, start, delim, width, keep):
            out.add(chunk)
    del lines
    cells, nums, present, example = out.result()
    lines = np.asarray(numbers, dtype=np.int64)
    return CellTable(
        tuple(header), cells, lines, delim, enc, _decimal(delim), nums, present, example
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
    if v in _NA_TOKENS:
        return None
    if not v.isascii():
        v = unicodedata.normalize("NFC", v)
    return v


def _normalise_column(col, extra=frozenset(), ascii_only=False):
    """:func:`normalise_cell` over a column, at list-comprehension speed."""
    na = _NA_TOKENS | extra if extra else _NA_TOKENS
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
        raise TrialDataError(f"no column named {_name_list(unknown)} in the file")
    out = {}
    for c in names:
        cells = table.cells[c]
        num = parse_numbers(cells, table.decimal)
        out[c] = [
            "" if v is None else (number_text(x) if finite else v)
            for v, x, finite in zip(cells, num.tolist(), np.isfinite(num).tolist())
        ]
    return out


def number_text(x: float) -> str:
    """A finite number as the canonical text every dataset identity compares: an integer
    without its ``.0``, else the shortest repr (``1``, ``2.5``, ``1e+20``)."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 2**53 else repr(x)


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


def _read_source(source, limit=None):
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source[:limit] if limit else source)
    elif isinstance(source, (str, os.PathLike)):
        if isinstance(source, str) and "\n" in source:
            raise TypeError("source looks like CSV text, not a path: wrap it in io.StringIO")
        try:
            with open(source, "rb") as fh:
                data = fh.read(-1 if limit is None else limit)
        except OSError as exc:
            raise TrialDataError(f"cannot open {_q(os.fspath(source))}: {exc.strerror}") from None
    elif hasattr(source, "getvalue"):
        data = source.getvalue()
        data = data[:limit] if limit else data
    elif hasattr(source, "read"):
        pos = source.tell() if limit and source.seekable() else None
        data = source.read(-1 if limit is None else limit)
        if pos is not None:
            source.seek(pos)
    else:
        raise TypeError(
            f"source must be a path, bytes or a file object, got {type(source).__name__}"
        )
    if isinstance(data, str):
        data = data.encode("utf-8")
    return data


def _encoding(raw, declared):
    """(encoding, bytes to skip): a byte-order mark at the start, else the declared one."""
    if not isinstance(declared, str):
        raise TypeError(f"encoding must be the name of an encoding (str), got {declared!r:.60}")
    try:
        codecs.lookup(declared)
    except LookupError:
        raise ValueError(
            f"encoding={declared!r} is not an encoding Python knows "
            "(e.g. 'utf-8', 'cp1252', 'latin-1')"
        ) from None
    if not raw or raw.isspace():  # isspace stops at the first other byte; strip would copy
        raise TrialDataError("the file is empty")
    if raw.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", 0
    return codecs.lookup(declared).name, 0


def _decode(raw, encoding, skip):
    try:
        return raw[skip:].decode(encoding)
    except UnicodeDecodeError as exc:
        _check_text(raw, raw[:_SAMPLE_BYTES].decode(encoding, errors="replace"))
        pos = skip + exc.start
        line = raw.count(b"\n", 0, pos) + 1
        byte = raw[pos : pos + 1].hex().upper()
        hint = (
            "save it as UTF-8 (in Excel: CSV UTF-8), or declare its encoding "
            "(encoding='cp1252' for Windows, 'latin-1')"
            if encoding.startswith("utf")
            else "declare the encoding it was saved in"
        )
        raise TrialDataError(
            f"the file is not valid {encoding}: byte 0x{byte} at line {line} (byte {pos + 1} of "
            f"the file) cannot be read; {hint}"
        ) from None


#: Control characters other than the whitespace ones (tab, line feed, vertical tab, form feed,
#: carriage return): a few in a text file, many in a binary one.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def _check_text(raw, text):
    for magic, what in _BINARY_MAGIC.items():
        if raw.startswith(magic):
            raise TrialDataError(f"this is {what}, not a CSV file; save or export it as CSV first")
    control = sum(1 for _ in _CONTROL.finditer(text))
    if control > max(2, len(text) // 1000):
        raise TrialDataError(
            "this does not look like a CSV text file (it holds binary data); "
            "upload a comma-, semicolon- or tab-separated text file"
        )


def _split(text, delimiter=None):
    """(header, delimiter, lines, start): the header read; the records are ``lines[start:]``."""
    text = text.lstrip("\ufeff")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" in text and "\n" not in text:
        raise TrialDataError(
            "the file's lines end in a bare carriage return (old Mac format); "
            "save it with Windows or Unix line ends"
        )
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        raise TrialDataError("the file is empty")
    # Excel writes "sep=;" as a first line to name the delimiter.
    declared = re.fullmatch(r"sep=([,;\t|])", lines[first].strip("\ufeff"))
    if declared:
        delimiter = delimiter or declared[1]
        first = next((i for i in range(first + 1, len(lines)) if lines[i].strip()), None)
        if first is None:
            raise TrialDataError("the file is empty")
    if delimiter is None:
        delimiter = _header_delimiter(lines[first])
    elif delimiter not in _DELIMITERS:
        raise ValueError(
            f"delimiter must be one of {', '.join(map(repr, _DELIMITERS))}, got {delimiter!r}"
        )
    header = _fields(lines[first], first + 1, delimiter)
    header = [normalise_cell(h) or "" for h in header]
    header = [h if h else f"Unnamed: {i}" for i, h in enumerate(header)]
    dup = _duplicates(header)
    if dup:
        raise TrialDataError(
            f"the header names {_name_list(dup)} more than once; give every column a different name"
        )
    return header, delimiter, lines, first + 1


def _line_start(text, k):
    """The offset in ``text`` where its line ``k`` (0-based) starts."""
    pos = 0
    for _ in range(k):
        pos = text.index("\n", pos) + 1
    return pos


def _check_lines(lines, start, delimiter, width):
    """Physical line numbers of the records, after the checks that refuse a file.

    A quote left open at a line's end, or a row with more (non-empty) fields than the header,
    refuses the file naming its line. Also says whether the fast column reader applies (no
    whitespace-only line, no row with extra empty fields).
    """
    numbers, simple = [], True
    for i in range(start, len(lines)):
        ln = lines[i]
        if not ln:
            continue
        if ln.isspace():
            simple = False
            continue
        numbers.append(i + 1)
        if '"' in ln:
            fields = _fields(ln, i + 1, delimiter)
            count = len(fields)
        else:
            fields, count = None, ln.count(delimiter) + 1
        if count > width:
            fields = fields if fields is not None else ln.split(delimiter)
            if any(v.strip() for v in fields[width:]):
                raise TrialDataError(
                    f"line {i + 1} has {count} fields but the header names {width} columns; "
                    f"check the delimiter ({_DELIMITER_NAMES[delimiter]}) and the quoting"
                )
            simple = False
    return numbers, simple


class _Columns:
    """The kept columns, gathered chunk by chunk: text normalised, numbers parsed at once."""

    def __init__(self, names, numeric, extra, ascii_only, decimal):
        self.names, self.numeric, self.extra = names, numeric, extra
        self.ascii_only, self.decimal = ascii_only, decimal
        self.reset()

    def reset(self):
        self.text = {c: [] for c in self.names if c not in self.numeric}
        self.nums = {c: [] for c in self.names if c in self.numeric}
        self.present = {c: [] for c in self.nums}
        self.example = {}
        self.rows = 0

    def add(self, columns):
        """One chunk: a list of raw cell lists, in the order of ``names``."""
        for name, col in zip(self.names, columns):
            norm = _normalise_column(col, self.extra, self.ascii_only)
            if name in self.nums:
                self._add_numbers(name, norm)
            else:
                self.text[name].extend(norm)
        self.rows += len(columns[0]) if columns else 0

    def add_frame(self, chunk, keep):
        """One chunk from pandas: text columns as strings, numeric ones as pandas read them.

        A numeric column that pandas read as numbers (float or int: every cell a number or a
        missing word) holds each cell's correctly rounded value, which is what
        :func:`parse_numbers` gives the same cell (a test checks it bit for bit); any other
        column of the chunk (a cell that is not a number, a yes/no word, a trailing space)
        is read cell by cell as text. Either way a cell's number depends on that cell alone.
        """
        text = []
        for name, j in zip(self.names, keep):
            col = chunk[j]
            if name in self.nums and col.dtype.kind in "fiu":
                v = col.to_numpy(dtype=float)
                here = ~np.isnan(v)
                self.nums[name].append(np.where(np.isfinite(v), v, np.nan))
                self.present[name].append(here)
            else:
                cells = [
                    v if isinstance(v, str) else "" if v is None or v != v else str(v)
                    for v in col.tolist()
                ]
                text.append((name, cells))
        saved = self.rows
        for name, cells in text:
            self.rows = saved
            if name in self.nums:
                self._add_numbers(name, _normalise_column(cells, self.extra, self.ascii_only))
            else:
                self.text[name].extend(_normalise_column(cells, self.extra, self.ascii_only))
        self.rows = saved + len(chunk)

    def _add_numbers(self, name, norm):
        v = parse_numbers(norm, self.decimal, words=bool(self.numeric[name]))
        here = np.fromiter((c is not None for c in norm), dtype=bool, count=len(norm))
        v = np.where(np.isfinite(v) & here, v, np.nan)
        bad = here & np.isnan(v)
        if name not in self.example and bad.any():
            i = int(np.argmax(bad))
            self.example[name] = (self.rows + i, norm[i])
        self.nums[name].append(v)
        self.present[name].append(here)

    def result(self):
        nums = {c: np.concatenate(v) if v else np.empty(0) for c, v in self.nums.items()}
        present = {
            c: np.concatenate(v) if v else np.empty(0, bool) for c, v in self.present.items()
        }
        return self.text, nums, present, self.example


_CHUNK = 100_000


def _fast_columns(data, encoding, start, delimiter, width, keep, n, out):
    """The kept columns by pandas' C reader, in chunks, into ``out``; False to read them line
    by line instead.

    Used only after the checks of :func:`read_cells`: no quoted field spans a line, so
    pandas' records are the physical lines; their count is checked all the same.
    """
    if not keep:
        return True
    try:
        numeric = {j for name, j in zip(out.names, keep) if name in out.nums}
        chunks = pd.read_csv(
            io.BytesIO(data),
            encoding=encoding,
            sep=delimiter,
            header=None,
            skiprows=start,
            names=list(range(width)),
            usecols=keep,
            dtype={j: str for j in keep if j not in numeric},
            na_values={j: sorted(_NA_TOKENS | out.extra) for j in numeric},
            keep_default_na=False,
            skipinitialspace=True,
            true_values=[],
            false_values=[],
            skip_blank_lines=True,
            index_col=False,
            engine="c",
            chunksize=_CHUNK,
            decimal=out.decimal if delimiter != "," else ".",
        )
        rows = 0
        for chunk in chunks:
            out.add_frame(chunk, keep)
            rows += len(chunk)
    except (ValueError, pd.errors.ParserError, csv.Error):
        return False
    return rows == n


def _slow_columns(lines, start, delimiter, width, keep):
    """The kept columns' raw cells in chunks, splitting each physical line on its own."""
    rows = []
    for _, r in _records(lines, start, delimiter):
        if len(r) < width:
            r = r + [""] * (width - len(r))  # a short row: its last cells are missing
        rows.append([r[j] for j in keep])
        if len(rows) == _CHUNK:
            yield [list(col) for col in zip(*rows)] if keep else []
            rows = []
    if rows:
        yield [list(col) for col in zip(*rows)] if keep else []


def _records(lines, start, delimiter, limit=None):
    """(line number, fields) of each non-blank line from ``start``, read one at a time."""
    count = 0
    for i in range(start, len(lines)):
        ln = lines[i]
        if not ln or ln.isspace():
            continue
        # most lines hold no quote: the delimiter splits them (as the csv module would)
        yield i + 1, (ln.split(delimiter) if '"' not in ln else _fields(ln, i + 1, delimiter))
        count += 1
        if limit is not None and count >= limit:
            return


def _fields(line, number, delimiter):
    """One physical line's fields; a quote left open at the line's end refuses the file.

    The reader is given the line and an empty sentinel line: a field whose quote is still
    open at the end of the line would read on into the sentinel, which ``line_num`` shows.
    """
    if '"' not in line:  # no quoting: the delimiter splits the line (most lines)
        return line.split(delimiter)
    reader = csv.reader((line, ""), delimiter=delimiter, skipinitialspace=True)
    try:
        row = next(reader, [])
    except csv.Error as exc:  # a NUL byte, for instance
        raise TrialDataError(f"line {number} cannot be read as CSV ({exc})") from None
    if reader.line_num > 1:
        raise TrialDataError(
            f"line {number}: a quoted field is not closed on its line (a stray quote character "
            "opens one); a field may not run past the end of its line, so the file is refused "
            "rather than rows merged. Close the quote or remove the stray quote character"
        )
    return row


def _header_delimiter(line):
    """The candidate that splits the header line into the most fields (>= 2), first on ties."""
    best, best_count = ",", 1
    for d in _DELIMITERS:
        try:
            count = len(next(csv.reader((line,), delimiter=d, skipinitialspace=True)))
        except (csv.Error, StopIteration):
            continue
        if count > best_count:
            best, best_count = d, count
    return best


def _decimal(delimiter):
    return "." if delimiter == "," else ","


# --------------------------------------------------------------------------------------------
# Quoting user text in messages


def _duplicates(values):
    seen, dup = set(), []
    for v in values:
        if v in seen and v not in dup:
            dup.append(v)
        seen.add(v)
    return dup


def _q(value, limit=40):
    """A short, printable, quoted excerpt of a user value."""
    text = "".join(ch if ch.isprintable() else "?" for ch in str(value))
    return f"'{text[:limit]}…'" if len(text) > limit else f"'{text}'"


def _name_list(names, limit=10):
    names = list(names)
    shown = ", ".join(_q(c) for c in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
