"""Data: reading a randomized trial from a CSV file into checked arrays, and its dictionary.

- :mod:`dpcore.data.csv_io`: the file's bytes (encoding, delimiter, decimal mark, header).
- :mod:`dpcore.data.columns`: columns to arrays (numbers, treatment labels, one-hot levels).
- :mod:`dpcore.data.trial`: :class:`Trial` and :func:`read_trial`.
- :mod:`dpcore.data.dictionary`, :mod:`dpcore.data.dictionary_read`: the public data dictionary
  and :func:`read_dictionary`.
"""

from .csv_io import TrialDataError
from .dictionary import Dictionary, DictionaryError
from .dictionary_read import read_dictionary
from .trial import Trial, read_trial

__all__ = ["Dictionary", "DictionaryError", "Trial", "TrialDataError", "read_dictionary",
           "read_trial"]
