"""A trial's public data dictionary: roles, types, units, bounds, levels and the design.

Everything in a dictionary is public: it is written from the protocol or from each variable's
natural range before the data are seen, and nothing here ever fills a bound or a level from the
data (ARCHITECTURE.md, privacy rules 2 and 8). Two equivalent formats are read and written:

- JSON, as ``demo_data/*.json``: top-level design keys (``treatment``, ``treated``, ``outcome``,
  ``outcome_bounds``, ``larger_is_better``, ``propensity``, ``randomization``,
  ``min_propensity``, ``dataset``, ``description``) and a ``columns`` list of
  ``{name, role, type, unit, meaning, bounds, levels}``.
- CSV, one row per column: ``column, role, type, lower, upper, levels, unit`` (and an optional
  ``meaning``). Levels are separated by ``|``; the treatment row lists the treated arm first.
  The design goes in rows whose role is ``design``: the ``column`` cell names the key
  (``larger_is_better``, ``propensity``, ...) and the ``levels`` cell holds its value.

Reading either format is :func:`dpcore.data.dictionary_read.read_dictionary`.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field, replace

from .csv_io import TrialDataError, _duplicates, _name_list, _q

__all__ = ["Column", "Dictionary", "DictionaryError"]

ROLES = ("covariate", "treatment", "outcome", "propensity", "identifier", "ignore")
TYPES = ("numeric", "binary", "categorical", "label")
CSV_COLUMNS = ("column", "role", "type", "lower", "upper", "levels", "unit", "meaning")
LEVEL_SEP = "|"
# Design keys of the JSON file and of the CSV table's "design" rows, with their readers.
_DESIGN = ("treated", "propensity", "min_propensity", "randomization", "larger_is_better",
           "dataset", "description")


class DictionaryError(TrialDataError):
    """A data dictionary that cannot be read; the message says which entry to change."""


@dataclass(frozen=True)
class Column:
    """One column of the trial file as the dictionary describes it (all public).

    ``bounds`` is ``(lower, upper)`` or None; a ``binary`` column is 0/1 and needs none.
    ``levels`` are the categories of a categorical covariate (baseline first) or the two arms
    of the treatment (treated first).
    """

    name: str
    role: str = "covariate"
    type: str = "numeric"
    unit: str = ""
    bounds: tuple | None = None
    levels: tuple | None = None
    meaning: str = ""

    @property
    def public_bounds(self):
        """(lower, upper) from the dictionary; (0, 1) for a binary column; else None."""
        return (0.0, 1.0) if self.type == "binary" and self.bounds is None else self.bounds


@dataclass(frozen=True)
class Dictionary:
    """Public metadata of a two-arm randomized trial.

    Attributes
    ----------
    columns : tuple of Column
    treatment, outcome : str or None
        The columns with those roles.
    treated : label or None
        The treated arm's label.
    outcome_bounds : (lo, hi) or None
        Public bounds of the outcome.
    larger_is_better : bool or None
    propensity : float or None
        The known randomization probability P(treated) (2/3 for 2:1).
    min_propensity : float or None
        A public lower bound on every row's propensity of either arm, for a trial whose
        propensity is a per-row column (weights and the private evaluation need it).
    randomization, dataset, description : str
    """

    columns: tuple = ()
    treated: object = None
    propensity: float | None = None
    min_propensity: float | None = None
    randomization: str = ""
    larger_is_better: bool | None = None
    dataset: str = ""
    description: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        _check(self)

    # ----------------------------------------------------------------------------- views
    def column(self, name):
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def _role(self, role):
        names = [c.name for c in self.columns if c.role == role]
        return names[0] if names else None

    @property
    def treatment(self):
        return self._role("treatment")

    @property
    def outcome(self):
        return self._role("outcome")

    @property
    def propensity_column(self):
        return self._role("propensity")

    @property
    def outcome_bounds(self):
        return self.column(self.outcome).bounds if self.outcome else None

    @property
    def covariates(self):
        return [c.name for c in self.columns if c.role == "covariate"]

    @property
    def categorical(self):
        """``{column: levels}`` of the categorical covariates, baseline first."""
        return {c.name: list(c.levels) for c in self.columns
                if c.role == "covariate" and c.type == "categorical"}

    @property
    def bounds(self):
        """``{column: (lower, upper)}`` of the numeric and binary covariates with public bounds."""
        return {c.name: c.public_bounds for c in self.columns if c.role == "covariate"
                and c.type != "categorical" and c.public_bounds is not None}

    @property
    def missing_bounds(self):
        """Numeric covariates (and the outcome) the dictionary gives no bounds for."""
        return [c.name for c in self.columns if c.role in ("covariate", "outcome")
                and c.type == "numeric" and c.bounds is None]

    def read_trial_kwargs(self):
        """Keyword arguments of :func:`dpcore.data.read_trial` that this dictionary fixes."""
        if not (self.treatment and self.outcome):
            raise DictionaryError("the dictionary names no treatment or no outcome column")
        levels = self.column(self.treatment).levels
        return {"treatment": self.treatment, "outcome": self.outcome,
                "covariates": self.covariates, "categorical": self.categorical or None,
                "propensity": self.propensity_column, "treated": self.treated,
                "arms": tuple(levels) if levels else None,
                "binary": [c.name for c in self.columns if c.type == "binary"] or None}

    def table(self):
        """The columns as a DataFrame ``column, role, type, lower, upper, levels, unit``."""
        import pandas as pd

        return pd.DataFrame(_rows(self), columns=list(CSV_COLUMNS))

    # ------------------------------------------------------------------------- writing
    def to_dict(self):
        out = {"dataset": self.dataset, "description": self.description}
        out.update({k: v for k, v in self.extra.items() if k not in out})
        out.update({"treatment": self.treatment, "treated": self.treated,
                    "outcome": self.outcome, "outcome_bounds": _list(self.outcome_bounds),
                    "larger_is_better": self.larger_is_better, "propensity": self.propensity,
                    "min_propensity": self.min_propensity, "randomization": self.randomization})
        out["columns"] = [_column_dict(c) for c in self.columns]
        return {k: v for k, v in out.items() if v not in (None, "")}

    def to_json(self):
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def to_csv(self):
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        w.writerows(_rows(self))
        for key in _DESIGN:
            value = getattr(self, key)
            if key == "treated" and self.treatment and self.column(self.treatment).levels:
                continue  # the treatment row lists it first
            if value not in (None, ""):
                w.writerow([key, "design", "", "", "", _cell(value), "", ""])
        return out.getvalue()

    def with_bounds(self, **bounds):
        """A copy with the given columns' bounds set: ``d.with_bounds(age=(18, 90))``."""
        cols = tuple(replace(c, bounds=_pair(bounds[c.name], c.name)) if c.name in bounds else c
                     for c in self.columns)
        return replace(self, columns=cols)


