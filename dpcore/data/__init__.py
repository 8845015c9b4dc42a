"""Data: reading a randomized trial from a CSV file into checked arrays.

- :mod:`dpcore.data.csv_io`: the file's bytes (encoding, delimiter, decimal mark, header).
- :mod:`dpcore.data.columns`: columns to arrays (numbers, treatment labels, one-hot levels).
- :mod:`dpcore.data.trial`: :class:`Trial` and :func:`read_trial`.
"""

from .csv_io import TrialDataError
from .trial import Trial, read_trial

__all__ = ["Trial", "TrialDataError", "read_trial"]
