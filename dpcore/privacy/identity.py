"""A dataset's identity in the privacy ledger: its patients, whatever the file looks like.

A dataset is the multiset of its rows, and a row the multiset of its cells as the reader
reads them, without column names: it does not depend on the file's encoding, delimiter,
quoting, line ends, byte-order mark, column names, column order or row order. Each cell is
normalised without looking at any other cell (:func:`row_cell`): stripped, Unicode NFC and
casefolded, a number written canonically (``1``, ``1.0`` and ``1e0`` agree) and the usual
binary codings folded together (``yes``/``no``, ``y``/``n``, ``true``/``false``, ``t``/``f``
read as ``1``/``0``). Re-saving a trial in a spreadsheet, upper-casing its arm labels,
writing a binary column as yes/no, renaming a column or using fewer of its columns in a
release gives the same dataset, so the same budget and the same cap.

A file is keyed over all its columns (:meth:`dpcore.PrivacyLedger.for_file`): a release from
a file always has the file's bytes, so whatever columns or dictionary it uses, it is charged
to the file's dataset. A :class:`dpcore.Trial` without its file is keyed over the columns it
holds, rebuilt as cells (:func:`cells_from_trial`): a file-based and an array-based release
of the same patients are the same dataset, or linked through their rows, only when their
rows agree (the file has no other column).

Two keyed digests come out of it, both under the ledger file's secret salt:

- one per row, stored in the ledger when something is released on (or a cap set for) the
  dataset, so that a later file sharing rows with it (a subset, one patient's value changed)
  is charged to both;
- one for the dataset, over its sorted row digests and the scope of the person keying it
  (the user name on a department server, empty on one machine): the ledger key. Two users
  keying the same file get two keys, so a key never tells one user that another has the data.

Without the ledger's salt neither reveals anything about the data (a row's digest cannot be
looked up in a table of guessed rows); with it, anyone holding the ledger can test whether a
guessed row is in a dataset, which is why the ledger file is private to its keeper (0600).

Ledgers written before keep their datasets: :mod:`dpcore.privacy.identity_legacy` computes
their keys (``ds2-``: the used columns' cells with their names; the first ledgers' HMAC of a
file's bytes) so that a file is linked to its earlier record.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "DatasetIdentity",
    "KEY_PREFIX",
    "ROW_BYTES",
    "check_salt",
    "column_names",
    "cells_from_trial",
    "dataset_identity",
    "is_dataset_key",
    "keyed_digests",
    "normalise_cell",
    "normalise_cells",
    "row_cell",
    "row_keys",
]

#: The number of bytes kept of each row's digest (128 bits: no accidental collisions).
ROW_BYTES = 16
#: The prefix of today's dataset keys (the identity's version).
KEY_PREFIX = "ds3-"
_VERSION = b"dpcore-dataset/3"
#: The usual binary codings, casefolded, and the number each reads as.
BINARY_CODES = {
    "yes": "1",
    "no": "0",
    "y": "1",
    "n": "0",
    "true": "1",
    "false": "0",
    "t": "1",
    "f": "0",
}


def normalise_cell(value: Any) -> str:
    """One cell as the text the identity compares.

    Parameters
    ----------
    value : str, number, bool or None
        A cell as read (text, or a number a reader already parsed).

    Returns
    -------
    str
        Spaces stripped and Unicode NFC; a value that reads as a finite number, on its own
        (:func:`dpcore.data.cells.parse_numbers`), is written as the file reader writes it
        (:func:`dpcore.data.cells.number_text`), so :func:`dpcore.data.normalised_cells`
        and this agree; a missing value (None, NaN, empty text) is ``""``.

    Examples
    --------
    >>> [normalise_cell(v) for v in (" 1", 1, "1.0", "01", None, float("nan"), "Café", 2.5)]
    ['1', '1', '1', '1', '', '', 'Café', '2.5']
    """
    from ..data.cells import normalise_cell as normalise_text
    from ..data.cells import number_text, parse_numbers

    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        x = float(value)
        return "" if math.isnan(x) else number_text(x)
    text = normalise_text(str(value))  # as the file reader: stripped, NFC, NA words missing
    if text is None:
        return ""
    x = float(parse_numbers([text])[0])
    return number_text(x) if math.isfinite(x) else text


@dataclass(frozen=True)
class DatasetIdentity:
    """The ledger key of a dataset and its rows' keyed digests.

    Attributes
    ----------
    key : str
        ``"ds3-"`` and 64 hexadecimal characters: the dataset's key in the ledger
        (``"ds2-"`` for :func:`dpcore.privacy.identity_legacy.legacy_identity`).
    columns : tuple of str
        The column names as given, stripped, NFC and sorted (not part of the key).
    row_hashes : tuple of bytes
        One keyed digest per row (ROW_BYTES bytes), in the rows' order.
    """

    key: str
    columns: tuple[str, ...]
    row_hashes: tuple[bytes, ...]

    @property
    def n(self) -> int:
        """The number of rows."""
        return len(self.row_hashes)


def row_cell(value: Any) -> str:
    """One cell as a row's identity compares it: :func:`normalise_cell`, then casefolded
    (and NFC again), with the usual binary codings read as ``1``/``0``.

    Data-independent: each cell on its own, the same rule for every file.

    Examples
    --------
    >>> [row_cell(v) for v in ("Yes", " N ", "TRUE", True, 0.0, "1e0", "Placebo", "STRASSE")]
    ['1', '0', '1', '1', '0', '1', 'placebo', 'strasse']
    """
    return _fold(normalise_cell(value))


def _fold(text: str) -> str:
    if not text:
        return text
    folded = text.casefold()
    if not folded.isascii():
        folded = unicodedata.normalize("NFC", folded)
    return BINARY_CODES.get(folded, folded)


def dataset_identity(
    cells: Mapping[str, Sequence[Any]], salt: bytes, *, scope: str = ""
) -> DatasetIdentity:
    """The identity of a dataset given as its columns' cells.

    Parameters
    ----------
    cells : mapping of str to sequence
        ``{column name: [cell, ...]}``, every column with one cell per row. Cells are text
        (or numbers); each is read with :func:`row_cell`. The names are not part of the
        identity: a row is the multiset of its cells.
    salt : bytes
        The ledger file's secret salt (:meth:`dpcore.privacy.ledger.sqlite.SQLiteStore.salt`).
    scope : str, optional
        Whose key this is: ``""`` on one machine, the user name on a department server. The
        dataset key depends on it, the row digests do not (they link datasets within what a
        user may see).

    Returns
    -------
    DatasetIdentity

    Raises
    ------
    TypeError
        ``cells`` not a mapping of names to sequences, ``salt`` not bytes or ``scope`` not
        text.
    ValueError
        Columns of different lengths.

    Examples
    --------
    >>> a = dataset_identity({"arm": ["Treated", "control"], "y": [" 2.5", "yes"]}, b"salt")
    >>> b = dataset_identity({"Y": ["1", "2.50"], "ARM": ["CONTROL", "treated"]}, b"salt")
    >>> a.key == b.key, a.key.startswith("ds3-")
    (True, True)
    >>> dataset_identity({"arm": ["1"]}, b"salt", scope="ann").key == dataset_identity(
    ...     {"arm": ["1"]}, b"salt"
    ... ).key
    False
    """
    check_salt(salt)
    if not isinstance(scope, str):
        raise TypeError(f"scope must be text (a user name, or empty), got {scope!r}")
    names = column_names(cells)
    columns = [_folded_json(values) for values in cells.values()]
    lengths = {len(v) for v in columns}
    if len(lengths) != 1:
        raise ValueError(f"every column needs one cell per row; got lengths {sorted(lengths)}")
    n = lengths.pop()
    # Each row as the JSON list of its cells in one fixed order (sorted text): the multiset of
    # its cells, whatever the columns' names and order.
    if n:
        import pandas as pd

        # Codes in the sorted order of the distinct cells (sorting the few distinct values,
        # not every cell), then each row's codes sorted: its cells in one fixed order.
        codes, uniques = pd.factorize(np.concatenate(columns), sort=True)
        order = np.sort(np.asarray(codes).reshape(len(columns), n).T, axis=1)
        words = list(uniques)
        texts = ["[" + ",".join(map(words.__getitem__, r)) + "]" for r in order.tolist()]
    else:
        texts = []
    digest, rows = keyed_digests(salt, _VERSION, texts, scope)
    return DatasetIdentity(KEY_PREFIX + digest, tuple(sorted(names)), rows)


def check_salt(salt: Any) -> None:
    """Refuse a salt that is not non-empty bytes (the ledger's, never a text)."""
    if not isinstance(salt, (bytes, bytearray)) or not salt:
        raise TypeError(f"salt must be non-empty bytes, got {type(salt).__name__}")


def keyed_digests(
    salt: bytes, version: bytes, texts: Sequence[str], label: object
) -> tuple[str, tuple[bytes, ...]]:
    """(dataset digest, row digests) of rows written as ``texts``, under ``salt``.

    Each row's digest is a keyed BLAKE2b of its text (ROW_BYTES bytes); the dataset's is an
    HMAC-SHA-256 over ``label`` (JSON: the scope, or the column names), the number of rows and
    the sorted row digests (the multiset of rows: row order does not matter). ``version``
    names the identity, so two versions never share a digest.
    """
    key = hashlib.sha256(bytes(salt) + version + b"/row").digest()
    blake = hashlib.blake2b
    rows = [blake(t.encode("utf-8"), key=key, digest_size=ROW_BYTES).digest() for t in texts]
    mac = hmac.new(bytes(salt), version + b"/dataset", hashlib.sha256)
    mac.update(json.dumps(label, ensure_ascii=False).encode("utf-8"))
    mac.update(len(rows).to_bytes(8, "big"))
    for h in sorted(rows):
        mac.update(h)
    return mac.hexdigest(), tuple(rows)


def row_keys(cells: Mapping[str, Sequence[Any]]) -> np.ndarray:
    """One unkeyed 64-bit hash per row of these columns (in their order), each cell read by
    :func:`row_cell`: to compare two tables' rows in memory, never to store.

    Two tables whose rows agree once re-cased, re-coded (yes/no for 1/0) or re-written (1.0
    for 1) give the same hashes: the check that a "public" D0 holds none of the trial's
    patients (privacy rule 8) compares these.

    Examples
    --------
    >>> a = row_keys({"arm": ["Treated", "Control"], "smoker": ["1", "0"]})
    >>> b = row_keys({"arm": ["CONTROL", "treated"], "smoker": ["no", "yes"]})
    >>> sorted(a.tolist()) == sorted(b.tolist())
    True
    """
    import pandas as pd

    column_names(cells)
    frame = pd.DataFrame({str(j): _folded_json(v) for j, v in enumerate(cells.values())})
    return pd.util.hash_pandas_object(frame, index=False).to_numpy()


def column_names(cells: Mapping[str, Sequence[Any]]) -> list[str]:
    """The column names, stripped and NFC, once each cell list is known to be a sequence."""
    if not isinstance(cells, Mapping) or not cells:
        raise TypeError(
            "cells must be a non-empty mapping {column name: [cell, ...]}, "
            f"got {type(cells).__name__}"
        )
    names = []
    for name, values in cells.items():
        if not isinstance(name, str):
            raise TypeError(f"each column name must be text, got {name!r}")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
            raise TypeError(
                f"the cells of column {name!r} must be a sequence, got {type(values).__name__}"
            )
        names.append(unicodedata.normalize("NFC", name.strip()))
    return names


def _folded_json(values: Sequence[Any]) -> np.ndarray:
    """Each cell as :func:`row_cell` and JSON-quoted, as an object array; each distinct
    value read once."""
    import pandas as pd

    series = pd.Series(values if hasattr(values, "dtype") else np.asarray(values, dtype=object))
    if series.dtype == bool:
        series = series.astype(object)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    quoted = [json.dumps(_fold(t), ensure_ascii=False) for t in normalise_cells(list(uniques))]
    # The sentinel -1 picks the last entry: a missing cell, "".
    return np.asarray(quoted + ['""'], dtype=object)[codes]


def normalise_cells(values: Sequence[Any]) -> list[str]:
    """:func:`normalise_cell` of each value, read as a column at vector speed.

    The text cells are read as numbers in one :func:`dpcore.data.cells.parse_numbers`
    call, which reads each cell on its own, so every result equals ``normalise_cell`` of
    that value alone: no cell can change how another is written (a file of 10⁶ distinct
    values is read in about a second instead of several minutes).

    Examples
    --------
    >>> normalise_cells([" 1", 1, "1.0", "01", None, float("nan"), "Café", 2.5, True])
    ['1', '1', '1', '1', '', '', 'Café', '2.5', 'True']
    """
    from ..data.cells import normalise_cell as normalise_text
    from ..data.cells import number_text, parse_numbers

    out: list[str] = []
    texts: dict[int, str] = {}  # position: normalised text still to be read as a number
    for value in values:
        if isinstance(value, str):
            text = normalise_text(value)
            if text is not None:
                texts[len(out)] = text
            out.append("")
        else:
            out.append(normalise_cell(value))
    numbers = parse_numbers(list(texts.values()))
    for (i, text), x in zip(texts.items(), numbers.tolist()):
        out[i] = number_text(x) if math.isfinite(x) else text
    return out


def is_dataset_key(key: Any) -> bool:
    """Whether ``key`` has the form of a ledger key: ``ds3-`` (or an earlier version's
    ``ds2-``) + 64 hex (content), or 64 hex (the byte digests of the first ledgers)."""
    if not isinstance(key, str):
        return False
    body = key[4:] if key.startswith(("ds3-", "ds2-")) else key
    return len(body) == 64 and all(c in "0123456789abcdef" for c in body)


def cells_from_trial(trial: Any) -> dict[str, list[str]]:
    """The used columns' cells of a :class:`dpcore.Trial`, rebuilt from its arrays.

    The treatment column is each row's arm label, the outcome and the numeric covariates
    their values, a one-hot encoded column its level (the baseline where no indicator is
    set) and the propensity column its values; a missing value is ``""``. For a trial read
    with ``incomplete="keep"`` and levels that match the file's cells, this equals
    the normalised cells of the file's used columns: when the file has no other column,
    :meth:`PrivacyLedger.for_trial` and :meth:`PrivacyLedger.for_file` give the same dataset,
    and otherwise they are only linked through rows that agree (none, when the file has a
    column the trial does not hold).
    """
    A = np.asarray(trial.A)
    treated, control = trial.arms
    out: dict[str, list[str]] = {
        trial.treatment: [normalise_cell(treated if a > 0 else control) for a in A],
        trial.outcome: [normalise_cell(v) for v in np.asarray(trial.B, dtype=float)],
    }
    X = np.asarray(trial.X, dtype=float)
    index = {c: j for j, c in enumerate(trial.covariates)}
    done = set()
    for c in trial.covariates:
        base = next(
            (
                col
                for col, levels in trial.categories.items()
                if any(c == f"{col}={lev}" for lev in levels[1:])
            ),
            None,
        )
        if base is None:
            out[c] = [normalise_cell(v) for v in X[:, index[c]]]
        elif base not in done:
            done.add(base)
            levels = list(trial.categories[base])
            column = [normalise_cell(levels[0])] * X.shape[0]
            for lev in levels[1:]:
                j = index.get(f"{base}={lev}")
                if j is None:
                    continue
                for i in np.flatnonzero(X[:, j] == 1):
                    column[i] = normalise_cell(lev)
                for i in np.flatnonzero(np.isnan(X[:, j])):
                    column[i] = ""
            out[base] = column
    if trial.propensity_column and trial.propensity is not None:
        out[trial.propensity_column] = [normalise_cell(v) for v in np.asarray(trial.propensity)]
    return out
