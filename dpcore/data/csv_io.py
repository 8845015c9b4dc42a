"""Reading a CSV file's bytes: encoding, delimiter, decimal mark, header, and a cheap preview.

The first stage of :func:`dpcore.data.read_trial`: bytes (from a path, a buffer or a file
object) become a pandas DataFrame of text and numbers, with every way a file can fail to be a
CSV reported as a :class:`TrialDataError` the user can act on. Nothing here knows about
treatments or outcomes; :mod:`dpcore.data.columns` turns the columns into arrays.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
import warnings
from dataclasses import dataclass
from typing import IO, Any, Union

import numpy as np
import pandas as pd

#: What the readers accept: a path, the bytes of a file, or an open binary or text file.
Source = Union[str, "os.PathLike[str]", bytes, IO[Any]]

_SAMPLE_BYTES = 64 * 1024
_DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
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



def preview_csv(source: Source, n_rows: int = 5) -> CsvPreview:
    """Column names and the first rows of a CSV file as text, read from its first 64 KB.

    Cheap: values are not converted, and a path or seekable file is not read past its head
    (a seekable file is put back where it was).

    Parameters
    ----------
    source : str, path, bytes or file object
    n_rows : int

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
    fmt = _sniff(raw, complete=len(raw) < _SAMPLE_BYTES)
    width = len(fmt["header"])
    rows = tuple(tuple((list(map(str.strip, r)) + [""] * width)[:width]) for r in fmt["rows"][:n_rows])
    return CsvPreview(tuple(fmt["header"]), rows, fmt["delimiter"], fmt["encoding"], fmt["decimal"])


# --------------------------------------------------------------------------------------------
# Reading bytes, sniffing the format, parsing


def read_table(source: Source) -> pd.DataFrame:
    """The whole file as a DataFrame (numbers where pandas reads numbers, text elsewhere).

    The format is sniffed as in :func:`read_trial`; column names are stripped and unique.
    """
    raw = _read_source(source)
    return _parse(raw, _sniff(raw, complete=True))


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
        raise TypeError(f"source must be a path, bytes or a file object, got {type(source).__name__}")
    if isinstance(data, str):
        data = data.encode("utf-8")
    return data


def _detect_encoding(raw, complete):
    """(encoding, bytes to skip): a BOM wins, then UTF-8, then Windows-1252, then Latin-1."""
    if raw.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", 0
    if raw.isascii():
        return "utf-8", 0
    for enc in ("utf-8", "cp1252"):
        try:
            codecs.getincrementaldecoder(enc)().decode(raw, final=complete)
            return enc, 0
        except UnicodeDecodeError:
            pass
    return "latin-1", 0


