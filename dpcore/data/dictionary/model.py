"""A trial's public data dictionary as a value: its columns, what it says of the design, and its
forms as written (JSON, the CSV table).

Everything in a dictionary is public: it is written from the protocol or from each variable's
natural range before the data are seen, and nothing here ever fills a bound or a level from the
data (docs/architecture.md, privacy rules 2 and 8). A :class:`Dictionary` is checked whole when
it is built (:func:`~dpcore.data.dictionary.problems.consistency_problems`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import name_list, quote
from ..labels import label_key, same_label
from .problems import DictionaryError, Problem, bounds_pair, consistency_problems
from .vocabulary import CSV_COLUMNS, DESIGN_KEYS, LEVEL_SEP

__all__ = ["Column", "Dictionary"]


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
        problems = consistency_problems(self)
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
        keys = [label_key(v) for v in arms]
        if label_key(label) not in keys:
            raise DictionaryError(
                [
                    Problem(
                        "dictionary",
                        "arms",
                        f"{quote(label)} is not an arm of {quote(self.treatment)}",
                        "name one of " + name_list(arms),
                    )
                ]
            )
        i = keys.index(label_key(label))
        if self.arm_probabilities is not None:
            return float(self.arm_probabilities[i])
        p = self.known_propensity
        if p is None or len(arms) != 2 or self.treated is None:
            return None
        return float(p) if same_label(self.treated, label) else 1.0 - float(p)

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
                        f"column {quote(self.treatment)}",
                        "levels",
                        "the arms are not listed, so two cannot be chosen",
                        "list every arm, e.g. levels a|b|c",
                    )
                ]
            )
        p_t, p_c = self.arm_probability(treated), self.arm_probability(control)
        pick = [next(v for v in arms if same_label(v, lab)) for lab in (treated, control)]
        if same_label(*pick):
            raise DictionaryError(
                [
                    Problem(
                        "dictionary",
                        "arms",
                        f"compare two different arms, got {quote(pick[0])} twice",
                        "name two arms of " + name_list(arms),
                    )
                ]
            )
        if len(arms) == 2:  # the trial's own two arms, the treated one as asked
            if self.treated is not None and same_label(self.treated, pick[0]):
                return self
            if self.propensity_column is not None:
                raise DictionaryError(
                    [
                        Problem(
                            "dictionary",
                            "treated",
                            "a per-row propensity "
                            f"column is P({quote(self.treated)}); the treated arm "
                            "cannot be swapped",
                            f"compare {quote(self.treated)} against the other arm",
                        )
                    ]
                )
        others = [v for v in arms if not any(same_label(v, q) for q in pick)]
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
        out: dict[str, Any] = {"dataset": self.dataset, "description": self.description}
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
        from ..csv_safe import write_rows

        rows = [list(CSV_COLUMNS), *_rows(self)]
        for key in DESIGN_KEYS:
            value = getattr(self, key)
            if key in ("missing_values", "arm_probabilities") and value is not None:
                value = LEVEL_SEP.join(_cell(v) for v in value)
            if value not in (None, ""):
                rows.append([key, "design", "", "", "", _cell(value), "", ""])
        return write_rows(rows, keep_numbers=True)

    def with_bounds(self, **bounds):
        """A copy with the given columns' bounds set: ``d.with_bounds(age=(18, 90))``."""
        cols = tuple(
            replace(c, bounds=bounds_pair(bounds[c.name], c.name)) if c.name in bounds else c
            for c in self.columns
        )
        return replace(self, columns=cols)


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
