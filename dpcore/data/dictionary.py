"""A trial's public data dictionary: roles, types, units, bounds, levels and the design.

Everything in a dictionary is public: it is written from the protocol or from each variable's
natural range before the data are seen, and nothing here ever fills a bound or a level from the
data (docs/architecture.md, privacy rules 2 and 8). Three forms are read (the format is documented
in one place, ``docs/dictionary.md``; its JSON Schema is ``dictionary.schema.json`` here):

- JSON, as ``dpcore_app/demo_data/*.json``: top-level design keys (``treatment``, ``treated``, ``outcome``,
  ``outcome_bounds``, ``larger_is_better``, ``propensity``, ``randomization``,
  ``min_propensity``, ``missing_values``, ``dataset``, ``description``) and a ``columns``
  list of ``{name, role, type, unit, meaning, bounds, levels}``.
- A CSV table, one row per column: ``column, role, type, lower, upper, levels, unit``
  (optional ``meaning`` and ``treated``). Levels are separated by ``|`` (or ``;``, or ``,``
  inside a quoted cell). The treated arm is named by a ``treated`` design row or the
  treatment row's ``treated`` cell. The design goes in rows whose role is ``design``.
- A Frictionless Table Schema (``fields`` with ``name``, ``type``, ``constraints``).

Reading is :func:`dpcore.data.dictionary_read.read_dictionary`; every problem of a file is
listed at once (:class:`Problem`, :class:`DictionaryError`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import Any

from .csv_io import TrialDataError, _duplicates, _name_list, _q

__all__ = ["Column", "Dictionary", "DictionaryError", "Problem"]

ROLES = ("covariate", "treatment", "outcome", "propensity", "identifier", "ignore")
TYPES = ("numeric", "binary", "categorical", "label")
CSV_COLUMNS = ("column", "role", "type", "lower", "upper", "levels", "unit", "meaning")
LEVEL_SEP = "|"
# Design keys of the JSON file and of the CSV table's "design" rows, with their readers.
_DESIGN = (
    "treated",
    "propensity",
    "min_propensity",
    "randomization",
    "larger_is_better",
    "missing_values",
    "arm_probabilities",
    "dataset",
    "description",
)


@dataclass(frozen=True)
class Problem:
    """One problem of a data dictionary: where it is, what is wrong and the exact fix.

    Attributes
    ----------
    where : str
        The column (``"column 'age'"``), a line of a CSV table, or ``"dictionary"``.
    field : str
        The entry: ``"bounds"``, ``"levels"``, ``"role"``, ``"treated"``...
    message : str
        What is wrong, in a sentence.
    fix : str
        What to write instead.
    """

    where: str
    field: str
    message: str
    fix: str = ""

    def __str__(self) -> str:
        at = f"{self.where}, {self.field}" if self.field else self.where
        return f"{at}: {self.message}" + (f" (fix: {self.fix})" if self.fix else "")


class DictionaryError(TrialDataError):
    """A data dictionary that cannot be read; ``problems`` lists every problem with its fix.

    The message is one line: every problem, each with where it is and what to change.
    """

    def __init__(self, problems: object) -> None:
        if isinstance(problems, str):
            problems = [Problem("dictionary", "", problems)]
        self.problems: tuple[Problem, ...] = tuple(problems)  # type: ignore[arg-type]
        shown = [str(p) for p in self.problems]
        text = (
            shown[0]
            if len(shown) == 1
            else (
                f"{len(shown)} problems: " + "; ".join(f"({i}) {t}" for i, t in enumerate(shown, 1))
            )
        )
        super().__init__(text)


@dataclass(frozen=True)
class Column:
    """One column of the trial file as the dictionary describes it (all public).

    ``bounds`` is ``(lower, upper)`` or None; a ``binary`` column is 0/1 and needs none.
    ``levels`` are the categories of a categorical covariate (baseline first) or the arms of
    the treatment (a two-arm trial's treated first; a K-arm trial's in the dictionary's order).
    """

    name: str
    role: str = "covariate"
    type: str = "numeric"
    unit: str = ""
    bounds: tuple | None = None
    levels: tuple | None = None
    meaning: str = ""
    #: A covariate's public fill-in value for a missing cell (JSON ``"missing": {"fill": v}``),
    #: with a missing-indicator column beside it; None: a missing cell gives its row weight 0.
    fill: Any = None

    @property
    def public_bounds(self):
        """(lower, upper) from the dictionary; (0, 1) for a binary column; else None."""
        return (0.0, 1.0) if self.type == "binary" and self.bounds is None else self.bounds


@dataclass(frozen=True)
class Dictionary:
    """Public metadata of a randomized trial: two arms, or K > 2 with ``arm_probabilities``.

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
    missing_values : tuple of str
        Extra cell texts that mean "missing" in the trial file (besides ``NA``, ``.``...).
    arm_probabilities : tuple of float or None
        Each arm's randomization probability, aligned with the treatment's levels (a trial
        with more than two arms: ``(0.25, 0.25, 0.25, 0.25)`` for 1:1:1:1). Two of them are
        compared with :meth:`for_arms`; all of them by :class:`dpcore.owl.karm.KArmOWL`
        (``docs/k_arm.md``).
    problems : tuple of Problem
        With ``read_dictionary(..., strict=False)``: what was left out because it was
        invalid (the rest is usable). Empty otherwise.
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
    missing_values: tuple = ()
    problems: tuple = field(default=(), compare=False)
    arm_probabilities: tuple | None = None

    def __post_init__(self):
        problems = _check(self)
        if problems:
            raise DictionaryError(problems)

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
        """The per-row propensity column, or None when P(treated) is a known constant.

        A propensity column whose bounds are equal (``[0.5, 0.5]``), or one given together
        with an agreeing randomization probability, is a constant of the design: the
        constant is used and the column is not read.
        """
        name = self._role("propensity")
        if name is None or self.propensity is not None:
            return None
        bounds = self.column(name).bounds
        return None if bounds is not None and bounds[0] == bounds[1] else name

    @property
    def known_propensity(self):
        """P(treated) when it is one constant (the probability, or a constant column)."""
        if self.propensity is not None:
            return self.propensity
        name = self._role("propensity")
        bounds = self.column(name).bounds if name else None
        return bounds[0] if bounds is not None and bounds[0] == bounds[1] else None

    @property
    def arms(self):
        """The treatment's public levels (every arm of the trial), or None when not listed."""
        levels = self.column(self.treatment).levels if self.treatment else None
        return tuple(levels) if levels else None

    def arm_probability(self, label):
        """The design's P(A = ``label``): from ``arm_probabilities``, or for two arms from the
        randomization probability; None when the dictionary does not give it."""
        arms = self.arms or ()
        keys = [_key(v) for v in arms]
        if _key(label) not in keys:
            raise DictionaryError(
                [
                    Problem(
                        "dictionary",
                        "arms",
                        f"{_q(label)} is not an arm of {_q(self.treatment)}",
                        "name one of " + _name_list(arms),
                    )
                ]
            )
        i = keys.index(_key(label))
        if self.arm_probabilities is not None:
            return float(self.arm_probabilities[i])
        p = self.known_propensity
        if p is None or len(arms) != 2 or self.treated is None:
            return None
        return float(p) if _same(self.treated, label) else 1.0 - float(p)

    def for_arms(self, treated, control):
        """The two-arm dictionary comparing arm ``treated`` against arm ``control``.

        Every other arm's rows are missing values for it (a release keeps them at weight 0,
        so n stays the file's row count). Its randomization probability is the design's
        P(A = treated | A in {treated, control}) = p_t / (p_t + p_c) (see ``docs/k_arm.md``
        for why these are the right inverse-probability weights); None when the dictionary
        gives no arm probabilities. ``extra["other_arms"]`` lists the arms left out.

        Parameters
        ----------
        treated, control : labels
            Two different arms among :attr:`arms`; ``treated`` is read as A = +1.

        Returns
        -------
        Dictionary
        """
        arms = self.arms
        if not arms:
            raise DictionaryError(
                [
                    Problem(
                        f"column {_q(self.treatment)}",
                        "levels",
                        "the arms are not listed, so two cannot be chosen",
                        "list every arm, e.g. levels a|b|c",
                    )
                ]
            )
        p_t, p_c = self.arm_probability(treated), self.arm_probability(control)
        pick = [next(v for v in arms if _same(v, lab)) for lab in (treated, control)]
        if _same(*pick):
            raise DictionaryError(
                [
                    Problem(
                        "dictionary",
                        "arms",
                        f"compare two different arms, got {_q(pick[0])} twice",
                        "name two arms of " + _name_list(arms),
                    )
                ]
            )
        if len(arms) == 2:  # the trial's own two arms, the treated one as asked
            if self.treated is not None and _same(self.treated, pick[0]):
                return self
            if self.propensity_column is not None:
                raise DictionaryError(
                    [
                        Problem(
                            "dictionary",
                            "treated",
                            "a per-row propensity "
                            f"column is P({_q(self.treated)}); the treated arm "
                            "cannot be swapped",
                            f"compare {_q(self.treated)} against the other arm",
                        )
                    ]
                )
        others = [v for v in arms if not any(_same(v, q) for q in pick)]
        propensity = None if p_t is None or p_c is None else p_t / (p_t + p_c)
        cols = tuple(
            replace(c, levels=tuple(pick)) if c.role == "treatment" else c for c in self.columns
        )
        if others:  # a propensity column would be P(treated) of a two-arm design: not read
            cols = tuple(replace(c, role="ignore") if c.role == "propensity" else c for c in cols)
        ratio = "" if p_t is None or p_c is None else f"{p_t:g}:{p_c:g}"
        extra = {**self.extra, "other_arms": others, "all_arms": list(arms)}
        return replace(
            self,
            columns=cols,
            treated=pick[0],
            propensity=propensity,
            randomization=ratio,
            arm_probabilities=None,
            extra=extra,
            problems=(),
        )

    @property
    def outcome_bounds(self):
        """The outcome's public bounds: (0, 1) for a binary outcome."""
        return self.column(self.outcome).public_bounds if self.outcome else None

    @property
    def outcome_levels(self):
        """A binary outcome's two labels (read as 0, then 1), or None."""
        c = self.column(self.outcome) if self.outcome else None
        return tuple(c.levels) if c is not None and c.type == "binary" and c.levels else None

    @property
    def covariates(self):
        return [c.name for c in self.columns if c.role == "covariate"]

    @property
    def categorical(self):
        """``{column: levels}`` of the categorical covariates, baseline first."""
        return {
            c.name: list(c.levels)
            for c in self.columns
            if c.role == "covariate"
            and (c.type == "categorical" or (c.type == "binary" and c.levels))
        }

    @property
    def bounds(self):
        """``{column: (lower, upper)}`` of the numeric and binary covariates with public bounds."""
        return {
            c.name: c.public_bounds
            for c in self.columns
            if c.role == "covariate"
            and c.type != "categorical"
            and not (c.type == "binary" and c.levels)
            and c.public_bounds is not None
        }

    @property
    def missing_bounds(self):
        """Numeric covariates (and the outcome) the dictionary gives no bounds for."""
        return [
            c.name
            for c in self.columns
            if c.role in ("covariate", "outcome") and c.type == "numeric" and c.bounds is None
        ]

    def read_trial_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`dpcore.data.read_trial` that this dictionary fixes."""
        if not (self.treatment and self.outcome):
            raise DictionaryError("the dictionary names no treatment or no outcome column")
        levels = self.column(self.treatment).levels
        return {
            "missing_values": self.missing_values or None,
            "treatment": self.treatment,
            "outcome": self.outcome,
            "covariates": self.covariates,
            "categorical": self.categorical or None,
            "propensity": self.propensity_column,
            "treated": self.treated,
            "arms": tuple(levels) if levels else None,
            "binary": [c.name for c in self.columns if c.type == "binary"] or None,
            "outcome_levels": self.outcome_levels,
            "fill": {c.name: c.fill for c in self.columns if c.fill is not None} or None,
        }

    def table(self):
        """The columns as a DataFrame ``column, role, type, lower, upper, levels, unit``."""
        import pandas as pd

        return pd.DataFrame(_rows(self), columns=list(CSV_COLUMNS))

    # ------------------------------------------------------------------------- writing
    def to_dict(self):
        out = {"dataset": self.dataset, "description": self.description}
        out.update({k: v for k, v in self.extra.items() if k not in out})
        out.update(
            {
                "treatment": self.treatment,
                "treated": self.treated,
                "outcome": self.outcome,
                "outcome_bounds": _list(self.outcome_bounds),
                "larger_is_better": self.larger_is_better,
                "propensity": self.propensity,
                "min_propensity": self.min_propensity,
                "randomization": self.randomization,
                "missing_values": list(self.missing_values) or None,
                "arm_probabilities": _list(self.arm_probabilities),
            }
        )
        out["columns"] = [_column_dict(c) for c in self.columns]
        return {k: v for k, v in out.items() if v not in (None, "")}

    def to_json(self):
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    def to_csv(self):
        """The dictionary as a CSV table; text cells are guarded against spreadsheet formulas
        and a cell with a line end, a bare CR included, is quoted
        (:func:`dpcore.data.csv_safe.write_rows`)."""
        from .csv_safe import write_rows

        rows = [list(CSV_COLUMNS), *_rows(self)]
        for key in _DESIGN:
            value = getattr(self, key)
            if key in ("missing_values", "arm_probabilities") and value is not None:
                value = LEVEL_SEP.join(_cell(v) for v in value)
            if value not in (None, ""):
                rows.append([key, "design", "", "", "", _cell(value), "", ""])
        return write_rows(rows, keep_numbers=True)

    def with_bounds(self, **bounds):
        """A copy with the given columns' bounds set: ``d.with_bounds(age=(18, 90))``."""
        cols = tuple(
            replace(c, bounds=_pair(bounds[c.name], c.name)) if c.name in bounds else c
            for c in self.columns
        )
        return replace(self, columns=cols)


# --------------------------------------------------------------------------- entries, checks


def _check(d):
    """Every problem of an assembled dictionary (the reader drops the parts they name)."""
    out = []
    names = [c.name for c in d.columns]
    for name in _duplicates(names):
        out.append(
            Problem(
                f"column {_q(name)}",
                "name",
                "the column is listed more than once",
                "list each column once",
            )
        )
    for role in ("treatment", "outcome", "propensity"):
        named = [c.name for c in d.columns if c.role == role]
        if len(named) > 1:
            out.append(
                Problem(
                    f"columns {_name_list(named)}",
                    "role",
                    f"{len(named)} columns have role {role}; one column can",
                    f"keep role {role} on one of them, give the others role covariate or ignore",
                )
            )
    for c in d.columns:
        if c.role == "covariate" and c.type == "categorical" and not c.levels:
            out.append(
                Problem(
                    f"column {_q(c.name)}",
                    "levels",
                    "a categorical column needs its public levels (never read off the data)",
                    f"write them baseline first, e.g. A{LEVEL_SEP}B{LEVEL_SEP}C",
                )
            )
        if c.type == "binary" and c.bounds not in (None, (0.0, 1.0)):
            out.append(
                Problem(
                    f"column {_q(c.name)}",
                    "bounds",
                    f"a binary column is 0/1; its bounds cannot be {list(c.bounds)}",
                    "remove the bounds, or give type numeric",
                )
            )
    t = d.treatment and d.column(d.treatment)
    if t and t.levels is not None:
        if len(t.levels) < 2:
            out.append(
                Problem(
                    f"column {_q(t.name)}",
                    "levels",
                    f"the treatment must list at least two arms, got {len(t.levels)}",
                    "list the arms, e.g. drug|placebo",
                )
            )
        elif d.treated is not None and not any(_same(d.treated, v) for v in t.levels):
            out.append(
                Problem(
                    "dictionary",
                    "treated",
                    f"the treated arm {_q(d.treated)} is not one of the levels "
                    f"{_name_list(t.levels)} of {_q(t.name)}",
                    f"name one of them: treated = {_q(t.levels[0])} or {_q(t.levels[1])}",
                )
            )
    probs = d.arm_probabilities
    if probs is not None:
        k = len(t.levels) if t and t.levels else None
        if k is None or len(probs) != k:
            out.append(
                Problem(
                    "dictionary",
                    "arm_probabilities",
                    f"{len(probs)} arm probabilities for "
                    + (f"{k} arms" if k else "a treatment without listed levels"),
                    "give one probability per level of the treatment, in its order",
                )
            )
        elif not all(0.0 < p < 1.0 for p in probs) or abs(sum(probs) - 1.0) > 1e-3:
            out.append(
                Problem(
                    "dictionary",
                    "arm_probabilities",
                    "arm probabilities must each lie strictly between 0 and 1 and sum "
                    f"to 1, got {_name_list([f'{p:g}' for p in probs])}",
                    "write the design's probabilities, e.g. 0.25 each for 1:1:1:1",
                )
            )
    pcol = d._role("propensity")
    if pcol is not None and d.propensity is not None:
        b = d.column(pcol).bounds
        if b is not None and not (b[0] == b[1] and abs(b[0] - d.propensity) < 1e-9):
            shown = f"{b[0]:g}" if b[0] == b[1] else f"[{b[0]:g}, {b[1]:g}]"
            out.append(
                Problem(
                    "dictionary",
                    "propensity",
                    f"the randomization probability {d.propensity:g} and the "
                    f"propensity column {_q(pcol)} ({shown}) disagree",
                    "keep the one that is right and remove the other",
                )
            )
    return out


def _key(v):
    from .columns import label_key

    return label_key(v)


def _same(a, b):
    from .columns import label_key

    return label_key(a) == label_key(b)


def _pair(value, name, constant=False):
    """(lower, upper) as floats; equal bounds only for a constant of the design."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise DictionaryError(
            [
                Problem(
                    f"column {_q(name)}",
                    "bounds",
                    f"bounds must be two numbers [lower, upper], got {_q(value)}",
                    "write two numbers, e.g. [18, 90]",
                )
            ]
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi or (lo == hi and not constant):
        fix = (
            "swap them"
            if lo > hi
            else "a constant covariate carries nothing: give it role ignore"
            if lo == hi
            else "write finite numbers"
        )
        raise DictionaryError(
            [
                Problem(
                    f"column {_q(name)}",
                    "bounds",
                    f"bounds must be finite with lower < upper, got [{lo:g}, {hi:g}]",
                    fix,
                )
            ]
        )
    return lo, hi


def _label(v):
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v.strip() if isinstance(v, str) else v


def _list(pair):
    return None if pair is None else [float(v) for v in pair]


def _column_dict(c):
    out = {
        "name": c.name,
        "role": c.role,
        "type": c.type,
        "unit": c.unit,
        "meaning": c.meaning,
        "bounds": _list(c.bounds),
        "levels": None if c.levels is None else list(c.levels),
        "missing": None if c.fill is None else {"fill": c.fill},
    }
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
        out.append(
            [
                c.name,
                c.role,
                c.type,
                _cell(lo) if lo != "" else "",
                _cell(hi) if hi != "" else "",
                LEVEL_SEP.join(str(v) for v in levels) if levels else "",
                c.unit,
                c.meaning,
            ]
        )
    return out
