"""The keys of ledgers written before today's identity, so that a file finds its earlier record.

- ``ds2-`` keys (:func:`legacy_identity`): the used columns' cells with their names, without
  casefolding or binary folding.
- The first ledgers' byte keys (:func:`byte_key`): an HMAC of a file's bytes and name, which a
  trailing newline or a re-saved file changes.

:meth:`dpcore.PrivacyLedger.for_file` links a file to the records these keys name; new records
are keyed by :func:`dpcore.privacy.identity.dataset_identity`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .identity import DatasetIdentity, check_salt, column_names, keyed_digests, normalise_cells

__all__ = ["byte_key", "legacy_identity"]

_VERSION_2 = b"dpcore-dataset/2"


def byte_key(salt: bytes, data: bytes, name: str = "") -> str:
    """HMAC-SHA-256 of ``name`` and ``data`` under ``salt`` (the version-1 dataset key)."""
    label = name.encode("utf-8")
    mac = hmac.new(salt, len(label).to_bytes(8, "big") + label, hashlib.sha256)
    mac.update(bytes(data))
    return mac.hexdigest()


def legacy_identity(cells: Mapping[str, Sequence[Any]], salt: bytes) -> DatasetIdentity:
    """The ``ds2-`` identity of ledgers written before this version: the used columns' cells.

    Kept so that a file is found again in a ledger that recorded it under a ``ds2-`` key
    (:meth:`dpcore.PrivacyLedger.for_file` links the two). Unlike :func:`~dpcore.privacy.identity.dataset_identity` it
    includes the column names and does not casefold or fold binary codings.

    Parameters
    ----------
    cells : mapping of str to sequence
        ``{column name: [cell, ...]}`` for the columns the release uses, every column with
        one cell per row. Cells are text (or numbers); each is normalised with
        :func:`~dpcore.privacy.identity.normalise_cell`, column names are stripped and NFC.
    salt : bytes
        The ledger file's secret salt (:meth:`dpcore.privacy.ledger.sqlite.SQLiteStore.salt`).

    Returns
    -------
    DatasetIdentity
        Its key starts ``ds2-``; its columns are the normalised names, sorted.

    Raises
    ------
    TypeError
        ``cells`` not a mapping of names to sequences, or ``salt`` not bytes.
    ValueError
        No column, columns of different lengths, or two names equal once normalised.

    Examples
    --------
    >>> a = legacy_identity({"arm": ["1", "0"], "y": [" 2.5", "3"]}, b"salt")
    >>> b = legacy_identity({"y": ["3.0", "2.5"], "arm": ["0", "1.0"]}, b"salt")
    >>> a.key == b.key, a.key.startswith("ds2-")
    (True, True)
    """
    check_salt(salt)
    columns: dict[str, np.ndarray] = {}
    for key, values in zip(column_names(cells), cells.values()):
        if key in columns:
            raise ValueError(f"two used columns are both named {key!r} once normalised")
        columns[key] = _json_cells(values)
    lengths = {len(v) for v in columns.values()}
    if len(lengths) != 1:
        raise ValueError(f"every used column needs one cell per row; got lengths {sorted(lengths)}")
    order = sorted(columns)
    # Each row as the JSON text of its (name, cell) pairs, unambiguous whatever a cell holds,
    # built column by column (vectorised over rows).
    template = (
        "["
        + ",".join(
            "[" + json.dumps(c, ensure_ascii=False).replace("{", "{{").replace("}", "}}") + ",{}]"
            for c in order
        )
        + "]"
    )
    texts = list(map(template.format, *(columns[c].tolist() for c in order)))
    digest, rows = keyed_digests(salt, _VERSION_2, texts, order)
    return DatasetIdentity("ds2-" + digest, tuple(order), rows)


def _json_cells(values: Sequence[Any]) -> np.ndarray:
    """Each cell normalised and JSON-quoted, as an object array; each distinct value once."""
    import pandas as pd

    series = pd.Series(np.asarray(values, dtype=object) if not hasattr(values, "dtype") else values)
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        x = series.to_numpy(dtype=float)
        out = np.array([f'"{v!r}"' for v in x.tolist()], dtype=object)
        out[np.isnan(x)] = '""'
        return out
    if series.dtype == bool:
        series = series.map(str)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    quoted = [json.dumps(u, ensure_ascii=False) for u in normalise_cells(list(uniques))]
    # The sentinel -1 picks the last entry: a missing cell, "".
    return np.asarray(quoted + ['""'], dtype=object)[codes]
