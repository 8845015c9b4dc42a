"""Data: reading a randomized trial from a CSV file into checked arrays, and its dictionary.

- :mod:`dpcore.data.csv_io`: the file's bytes to normalised text cells, one declared encoding,
  one record per physical line (:func:`read_cells`, :func:`normalised_cells`); its stages
  :mod:`~dpcore.data.csv_lines` (bytes to records), :mod:`~dpcore.data.csv_columns` (records
  to columns) and :mod:`~dpcore.data.cells` (one cell, one number).
- :mod:`dpcore.data.labels`: labels compared by :func:`~dpcore.data.labels.label_key`, the
  treated arm a pair of labels names.
- :mod:`dpcore.data.columns`: cells to arrays (numbers per cell, arms, one-hot levels, public
  fill-in values).
- :mod:`dpcore.data.roles`: the columns' roles, guessed from names, given or from a dictionary.
- :mod:`dpcore.data.trial`: :class:`Trial` and :func:`read_trial`.
- :mod:`dpcore.data.dictionary`: the public data dictionary (``docs/dictionary.md``),
  :func:`read_dictionary` and :func:`check_dictionary`.
- :mod:`dpcore.data.errors`: :class:`TrialDataError` and how messages quote a user's text;
  :mod:`dpcore.data.csv_safe`: CSV files written safe for spreadsheets.
"""

from .csv_io import CellTable, normalised_cells, read_cells
from .dictionary import Dictionary, DictionaryError, Problem
from .dictionary.check import check_dictionary
from .dictionary.read import read_dictionary
from .errors import TrialDataError
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
