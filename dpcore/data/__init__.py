"""Data: reading a randomized trial from a CSV file into checked arrays, and its dictionary.

- :mod:`dpcore.data.csv_io`: the file's bytes to normalised text cells, one declared encoding,
  one record per physical line (:func:`read_cells`, :func:`normalised_cells`).
- :mod:`dpcore.data.columns`: cells to arrays (numbers per cell, labels compared by
  :func:`~dpcore.data.columns.label_key`, one-hot levels).
- :mod:`dpcore.data.trial`: :class:`Trial` and :func:`read_trial`.
- :mod:`dpcore.data.dictionary`, :mod:`dpcore.data.dictionary_read`,
  :mod:`dpcore.data.dictionary_check`: the public data dictionary (``docs/dictionary.md``),
  :func:`read_dictionary` and :func:`check_dictionary`.
"""

from .csv_io import CellTable, TrialDataError, normalised_cells, read_cells
from .dictionary import Dictionary, DictionaryError, Problem
from .dictionary_check import check_dictionary
from .dictionary_read import read_dictionary
from .trial import Trial, read_trial

__all__ = [
    "CellTable",
    "Dictionary",
    "DictionaryError",
    "Problem",
    "Trial",
    "TrialDataError",
    "check_dictionary",
    "normalised_cells",
    "read_cells",
    "read_dictionary",
    "read_trial",
]
