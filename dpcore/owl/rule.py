"""A released treatment rule applied to new patients: their covariates, scores and arms.

A rule is a linear score in the covariates' original units, ``score = intercept + sum_j
coef_j * clip(x_j, lower_j, upper_j)``; a two-arm :class:`Rule` recommends the treated arm when
``score > 0`` (ties go to the control arm, as in :class:`dpcore.DPOWL`), an :class:`ArmsRule`
over K arms the arm of the largest positive score, else its reference (:func:`choose_arm`).
The patients' table is read as a trial is (:func:`dpcore.data.csv_io.read_table`): a one-hot
covariate ``"col=level"`` is 1 for that level, a filled column's missing cell takes its public
fill value and the covariate ``"col is missing"`` says so.

The rule file these rules are written to and read from is :mod:`dpcore.owl.rule_file` (its
format and writer) and :mod:`dpcore.owl.rule_read` (:func:`dpcore.load_rule`).

Examples
--------
>>> from dpcore import load_rule
>>> rule = load_rule(
...     {
...         "covariates": ["age", "site=B"],
...         "categories": {"site": ["A", "B"]},
...         "intercept": -1.0,
...         "coef": [0.02, 1.0],
...         "lower": [18, 0],
...         "upper": [90, 1],
...         "treated": "drug",
...         "control": "placebo",
...     }
... )
>>> import pandas as pd
>>> rule.recommend(pd.DataFrame({"age": [30, 80], "site": ["A", "B"]})).tolist()
['placebo', 'drug']
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..data.columns import MISSING_SUFFIX, clean_cells, read_numbers
from ..data.csv_io import Source, read_table
from ..data.errors import name_list, quote
from ..data.labels import plain_label
from .rule_file import RuleFileError, arms_rule_to_dict, rule_to_dict

__all__ = ["ArmsRule", "Patients", "Rule", "choose_arm"]

#: What :meth:`Rule.recommend` takes: a DataFrame of patients, a CSV path, its bytes or text.
Patients = pd.DataFrame | Source


@dataclass(frozen=True)
class Rule:
    """A released treatment rule, ready to recommend an arm for new patients.

    Attributes
    ----------
    covariates : tuple of str
        Columns of the score in order; a one-hot column is ``"col=level"``.
    intercept : float
    coef, lower, upper : tuple of float
        Coefficients in original units and the public bounds each covariate is clipped to.
    categories : dict
        ``{column: [levels]}`` of the one-hot encoded columns, baseline first.
    treated, control : labels
        The arm recommended when the score is positive, and otherwise.
    settings : dict
        Everything else in the file (ε, γ, W, n, the mechanism, the package version...).
    fill : dict
        ``{column: value}``: the public fill-in value of a covariate's missing cell; the
        covariate ``"<column> is missing"`` is then 1 (else 0).
    """

    covariates: tuple
    intercept: float
    coef: tuple
    lower: tuple
    upper: tuple
    treated: object
    control: object
    categories: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict, compare=False)
    fill: dict = field(default_factory=dict)

    @property
    def indicators(self):
        """``{"<column> is missing": column}`` of the filled covariates."""
        return {c + MISSING_SUFFIX: c for c in self.fill}

    def _base(self, c):
        """The file column a covariate of the score is computed from."""
        if c in self.one_hot:
            return self.one_hot[c][0]
        return self.indicators.get(c, c)

    @property
    def columns(self):
        """The file columns a patient table needs (categorical columns once)."""
        out = []
        for c in self.covariates:
            base = self._base(c)
            if base not in out:
                out.append(base)
        return out

    @property
    def one_hot(self):
        return {
            f"{c}={lev}": (c, lev) for c, levels in self.categories.items() for lev in levels[1:]
        }

    def _cleaned(self, patients: Patients) -> tuple[pd.DataFrame, dict[str, pd.Series]]:
        """The patients' table and the cleaned cells of each column the rule needs."""
        table = patients if isinstance(patients, pd.DataFrame) else _read(patients)
        table = table.rename(columns=lambda c: str(c).strip()).reset_index(drop=True)
        missing = [c for c in self.columns if c not in table.columns]
        if missing:
            raise RuleFileError(
                f"the patients' table has no column {name_list(missing)}; the "
                f"rule needs {name_list(self.columns, 25)}"
            )
        return table, {c: clean_cells(table[c]) for c in self.columns}

    def design(self, patients: Patients) -> np.ndarray:
        """The covariate matrix of ``patients`` (a DataFrame, a CSV path or its bytes).

        Every patient must have every covariate, as a number or one of the rule's levels;
        :meth:`recommendations` instead reports the rows it cannot score.
        """
        table, cleaned = self._cleaned(patients)
        for c, s in cleaned.items():
            if c not in self.fill and s.isna().any():
                row = int(np.argmax(s.isna().to_numpy())) + 1
                raise RuleFileError(
                    f"row {row} has no value for {quote(c)}; the rule needs every "
                    "covariate of every patient"
                )
        for c, levels, key, outside in self._outside_levels(cleaned):
            if outside.any():
                i = int(np.argmax(outside))
                raise RuleFileError(
                    f"{quote(c)} is {quote(key.iloc[i])} in row {i + 1}, which is not "
                    f"one of the rule's levels {name_list(levels, 8)}"
                )
        return self._matrix(cleaned, len(table), strict=True)

    def _outside_levels(self, cleaned: dict[str, pd.Series]) -> Iterator[tuple]:
        """For each one-hot column: its levels, its cells as text and which rows hold a level
        outside them (a filled column's missing cell takes the public fill: never outside)."""
        for c, levels in self.categories.items():
            key = cleaned[c].map(plain_label).astype(str)
            outside = ~key.isin([str(v) for v in levels]).to_numpy()
            if c in self.fill:
                outside &= cleaned[c].notna().to_numpy()
            yield c, levels, key, outside

    def _matrix(self, cleaned: dict[str, pd.Series], n: int, strict: bool) -> np.ndarray:
        cols = []
        for c in self.covariates:
            if c in self.indicators:
                base = self.indicators[c]
                cols.append(self._missing(cleaned[base], base).astype(float))
            elif c in self.one_hot:
                base, level = self.one_hot[c]
                cell = cleaned[base]
                if base in self.fill:
                    cell = cell.where(cell.notna(), self.fill[base])
                cols.append((cell.map(plain_label).astype(str) == str(level)).to_numpy(float))
            elif c in self.fill:
                x = read_numbers(cleaned[c], c, "covariate", strict=False)
                cols.append(np.where(np.isnan(x), float(self.fill[c]), x))
            else:
                cols.append(read_numbers(cleaned[c], c, "covariate", strict=strict))
        return np.column_stack(cols) if cols else np.empty((n, 0))

    def _missing(self, cell: pd.Series, column: str) -> np.ndarray:
        """Which cells of a filled column are missing (a numeric one's: not a number)."""
        if column in self.categories:
            return cell.isna().to_numpy()
        return np.isnan(read_numbers(cell, column, "covariate", strict=False))

    def recommendations(self, patients: Patients) -> pd.DataFrame:
        """The patients' table with a ``recommendation`` column, and why a row has none.

        A row the rule cannot score (a covariate missing, a value that is not a number, a
        level outside the rule's) gets no recommendation (an empty cell) and its reason in
        ``not_scored``; every other row is scored as by :meth:`recommend` and has an empty
        ``not_scored``. How one row is read never depends on another.

        Examples
        --------
        >>> from dpcore import load_rule
        >>> rule = load_rule(
        ...     {
        ...         "covariates": ["age"],
        ...         "intercept": -50.0,
        ...         "coef": [1.0],
        ...         "lower": [18],
        ...         "upper": [90],
        ...         "treated": "drug",
        ...         "control": "placebo",
        ...     }
        ... )
        >>> out = rule.recommendations(pd.DataFrame({"age": [30, None, 80]}))
        >>> out["recommendation"].fillna("").tolist(), out["not_scored"].tolist()
        (['placebo', '', 'drug'], ['', "no value for 'age'", ''])
        """
        table, x, reasons = self._scorable(patients)
        scored = reasons == ""
        score = self.intercept + x[scored] @ np.asarray(self.coef, dtype=float)
        recommendation = np.full(len(table), None, dtype=object)
        recommendation[scored] = np.where(
            score > 0,
            np.asarray(self.treated, dtype=object),
            np.asarray(self.control, dtype=object),
        )
        return table.assign(recommendation=recommendation, not_scored=reasons)

    def _scorable(self, patients: Patients) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
        """The patients' table, their clipped design matrix, and for each row the first reason
        it cannot be scored (empty when it can): one row's reading never depends on another."""
        table, cleaned = self._cleaned(patients)
        reasons = np.full(len(table), "", dtype=object)

        def note(rows: np.ndarray, why: Any) -> None:
            for i in np.flatnonzero(rows & (reasons == "")):  # a row's first problem
                reasons[i] = why(i)

        for c, s in cleaned.items():
            if c not in self.fill:  # a filled column's missing cell takes its public value
                note(s.isna().to_numpy(), lambda i, c=c: f"no value for {quote(c)}")
        for c, levels, key, outside in self._outside_levels(cleaned):
            note(
                outside,
                lambda i, c=c, key=key, levels=levels: (
                    f"{quote(c)} is {quote(key.iloc[i])}, not one "
                    f"of the rule's levels {name_list(levels, 8)}"
                ),
            )
        x = self._matrix(cleaned, len(table), strict=False)  # NaN: a cell that is not a number
        for j, c in enumerate(self.covariates):
            if c not in self.one_hot and c not in self.indicators and c not in self.fill:
                note(
                    np.isnan(x[:, j]),
                    lambda i, c=c: f"{quote(c)} is {quote(cleaned[c].iloc[i])}, not a number",
                )
        return table, np.clip(x, self.lower, self.upper), reasons

    def decision_function(self, patients: Patients) -> np.ndarray:
        """The score of each patient, covariates clipped to the public bounds."""
        x = np.clip(self.design(patients), self.lower, self.upper)
        return self.intercept + x @ np.asarray(self.coef, dtype=float)

    def recommend(self, patients: Patients) -> np.ndarray:
        """The recommended arm's label for each patient (an object array)."""
        score = self.decision_function(patients)
        treated, control = (np.asarray(v, dtype=object) for v in (self.treated, self.control))
        return np.where(score > 0, treated, control)

    def to_dict(self) -> dict[str, Any]:
        return rule_to_dict(
            covariates=self.covariates,
            intercept=self.intercept,
            coef=self.coef,
            lower=self.lower,
            upper=self.upper,
            categories=self.categories,
            treated=self.treated,
            control=self.control,
            fill=self.fill,
            **self.settings,
        )


