"""Read a randomized trial from a CSV file into arrays for DP-OWL (spec §5).

The reader turns a user's CSV (any common delimiter and encoding) into a :class:`Trial`:
covariates ``X``, treatment ``A`` in {-1, +1} (+1 = treated), outcomes ``B`` and, when the file
has one, a per-row propensity P(A = +1 | X). Everything a user can get wrong in a file ends in a
:class:`TrialDataError` whose message says what to change.

Nothing here reads a bound off the data: feature bounds, outcome bounds and the weight bound
stay public inputs (ARCHITECTURE.md, privacy rule 2). The returned trial carries no summary of
the data beyond the arrays themselves and the number of rows dropped for missing values.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: Fewest rows each arm needs after rows with missing values are dropped.
MIN_ROWS_PER_ARM = 10

_SAMPLE_BYTES = 64 * 1024
_DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_NA_TOKENS = frozenset(
    ["", ".", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
     "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]
)
_BINARY_MAGIC = {
    b"PK\x03\x04": "a zip archive (an Excel .xlsx or .ods workbook is one)",
    b"\xd0\xcf\x11\xe0": "an old Excel .xls workbook",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"\x1f\x8b": "a gzip archive",
    b"PAR1": "a Parquet file",
}
# Label pairs read as (treated, control) without asking, compared in lower case.
_TREATED_WORDS = frozenset(["treated", "treatment", "active", "drug", "intervention", "yes", "true", "t", "y"])
_CONTROL_WORDS = frozenset(["control", "placebo", "standard", "usual care", "no", "false", "c", "n"])


class TrialDataError(ValueError):
    """A CSV file or a column choice that cannot be read as a two-arm randomized trial.

    The message is plain text meant for the person who uploaded the file; it quotes at most a
    short excerpt of the data (a column name, a label or one value).
    """


@dataclass(frozen=True, eq=False)
class Trial:
    """A two-arm randomized trial read from a CSV file, ready for :class:`dpcore.DPOWL`.

    Attributes
    ----------
    X : ndarray (n, p)
        Covariates as floats, one-hot columns included (read-only).
    A : ndarray (n,)
        Treatment, +1 for the treated arm and -1 for the other (read-only).
    B : ndarray (n,)
        Outcomes as read, not clipped or shifted; the public outcome bounds are applied by
        :class:`dpcore.DPOWL` (read-only).
    propensity : ndarray (n,) or None
        P(A = +1 | X) per row when a propensity column was named; None otherwise (pass the
        known randomization probability to ``DPOWL.fit`` instead).
    covariates : tuple of str
        Names of the columns of ``X``; a categorical column ``site`` with levels A, B, C
        becomes ``site=B`` and ``site=C`` (A is the baseline).
    treatment, outcome : str
        The column names used.
    treated : label
        The label read as +1, as it appears in the file (e.g. ``1`` or ``"drug"``).
    arms : tuple
        The two labels, treated first: ``(treated, control)``.
    n_dropped : int
        Rows dropped because a used column was missing in them.
    propensity_column : str or None
    categories : dict
        For each one-hot encoded column, its levels with the baseline first.
    delimiter, encoding, decimal : str
        How the file was read, for showing back to the user.
    """

    X: np.ndarray
    A: np.ndarray
    B: np.ndarray
    propensity: np.ndarray | None
    covariates: tuple
    treatment: str
    outcome: str
    treated: object
    arms: tuple
    n_dropped: int
    propensity_column: str | None = None
    categories: dict = field(default_factory=dict)
    delimiter: str = ","
    encoding: str = "utf-8"
    decimal: str = "."

    @property
    def n(self):
        """Number of rows used."""
        return self.X.shape[0]

    def feature_bounds(self, bounds):
        """Public feature bounds in the column order of ``X``.

        Parameters
        ----------
        bounds : mapping
            ``{column: (lower, upper)}`` for each numeric covariate, entered by the user (or
            taken from a data dictionary), never read off the data. One-hot columns need no
            entry: their bounds are (0, 1).

        Returns
        -------
        (lower, upper) : two float arrays of length p, for ``DPOWL(feature_bounds=...)``.

        Examples
        --------
        >>> import io
        >>> csv = "age,arm,y\\n" + "".join(f"{30 + i},{i % 2},{i % 3}\\n" for i in range(40))
        >>> trial = read_trial(io.StringIO(csv), treatment="arm", outcome="y")
        >>> trial.feature_bounds({"age": (18, 90)})
        (array([18.]), array([90.]))
        """
        dummies = {f"{col}={lev}" for col, levels in self.categories.items() for lev in levels[1:]}
        missing = [c for c in self.covariates if c not in bounds and c not in dummies]
        if missing:
            raise TrialDataError(f"give public bounds (lower, upper) for {_name_list(missing)}")
        lower, upper = [], []
        for c in self.covariates:
            lo, hi = bounds.get(c, (0.0, 1.0))
            lower.append(float(lo))
            upper.append(float(hi))
        return np.array(lower), np.array(upper)


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


# --------------------------------------------------------------------------------------------
# Public functions


def read_trial(source, *, treatment, outcome, covariates=None, propensity=None, treated=None,
               categorical=None):
    """Read a two-arm randomized trial from a CSV file.

    Parameters
    ----------
    source : str, path, bytes or file object
        A path, the file's bytes, or an open binary or text file (a Streamlit upload works).
        Comma, semicolon, tab and pipe delimiters are recognised from the first 64 KB (or
        from Excel's ``sep=;`` first line); the encoding is UTF-8 (with or without BOM),
        UTF-16 with BOM, or else Windows-1252/Latin-1.
        With a semicolon or tab delimiter and only decimal commas in the sample ("1,5"), the
        comma is read as the decimal mark. Spaces around names and values are ignored;
        ``""``, ``NA``, ``.``, ``NaN``, ``null`` and the like are missing values.
    treatment : str
        Column holding the arm. Exactly two distinct labels are allowed: 0/1, -1/+1, 1/2,
        True/False or two strings.
    outcome : str
        Numeric outcome column (its direction and public bounds are given to DPOWL).
    covariates : list of str, optional
        Feature columns, in this order. Default: every other numeric column in file order,
        plus the ``categorical`` ones, leaving out unnamed columns and columns with no value.
    propensity : str, optional
        Column holding P(treated | X) for each row, strictly between 0 and 1. Leave it out
        when the randomization probability is a known constant and pass that to DPOWL.
    treated : label, optional
        The label of the treated arm (read as A = +1). Needed unless the labels are 0/1,
        -1/+1, True/False, or a recognised pair such as drug/placebo or treated/control.
        Labels 1/2 always need it: both conventions are common.
    categorical : list of str or dict, optional
        Covariates to one-hot encode (drop-first). A list reads the levels from the file and
        sorts them; a dict ``{column: [levels]}`` gives the levels publicly, baseline first, and
        a value outside them is an error. Levels read from the file are data: prefer the dict
        when the encoded column names will be shown next to a private release.

    Returns
    -------
    Trial

    Raises
    ------
    TrialDataError
        When the file or the column choice cannot be read as a two-arm trial; the message
        says what to change. Rows with a missing value in a used column are dropped and
        counted in ``Trial.n_dropped``; each arm needs ``MIN_ROWS_PER_ARM`` (10) rows left.
    TypeError
        When ``source`` or a column argument has the wrong type.

    Examples
    --------
    >>> import io
    >>> csv = "age;arm;days\\n" + "".join(
    ...     f"{40 + i % 30};{'drug' if i % 3 else 'placebo'};{5 + i % 4}\\n" for i in range(60))
    >>> trial = read_trial(io.StringIO(csv), treatment="arm", outcome="days")
    >>> trial.arms, trial.delimiter, trial.X.shape
    (('drug', 'placebo'), ';', (60, 1))
    >>> from dpcore import DPOWL
    >>> rule = DPOWL(epsilon=1.0, feature_bounds=trial.feature_bounds({"age": (18, 90)}),
    ...              outcome_bounds=(0, 30), larger_is_better=False, rng=0)
    >>> rule = rule.fit(trial.X, trial.A, trial.B, propensity=2 / 3)
    """
    _check_names(treatment, "treatment", single=True)
    _check_names(outcome, "outcome", single=True)
    if covariates is not None:
        covariates = _check_names(covariates, "covariates")
    if propensity is not None:
        _check_names(propensity, "propensity", single=True)
    categorical = _check_categorical(categorical)
    raw = _read_source(source)
    fmt = _sniff(raw, complete=True)
    df = _parse(raw, fmt)
    _check_roles(df.columns, treatment, outcome, propensity, covariates, categorical)
    if covariates is None:
        covariates = _default_covariates(df, treatment, outcome, propensity, categorical)
    if not covariates:
        raise TrialDataError(
            "no covariates to learn a rule from: the file has no other numeric column; "
            "name the covariates (and any categorical ones) explicitly"
        )
    used = list(dict.fromkeys([treatment, outcome, *covariates] + ([propensity] if propensity else [])))
    frame = {c: _clean(df[c]) for c in used}
    missing = pd.DataFrame({c: s.isna() for c, s in frame.items()})
    keep = ~missing.any(axis=1).to_numpy()
    n_dropped = int((~keep).sum())
    if not keep.any():
        worst = missing.sum().sort_values(ascending=False)
        raise TrialDataError(
            f"every one of the {len(df)} rows has a missing value in a used column "
            f"(most often {_q(worst.index[0])}, missing in {int(worst.iloc[0])} rows); "
            "leave that column out or fill it in"
        )
    frame = {c: s[keep] for c, s in frame.items()}
    A, arms = _encode_treatment(frame[treatment], treatment, treated)
    B = _numeric(frame[outcome], outcome, "outcome")
    if np.ptp(B) == 0:
        raise TrialDataError(
            f"outcome {_q(outcome)} has the same value in every row used; there is nothing to learn"
        )
    X, names, categories = _encode_covariates(frame, covariates, categorical)
    p = None
    if propensity is not None:
        p = _numeric(frame[propensity], propensity, "propensity")
        bad = (p <= 0) | (p >= 1)
        if bad.any():
            i = int(np.argmax(bad))
            raise TrialDataError(
                f"propensity column {_q(propensity)} must hold P(treated) strictly between 0 and 1, "
                f"found {p[i]:.4g} in data row {_row_number(frame[propensity], i)}"
                + ("; if it is a percentage, divide it by 100" if 1 < p[i] <= 100 else "")
            )
    _check_arm_sizes(A, arms, n_dropped)
    for a in (X, A, B) + ((p,) if p is not None else ()):
        a.setflags(write=False)
    return Trial(
        X=X, A=A, B=B, propensity=p, covariates=tuple(names), treatment=treatment,
        outcome=outcome, treated=arms[0], arms=arms, n_dropped=n_dropped,
        propensity_column=propensity, categories=categories, delimiter=fmt["delimiter"],
        encoding=fmt["encoding"], decimal=fmt["decimal"],
    )


def preview_csv(source, n_rows=5):
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


def guess_columns(columns):
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
    guess = {"treatment": None, "outcome": None, "propensity": None}
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
# Argument checks


def _check_names(value, name, single=False):
    if single:
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a column name (str), got {type(value).__name__}")
        return value
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a list of column names, got {value!r:.80}")
    value = list(value)
    dup = _duplicates(value)
    if dup:
        raise TrialDataError(f"{name} names {_name_list(dup)} more than once")
    return value


def _check_categorical(categorical):
    if categorical is None:
        return {}
    if isinstance(categorical, dict):
        out = {}
        for col, levels in categorical.items():
            _check_names(col, "categorical", single=True)
            levels = [_strip_label(v) for v in levels]
            if len(levels) < 1 or _duplicates(levels):
                raise TrialDataError(f"categorical levels of {_q(col)} must be distinct and not empty")
            out[col] = tuple(levels)
        return out
    return {c: None for c in _check_names(categorical, "categorical")}


def _check_roles(columns, treatment, outcome, propensity, covariates, categorical):
    """Every named column exists and plays one role."""
    named = [("treatment", treatment), ("outcome", outcome)]
    if propensity is not None:
        named.append(("propensity", propensity))
    named += [("covariate", c) for c in covariates or ()]
    named += [("categorical column", c) for c in categorical]
    unknown = [c for _, c in named if c not in columns]
    if unknown:
        hint = ""
        if all(_looks_numeric(c) for c in columns):
            hint = " The first row looks like data: add a header row with column names."
        elif len(columns) == 1:
            hint = " The file has a single column: is it separated by something other than comma, semicolon, tab or pipe?"
        raise TrialDataError(
            f"no column named {_name_list(unknown)} in the file; its columns are "
            f"{_name_list(columns, limit=25)}.{hint}"
        )
    roles = {}
    for role, c in named[: 2 + (propensity is not None)]:
        if c in roles:
            raise TrialDataError(f"column {_q(c)} is chosen both as {roles[c]} and as {role}")
        roles[c] = role
    for c in list(covariates or ()) + list(categorical):
        if c in roles:
            raise TrialDataError(f"column {_q(c)} is the {roles[c]}; it cannot also be a covariate")
    if covariates is not None:
        extra = [c for c in categorical if c not in covariates]
        if extra:
            raise TrialDataError(f"categorical column {_name_list(extra)} is not among the covariates")


def _default_covariates(df, treatment, outcome, propensity, categorical):
    out = []
    for c in df.columns:
        if c in (treatment, outcome, propensity) or c.startswith("Unnamed: "):
            continue
        if c in categorical:
            out.append(c)
            continue
        s = _clean(df[c])
        if s.notna().any() and _is_numeric(s):
            out.append(c)
    return out


# --------------------------------------------------------------------------------------------
# Reading bytes, sniffing the format, parsing


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


def _encode_covariates(frame, covariates, categorical):
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
        if outside.any():
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
    return np.ascontiguousarray(X, dtype=float), names, categories


def _check_arm_sizes(A, arms, n_dropped):
    for label, sign in zip(arms, (1.0, -1.0)):
        k = int(np.sum(A == sign))
        if k < MIN_ROWS_PER_ARM:
            after = f" after dropping {n_dropped} rows with missing values" if n_dropped else ""
            raise TrialDataError(
                f"arm {_q(label)} has {k} rows{after}; each arm needs at least {MIN_ROWS_PER_ARM}"
            )


# --------------------------------------------------------------------------------------------
# Small helpers


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


def _looks_numeric(name):
    try:
        float(name)
        return True
    except ValueError:
        return False


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


def _is_identifier(name):
    n = _norm(name)
    return n in _ID_NAMES or n.endswith("_id") or n.startswith("unnamed") or n == ""