# --------------------------------------------------------------------------- entries, checks


def _check(d):
    names = [c.name for c in d.columns]
    dup = _duplicates(names)
    if dup:
        raise DictionaryError(f"the dictionary lists {_name_list(dup)} more than once")
    for role in ("treatment", "outcome", "propensity"):
        named = [c.name for c in d.columns if c.role == role]
        if len(named) > 1:
            raise DictionaryError(f"{_name_list(named)} all have role {role}; one column can")
    for c in d.columns:
        if c.role == "covariate" and c.type == "categorical" and not c.levels:
            raise DictionaryError(f"categorical column {_q(c.name)} needs its levels "
                                  f"(e.g. A{LEVEL_SEP}B{LEVEL_SEP}C, baseline first); levels are "
                                  "never read off the data")
        if c.type == "binary" and c.bounds not in (None, (0.0, 1.0)):
            raise DictionaryError(f"binary column {_q(c.name)} is 0/1; its bounds cannot be "
                                  f"{list(c.bounds)}")
    t = d.treatment and d.column(d.treatment)
    if t and t.levels is not None:
        if len(t.levels) != 2:
            raise DictionaryError(f"treatment {_q(t.name)} must list two arms, got {len(t.levels)}")
        if d.treated is not None and str(d.treated) not in [str(v) for v in t.levels]:
            raise DictionaryError(f"treated arm {_q(d.treated)} is not one of the levels "
                                  f"{_name_list(t.levels)} of {_q(t.name)}")
    if d.propensity is not None and d.propensity_column:
        raise DictionaryError("give either a randomization probability or a propensity "
                              "column, not both")


def _pair(value, name):
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise DictionaryError(f"bounds of {_q(name)} must be two numbers [lower, upper], "
                              f"got {_q(value)}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise DictionaryError(f"bounds of {_q(name)} must be finite with lower < upper, "
                              f"got [{lo:g}, {hi:g}]")
    return lo, hi


def _label(v):
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v.strip() if isinstance(v, str) else v


def _list(pair):
    return None if pair is None else [float(v) for v in pair]


def _column_dict(c):
    out = {"name": c.name, "role": c.role, "type": c.type, "unit": c.unit,
           "meaning": c.meaning, "bounds": _list(c.bounds),
           "levels": None if c.levels is None else list(c.levels)}
    return {k: v for k, v in out.items() if v not in (None, "")}


def _cell(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


def _rows(d):
    out = []
    for c in d.columns:
        levels = c.levels
        lo, hi = c.bounds if c.bounds is not None else ("", "")
        out.append([c.name, c.role, c.type, _cell(lo) if lo != "" else "",
                    _cell(hi) if hi != "" else "",
                    LEVEL_SEP.join(str(v) for v in levels) if levels else "", c.unit, c.meaning])
    return out


def __getattr__(name):
    # read_dictionary lives in dictionary_read (which imports this module); it is also found
    # here, where a reader of this module looks for it first.
    if name == "read_dictionary":
        from .dictionary_read import read_dictionary

        return read_dictionary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