@dataclass(frozen=True)
class ArmsRule:
    """A released rule over K arms: one score per arm against the reference.

    Attributes
    ----------
    rules : tuple of Rule
        Rule j scores ``rules[j].treated`` against the reference (``control``); they share
        covariates, bounds and categories.
    arms : tuple, every arm (public)
    reference : the arm recommended when no score is positive
    settings : dict, the release's public settings
    """

    rules: tuple
    arms: tuple
    reference: object
    settings: dict = field(default_factory=dict, compare=False)

    @property
    def columns(self):
        return self.rules[0].columns

    @property
    def covariates(self):
        return self.rules[0].covariates

    def design(self, patients):
        return self.rules[0].design(patients)

    def decision_function(self, patients):
        """(n, K - 1) scores, one column per compared arm (covariates clipped to the bounds)."""
        first = self.rules[0]
        x = np.clip(first.design(patients), first.lower, first.upper)
        return np.column_stack(
            [r.intercept + x @ np.asarray(r.coef, dtype=float) for r in self.rules]
        )

    def recommend(self, patients):
        """The recommended arm's label for each patient: one of the K arms."""
        return choose_arm(
            self.decision_function(patients), [r.treated for r in self.rules], self.reference
        )

    def recommendations(self, patients: Patients) -> pd.DataFrame:
        """The patients' table with a ``recommendation`` column (one of the K arms) and, for a
        row the rule cannot score, an empty recommendation and the reason in ``not_scored``
        (as :meth:`Rule.recommendations`)."""
        table, x, reasons = self.rules[0]._scorable(patients)
        scored = reasons == ""
        scores = np.column_stack(
            [r.intercept + x[scored] @ np.asarray(r.coef, dtype=float) for r in self.rules]
        )
        recommendation = np.full(len(table), None, dtype=object)
        recommendation[scored] = choose_arm(scores, [r.treated for r in self.rules], self.reference)
        return table.assign(recommendation=recommendation, not_scored=reasons)

    def to_dict(self) -> dict[str, Any]:
        """The K-arm rule file's content (:func:`dpcore.owl.rule_file.arms_rule_to_dict`)."""
        return arms_rule_to_dict(self)


def choose_arm(scores: np.ndarray, compared: Sequence[Any], reference: Any) -> np.ndarray:
    """The reference where every score is <= 0, else the compared arm with the largest score
    (the first on ties): post-processing of released scores, shared by every K-arm learner and
    the K-arm rule file."""
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    best = np.argmax(scores, axis=1)
    top = scores[np.arange(scores.shape[0]), best]
    labels = np.empty(scores.shape[0], dtype=object)
    labels[:] = [compared[j] for j in best]
    labels[top <= 0] = reference
    return labels


def _read(source):
    if isinstance(source, str) and "\n" in source:
        source = io.StringIO(source)
    return read_table(source)