def _check_text(raw, text):
    for magic, what in _BINARY_MAGIC.items():
        if raw.startswith(magic):
            raise TrialDataError(f"this is {what}, not a CSV file; save or export it as CSV first")
    control = sum(1 for ch in text if (ord(ch) < 32 and ch not in "\t\n\r\f\v") or 127 <= ord(ch) < 160)
    if control > max(2, len(text) // 1000):
        raise TrialDataError(
            "this does not look like a CSV text file (it holds binary data); "
            "upload a comma-, semicolon- or tab-separated text file"
        )


def _sniff(raw, complete):
    """Encoding, delimiter, decimal mark, header and sample rows from the file's head."""
    if not raw or raw.isspace():  # isspace stops at the first other byte; strip would copy
        raise TrialDataError("the file is empty")
    encoding, skip = _detect_encoding(raw if complete else raw[:_SAMPLE_BYTES], complete)
    head = raw[skip:skip + _SAMPLE_BYTES]
    dec = codecs.getincrementaldecoder(encoding)(errors="replace")
    text = dec.decode(head, final=len(raw) <= skip + _SAMPLE_BYTES)
    _check_text(raw, text)
    if len(raw) > skip + _SAMPLE_BYTES and "\n" in text:
        text = text[: text.rfind("\n") + 1]  # the last line may be cut
    text = text.lstrip("\ufeff")
    # Excel writes "sep=;" as a first line to name the delimiter.
    declared = re.match(r"sep=([,;\t|])\r?\n", text)
    if declared:
        text = text[declared.end():]
    delimiter = declared[1] if declared else _sniff_delimiter(text)
    rows = _rows(text, delimiter)
    if not rows:
        raise TrialDataError("the file is empty")
    header = [h.strip() for h in rows[0]]
    header = [h if h else f"Unnamed: {i}" for i, h in enumerate(header)]
    dup = _duplicates(header)
    if dup:
        raise TrialDataError(
            f"the header names {_name_list(dup)} more than once; give every column a different name"
        )
    for i, r in enumerate(rows[1:]):
        if len(r) > len(header) and any(v.strip() for v in r[len(header):]):
            raise TrialDataError(
                f"data row {i + 1} has {len(r)} fields but the header names {len(header)} columns; "
                f"check the delimiter ({_DELIMITER_NAMES[delimiter]}) and the quoting"
            )
    return {"encoding": encoding, "skip": skip, "skiprows": int(bool(declared)),
            "delimiter": delimiter, "header": header,
            "rows": rows[1:], "decimal": _sniff_decimal(rows[1:], delimiter)}


def _rows(text, delimiter):
    try:
        return [r for r in csv.reader(io.StringIO(text), delimiter=delimiter, skipinitialspace=True) if r]
    except csv.Error as exc:
        raise TrialDataError(f"cannot read the file as CSV: {exc}") from None


def _sniff_delimiter(text):
    """The candidate giving the most rows with the header's field count (>= 2), then most fields."""
    lines = text.splitlines()[:50]
    best, best_score = ",", (0.0, 0)
    for d in _DELIMITERS:
        try:
            counts = [len(r) for r in csv.reader(lines, delimiter=d, skipinitialspace=True) if r]
        except csv.Error:
            continue
        if not counts or counts[0] < 2:
            continue
        score = (round(np.mean([c == counts[0] for c in counts]), 2), counts[0])
        if score > best_score:
            best, best_score = d, score
    return best


def _sniff_decimal(rows, delimiter):
    if delimiter == ",":
        return "."
    cells = [v.strip() for r in rows[:200] for v in r]
    comma = sum(bool(re.fullmatch(r"[+-]?\d*,\d+", v)) for v in cells)
    dot = sum(bool(re.fullmatch(r"[+-]?\d*\.\d+([eE][+-]?\d+)?", v)) for v in cells)
    return "," if comma and not dot else "."


def _parse(raw, fmt):
    data = io.BytesIO(raw[fmt["skip"]:] if fmt["skip"] else raw)  # BytesIO shares, not copies, raw
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            # Mixed types across the parser's chunks (numbers, then "NA ") are cleaned below.
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            df = pd.read_csv(
                data, sep=fmt["delimiter"], decimal=fmt["decimal"], encoding=fmt["encoding"],
                skiprows=fmt["skiprows"],
                encoding_errors="replace", skipinitialspace=True, index_col=False,
                na_values=["."], keep_default_na=True, engine="c",
            )
    except pd.errors.EmptyDataError:
        raise TrialDataError("the file is empty") from None
    except pd.errors.ParserError as exc:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        detail = (f"line {m[2]} has {m[3]} fields where {m[1]} were expected" if m
                  else "its rows do not split into the same columns")
        raise TrialDataError(
            f"cannot read the file as CSV: {detail}; check the delimiter "
            f"({_DELIMITER_NAMES[fmt['delimiter']]}) and the quoting"
        ) from None
    except (ValueError, UnicodeError, csv.Error) as exc:
        raise TrialDataError(f"cannot read the file as CSV ({type(exc).__name__})") from None
    if df.shape[1] != len(fmt["header"]):
        raise TrialDataError("cannot read the header row; check the delimiter and the quoting")
    df.columns = fmt["header"]
    if len(df) == 0:
        raise TrialDataError(
            f"the file has a header ({_name_list(fmt['header'], limit=8)}) but no data rows"
        )
    return df


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
