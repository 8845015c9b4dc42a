"""A CSV file's records gathered into its kept columns, chunk by chunk: text cells normalised,
the numeric columns read as numbers at once.

Two readers fill the same :class:`Columns`: pandas' C reader (:func:`fast_columns`), once
:func:`dpcore.data.csv_io.read_cells` has checked that every record is one physical line of
the header's width, and otherwise each line split on its own (:func:`slow_columns`). Either way
a cell's value depends on that cell alone.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import numpy as np
import pandas as pd

from .cells import NA_TOKENS, normalise_column, parse_numbers
from .csv_lines import line_records

__all__ = ["CHUNK", "Columns", "fast_columns", "slow_columns"]


class Columns:
    """The kept columns, gathered chunk by chunk: text normalised, numbers parsed at once."""

    def __init__(self, names, numeric, extra, ascii_only, decimal):
        self.names, self.numeric, self.extra = names, numeric, extra
        self.ascii_only, self.decimal = ascii_only, decimal
        self.reset()

    def reset(self):
        self.text: dict[str, list[Any]] = {c: [] for c in self.names if c not in self.numeric}
        self.nums: dict[str, list[Any]] = {c: [] for c in self.names if c in self.numeric}
        self.present: dict[str, list[Any]] = {c: [] for c in self.nums}
        self.example = {}
        self.rows = 0

    def add(self, columns):
        """One chunk: a list of raw cell lists, in the order of ``names``."""
        for name, col in zip(self.names, columns):
            norm = normalise_column(col, self.extra, self.ascii_only)
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
                self._add_numbers(name, normalise_column(cells, self.extra, self.ascii_only))
            else:
                self.text[name].extend(normalise_column(cells, self.extra, self.ascii_only))
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


CHUNK = 100_000


def fast_columns(data, encoding, start, delimiter, width, keep, n, out):
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
            na_values={j: sorted(NA_TOKENS | out.extra) for j in numeric},
            keep_default_na=False,
            skipinitialspace=True,
            true_values=[],
            false_values=[],
            skip_blank_lines=True,
            index_col=False,
            engine="c",
            chunksize=CHUNK,
            decimal=out.decimal if delimiter != "," else ".",
        )
        rows = 0
        for chunk in chunks:
            out.add_frame(chunk, keep)
            rows += len(chunk)
    except (ValueError, pd.errors.ParserError, csv.Error):
        return False
    return rows == n


def slow_columns(lines, start, delimiter, width, keep):
    """The kept columns' raw cells in chunks, splitting each physical line on its own."""
    rows = []
    for _, r in line_records(lines, start, delimiter):
        if len(r) < width:
            r = r + [""] * (width - len(r))  # a short row: its last cells are missing
        rows.append([r[j] for j in keep])
        if len(rows) == CHUNK:
            yield [list(col) for col in zip(*rows)] if keep else []
            rows = []
    if rows:
        yield [list(col) for col in zip(*rows)] if keep else []
