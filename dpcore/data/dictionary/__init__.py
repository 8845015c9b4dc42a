r"""A trial's public data dictionary: roles, types, units, bounds, levels and the design.

Everything in a dictionary is public: it is written from the protocol or from each variable's
natural range before the data are seen, and nothing here ever fills a bound or a level from the
data (docs/architecture.md, privacy rules 2 and 8). Three forms are read (the format is
documented in one place, ``docs/dictionary.md``; its JSON Schema is
``dpcore/data/dictionary.schema.json``):

- JSON, as ``dpcore_app/demo_data/*.json``: top-level design keys (``treatment``, ``treated``,
  ``outcome``, ``outcome_bounds``, ``larger_is_better``, ``propensity``, ``randomization``,
  ``min_propensity``, ``missing_values``, ``dataset``, ``description``) and a ``columns``
  list of ``{name, role, type, unit, meaning, bounds, levels}``.
- A CSV table, one row per column: ``column, role, type, lower, upper, levels, unit``
  (optional ``meaning`` and ``treated``). Levels are separated by ``|`` (or ``;``, or ``,``
  inside a quoted cell). The treated arm is named by a ``treated`` design row or the
  treatment row's ``treated`` cell. The design goes in rows whose role is ``design``.
- A Frictionless Table Schema (``fields`` with ``name``, ``type``, ``constraints``).

The modules, one concept each:

- :mod:`~dpcore.data.dictionary.model`: :class:`Dictionary` and its :class:`Column`\ s, their
  views and written forms;
- :mod:`~dpcore.data.dictionary.problems`: :class:`Problem`, :class:`DictionaryError` and the
  checks of an assembled dictionary;
- :mod:`~dpcore.data.dictionary.read`: :func:`read_dictionary` (every form, through the JSON
  form), with :mod:`~dpcore.data.dictionary.entries` (one column's entry, single values),
  :mod:`~dpcore.data.dictionary.table` (the CSV table) and
  :mod:`~dpcore.data.dictionary.frictionless` (a Table Schema);
- :mod:`~dpcore.data.dictionary.vocabulary`: the format's words and their synonyms;
- :mod:`~dpcore.data.dictionary.check`: a dictionary checked as a whole, alone or against its
  trial file (``dpcore dictionary check``).
"""

from .model import Column, Dictionary
from .problems import DictionaryError, Problem

__all__ = ["Column", "Dictionary", "DictionaryError", "Problem"]
