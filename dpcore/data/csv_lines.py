"""A CSV file's bytes to its header and records: one declared encoding, physical lines, a
delimiter read from the public header.

The first stage of :func:`dpcore.data.csv_io.read_cells` (the module docstring there has the
rules): the file is decoded with one declared encoding (a byte-order mark honoured, never
guessed from the data), refused when it is binary or not valid in it; each non-blank line after
the header is one record, and a quoted field may not run past its line.
"""

from __future__ import annotations

import codecs
import csv
import os
import re

from .cells import normalise_cell
from .errors import TrialDataError, duplicates, file_bytes, name_list

__all__ = [
    "BLANK_LINE",
    "DELIMITERS",
    "SAMPLE_BYTES",
    "check_lines",
    "check_text",
    "decimal_mark",
    "decode",
    "encoding_of",
    "line_fields",
    "line_start",
    "read_source",
    "line_records",
    "split_header",
]

#: How much of a file a preview (and the binary check) reads.
SAMPLE_BYTES = 64 * 1024
DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
BLANK_LINE = re.compile(r"^[ \t\f\v\r]*$\n?", re.M)  # an empty or whitespace-only line
_BINARY_MAGIC = {
    b"PK\x03\x04": "a zip archive (an Excel .xlsx or .ods workbook is one)",
    b"\xd0\xcf\x11\xe0": "an old Excel .xls workbook",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"\x1f\x8b": "a gzip archive",
    b"PAR1": "a Parquet file",
}


def read_source(source, limit=None):
    """The bytes of a path, bytes or file object (the first ``limit`` of them); a seekable
    file read in part is put back where it was."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source[:limit] if limit else source)
    elif isinstance(source, (str, os.PathLike)):
        if isinstance(source, str) and "\n" in source:
            raise TypeError("source looks like CSV text, not a path: wrap it in io.StringIO")
        data = file_bytes(source, limit=limit)
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


def encoding_of(raw, declared):
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


def decode(raw, encoding, skip):
    try:
        return raw[skip:].decode(encoding)
    except UnicodeDecodeError as exc:
        check_text(raw, raw[:SAMPLE_BYTES].decode(encoding, errors="replace"))
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


def check_text(raw, text):
    for magic, what in _BINARY_MAGIC.items():
        if raw.startswith(magic):
            raise TrialDataError(f"this is {what}, not a CSV file; save or export it as CSV first")
    control = sum(1 for _ in _CONTROL.finditer(text))
    if control > max(2, len(text) // 1000):
        raise TrialDataError(
            "this does not look like a CSV text file (it holds binary data); "
            "upload a comma-, semicolon- or tab-separated text file"
        )


def split_header(text, delimiter=None):
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
        delimiter = header_delimiter(lines[first])
    elif delimiter not in DELIMITERS:
        raise ValueError(
            f"delimiter must be one of {', '.join(map(repr, DELIMITERS))}, got {delimiter!r}"
        )
    header = line_fields(lines[first], first + 1, delimiter)
    header = [normalise_cell(h) or "" for h in header]
    header = [h if h else f"Unnamed: {i}" for i, h in enumerate(header)]
    dup = duplicates(header)
    if dup:
        raise TrialDataError(
            f"the header names {name_list(dup)} more than once; give every column a different name"
        )
    return header, delimiter, lines, first + 1


def line_start(text, k):
    """The offset in ``text`` where its line ``k`` (0-based) starts."""
    pos = 0
    for _ in range(k):
        pos = text.index("\n", pos) + 1
    return pos


def check_lines(lines, start, delimiter, width):
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
            fields = line_fields(ln, i + 1, delimiter)
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


def line_records(lines, start, delimiter, limit=None):
    """(line number, fields) of each non-blank line from ``start``, read one at a time."""
    count = 0
    for i in range(start, len(lines)):
        ln = lines[i]
        if not ln or ln.isspace():
            continue
        # most lines hold no quote: the delimiter splits them (as the csv module would)
        yield i + 1, (ln.split(delimiter) if '"' not in ln else line_fields(ln, i + 1, delimiter))
        count += 1
        if limit is not None and count >= limit:
            return


def line_fields(line, number, delimiter):
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


def header_delimiter(line):
    """The candidate that splits the header line into the most fields (>= 2), first on ties."""
    best, best_count = ",", 1
    for d in DELIMITERS:
        try:
            count = len(next(csv.reader((line,), delimiter=d, skipinitialspace=True)))
        except (csv.Error, StopIteration):
            continue
        if count > best_count:
            best, best_count = d, count
    return best


def decimal_mark(delimiter):
    return "." if delimiter == "," else ","
