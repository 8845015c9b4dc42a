"""The rule file of a private release: write it, load it, apply it to new patients.

A released DP-OWL rule (:func:`rule_from_dpowl`) or private plug-in rule
(:func:`rule_from_plugin`) is a linear score in the original units of the covariates,
``score = intercept + sum_j coef_j * clip(x_j, lower_j, upper_j)``, and the recommendation is
the treated arm when ``score > 0`` (ties go to the control arm, as in :class:`dpcore.DPOWL`).
The file holds the rule, the public settings that define the release (ε, bounds, n, and the
learner's own: γ and W for DP-OWL, the ridge for the plug-in rule), the ``mechanism`` that made
it and the package version; it never holds a value estimate computed from the data without
noise (docs/architecture.md, privacy rule 7).

Examples
--------
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
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..data.columns import MISSING_SUFFIX, clean_cells, read_numbers
from ..data.csv_io import Source, read_table
from ..data.errors import TrialDataError, name_list, quote
from ..data.labels import plain_label
from ..privacy.mechanisms import (
    OBJECTIVE_PERTURBATION,
    OUTPUT_PERTURBATION,
    PLUG_IN_STATISTICS,
    Mechanism,
)

if TYPE_CHECKING:
    from ..data.trial import Trial
    from .dpowl import DPOWL
    from .plugin import PrivatePlugInRule

__all__ = [
    "FORMAT",
    "K_FORMAT",
    "ArmsRule",
    "Patients",
    "Rule",
    "RuleFileError",
    "RuleSource",
    "load_rule",
    "rule_from_dpowl",
    "rule_from_karm",
    "rule_from_plugin_arms",
    "rule_from_plugin",
    "rule_to_dict",
    "write_rule",
]

#: What :meth:`Rule.recommend` takes: a DataFrame of patients, a CSV path, its bytes or text.
Patients = pd.DataFrame | Source
#: What :func:`load_rule` takes: a path to the JSON file, its text or bytes, an open file, the dict.
RuleSource = str | os.PathLike[str] | bytes | IO[Any] | Mapping[str, Any]

FORMAT = "dpcore-rule/1"
_REQUIRED = ("covariates", "intercept", "coef", "lower", "upper", "treated", "control")

#: How to apply the rule without dpcore; written into the file verbatim.
APPLY_RECIPE = [
    "For each patient, build x in the order of 'covariates': a numeric covariate is its value;",
    "a one-hot column 'col=level' is 1 when the patient's 'col' equals 'level', else 0.",
    "A column listed in 'fill' that the patient is missing takes its fill value there, and the",
    "covariate 'col is missing' is 1 (0 when the patient has a value).",
    "Clip each x_j to [lower_j, upper_j] (the public bounds).",
    "score = intercept + sum_j coef_j * x_j.",
    "Recommend 'treated' when score > 0, otherwise 'control' (a score of exactly 0 goes to control).",
]
#: The design matrix of a rule file's covariates, in plain Python (both rule formats).
_PYTHON_DESIGN = """import json, numpy as np
RULE_FILE = "private_rule.json"  # this file, by the name it was saved under
rule = json.load(open(RULE_FILE))
fill = rule.get("fill", {})
def missing(v):
    return v is None or v != v or str(v).strip() == ""
def cell(r, c):  # the patient's value of column c, its public fill when missing
    return fill[c] if c in fill and missing(r.get(c)) else r[c]
def x(r, c):
    if c.endswith(" is missing") and c[: -len(" is missing")] in fill:
        return float(missing(r.get(c[: -len(" is missing")])))
    if c in rule["one_hot"]:
        col, level = c.split("=", 1)
        return float(str(cell(r, col)).strip() == level)
    return float(cell(r, c))
def design(rows):  # rows: list of dicts {column: value}, or a pandas DataFrame's records
    X = np.array([[x(r, c) for c in rule["covariates"]] for r in rows])
    return np.clip(X, rule["lower"], rule["upper"])
"""
APPLY_PYTHON = (
    _PYTHON_DESIGN
    + """def recommend(rows):
    score = rule["intercept"] + design(rows) @ np.array(rule["coef"])
    return np.where(score > 0, rule["treated"], rule["control"])"""
)
APPLY_DPCORE = """import dpcore
rule = dpcore.load_rule("private_rule.json")  # this file, by the name it was saved under
print(rule.recommend("new_patients.csv"))  # the arm labels, one per row"""


class RuleFileError(TrialDataError):
    """A rule file that cannot be loaded, or patients it cannot be applied to."""


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
        for c, levels in self.categories.items():
            key = cleaned[c].map(plain_label).astype(str)
            outside = ~key.isin([str(v) for v in levels]).to_numpy()
            if c in self.fill:  # a missing cell takes the public fill
                outside &= cleaned[c].notna().to_numpy()
            if outside.any():
                i = int(np.argmax(outside))
                raise RuleFileError(
                    f"{quote(c)} is {quote(key.iloc[i])} in row {i + 1}, which is not "
                    f"one of the rule's levels {name_list(levels, 8)}"
                )
        return self._matrix(cleaned, len(table), strict=True)

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
        for c, levels in self.categories.items():
            key = cleaned[c].map(plain_label).astype(str)
            outside = ~key.isin([str(v) for v in levels]).to_numpy()
            if c in self.fill:
                outside &= cleaned[c].notna().to_numpy()
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


def rule_to_dict(
    *,
    covariates,
    intercept,
    coef,
    lower,
    upper,
    treated,
    control,
    categories=None,
    fill=None,
    **settings,
):
    """The rule file's content: the rule, its public settings and the package version.

    Parameters
    ----------
    covariates, intercept, coef, lower, upper, treated, control, categories, fill
        As the attributes of :class:`Rule` (``fill`` is written only when there is one).
    **settings
        The release's public settings, written as given (``epsilon``, ``delta``, ``gamma``,
        ``W``, ``C``, ``sensitivity``, ``n``, ``outcome``, ``outcome_bounds``,
        ``larger_is_better``, ``propensity``, ``treatment``...). Pass only public values and
        released numbers, never a non-private estimate.

    Returns
    -------
    dict, ready for ``json.dumps``
    """
    from .. import __version__

    categories = {
        str(c): [plain_label(v) for v in levels] for c, levels in (categories or {}).items()
    }
    out = {
        "format": FORMAT,
        "rule": f"treat with '{treated}' when score > 0, else '{control}'",
        "covariates": [str(c) for c in covariates],
        "one_hot": [f"{c}={lev}" for c, levels in categories.items() for lev in levels[1:]],
        "categories": categories,
        "intercept": float(intercept),
        "coef": [float(v) for v in coef],
        "lower": [float(v) for v in lower],
        "upper": [float(v) for v in upper],
        "treated": plain_label(treated),
        "control": plain_label(control),
    }
    if fill:
        out["fill"] = {str(c): plain_label(v) for c, v in fill.items()}
    out.update({k: v for k, v in settings.items() if k not in out})
    out.update(
        {
            "package": "dpcore",
            "package_version": __version__,
            "apply": APPLY_RECIPE,
            "apply_python": APPLY_PYTHON,
            "apply_dpcore": APPLY_DPCORE,
        }
    )
    return out


def rule_from_dpowl(
    model: DPOWL, trial: Trial, *, not_private: Iterable[str] = (), **settings: Any
) -> Rule:
    """A :class:`Rule` from a fitted :class:`dpcore.DPOWL` and the :class:`dpcore.Trial` it saw.

    ``settings`` are the public settings to record (see :func:`rule_to_dict`); ε, γ, W, C,
    the sensitivity and n are taken from the model and the trial unless given.

    The file says whether the release is private, as the dashboard's does: ``title``
    ("Private treatment rule (ε = …)" or "NOT PRIVATE treatment rule (ε = …): … void the
    guarantee"), ``private`` and ``not_private_because``. It is NOT PRIVATE when the model's
    feature bounds were read from the data, when ``settings`` has a ``seed`` (seeded noise
    can be removed by anyone with the seed), when ε is infinite, or for every reason given
    in ``not_private``.
    """
    model._check_fitted()
    scaling = model.scaling_
    title, void = _title(model, not_private, settings)
    mechanism = dpowl_mechanism(model)
    base = {
        "title": title,
        "private": not void,
        "not_private_because": void,
        "treatment": trial.treatment,
        "outcome": trial.outcome,
        "epsilon": model.epsilon,
        "delta": mechanism.delta,
        "gamma": getattr(model, "gamma_", model.gamma),
        "W": model.weight_bound_,
        "C": model.C,
        "sensitivity": model.sensitivity_,
        "n": int(trial.n),
        "outcome_bounds": None if model.outcome_bounds is None else list(model.outcome_bounds),
        "larger_is_better": bool(model.larger_is_better_),
        "mechanism": mechanism.sentence(),
    }
    base = _settings(base, settings, title, void, mechanism.name)
    return _linear_rule(model, trial, scaling.lower, scaling.upper, base)


def dpowl_mechanism(model: DPOWL) -> Mechanism:
    """The mechanism a DP-OWL release used, by its ``perturbation`` ("output" if unset)."""
    perturbation = getattr(model, "perturbation", "output")
    return OBJECTIVE_PERTURBATION if perturbation == "objective" else OUTPUT_PERTURBATION


def rule_from_plugin(
    model: PrivatePlugInRule, trial: Trial, *, not_private: Iterable[str] = (), **settings: Any
) -> Rule:
    """A :class:`Rule` from a fitted :class:`dpcore.PrivatePlugInRule` and the trial it saw.

    The plug-in rule's score is linear in the covariates, so its file is a rule file like
    DP-OWL's (:func:`rule_from_dpowl`): ``load_rule`` reads it and ``Rule.recommend`` applies
    it. Its ``mechanism`` names the plug-in rule
    (:data:`dpcore.privacy.mechanisms.PLUG_IN_STATISTICS`), and its settings are the plug-in's
    public ones: ε, δ, the ridge, the statistics' L1 sensitivity, n, the outcome bounds and
    direction, and the covariates the outcome models use. It is NOT PRIVATE when a bound
    (features or outcome) was read from the data, when ``settings`` has a ``seed``, when ε is
    infinite, or for every reason given in ``not_private``.
    """
    model._check_fitted()
    title, void = _title(model, not_private, settings)
    lower, upper = model.feature_bounds_
    base = {
        "title": title,
        "private": not void,
        "not_private_because": void,
        "treatment": trial.treatment,
        "outcome": trial.outcome,
        "learner": "private plug-in rule (per-arm linear outcome models)",
        "epsilon": model.epsilon,
        "delta": PLUG_IN_STATISTICS.delta,
        "ridge": model.ridge,
        "sensitivity_l1": model.sensitivity_,
        "n": int(trial.n),
        "outcome_bounds": list(model.outcome_bounds_),
        "larger_is_better": bool(model.larger_is_better_),
        "model_covariates": [str(trial.covariates[j]) for j in model.columns_],
        "mechanism": PLUG_IN_STATISTICS.sentence(),
    }
    base = _settings(base, settings, title, void, PLUG_IN_STATISTICS.name)
    return _linear_rule(model, trial, lower, upper, base)


def _linear_rule(model, trial, lower, upper, settings):
    """The :class:`Rule` of a fitted two-arm model with a linear score in original units."""
    return Rule(
        covariates=tuple(trial.covariates),
        intercept=float(model.intercept_),
        coef=tuple(map(float, model.coef_)),
        lower=tuple(map(float, lower)),
        upper=tuple(map(float, upper)),
        treated=plain_label(trial.arms[0]),
        control=plain_label(trial.arms[1]),
        categories={c: [plain_label(v) for v in lv] for c, lv in trial.categories.items()},
        settings=settings,
        fill=dict(getattr(trial, "fills", {})),
    )


def _title(model, not_private, settings, what="treatment rule"):
    """The release's title and the reasons (if any) it has no guarantee."""
    void = [str(r) for r in not_private]
    if getattr(model, "bounds_from_data_", False):
        # the plug-in rule says which bounds (features, outcome); DP-OWL reads only features
        void.append(getattr(model, "_void_bounds", "") or "feature bounds read from the data")
    if settings.get("seed") is not None:
        void.append(f"seeded noise (seed {settings['seed']})")
    if math.isinf(float(model.epsilon)):
        void.append("no noise (epsilon = inf)")
    if void:
        return (
            f"NOT PRIVATE {what} (ε = {float(model.epsilon):g}): "
            f"{'; '.join(void)} void the guarantee"
        ), void
    return f"Private {what} (ε = {float(model.epsilon):g})", void


def _settings(base, settings, title, void, computed_as):
    merged = {**base, **settings}
    if void:  # no setting passed in can make a release without a guarantee look private
        merged.update(
            title=title,
            private=False,
            not_private_because=void,
            mechanism="NOT PRIVATE: " + "; ".join(void) + " void the guarantee. "
            f"Computed as {computed_as}",
        )
    return {k: _jsonable(v) for k, v in merged.items()}


# --------------------------------------------------------------------------------------------
# A rule over K arms (dpcore.owl.karm.KArmOWL)

K_FORMAT = "dpcore-rule-k-arm/1"
K_APPLY_RECIPE = [
    "For each patient, build x in the order of 'covariates': a numeric covariate is its value;",
    "a one-hot column 'col=level' is 1 when the patient's 'col' equals 'level', else 0.",
    "A column listed in 'fill' that the patient is missing takes its fill value there, and the",
    "covariate 'col is missing' is 1 (0 when the patient has a value).",
    "Clip each x_j to [lower_j, upper_j] (the public bounds).",
    "For each entry of 'scores': score = intercept + sum_j coef_j * x_j.",
    "Recommend the 'reference' arm when every score is <= 0; otherwise the 'arm' of the largest "
    "score (the first listed on ties).",
]
K_APPLY_PYTHON = (
    _PYTHON_DESIGN
    + """def recommend(rows):
    x = design(rows)
    s = np.column_stack([k["intercept"] + x @ np.array(k["coef"]) for k in rule["scores"]])
    best = s.argmax(axis=1)
    arms = np.array([k["arm"] for k in rule["scores"]], dtype=object)[best]
    return np.where(s.max(axis=1) > 0, arms, rule["reference"])"""
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
        from .karm import choose_arm

        return choose_arm(
            self.decision_function(patients), [r.treated for r in self.rules], self.reference
        )

    def recommendations(self, patients: Patients) -> pd.DataFrame:
        """The patients' table with a ``recommendation`` column (one of the K arms) and, for a
        row the rule cannot score, an empty recommendation and the reason in ``not_scored``
        (as :meth:`Rule.recommendations`)."""
        from .karm import choose_arm

        table, x, reasons = self.rules[0]._scorable(patients)
        scored = reasons == ""
        scores = np.column_stack(
            [r.intercept + x[scored] @ np.asarray(r.coef, dtype=float) for r in self.rules]
        )
        recommendation = np.full(len(table), None, dtype=object)
        recommendation[scored] = choose_arm(scores, [r.treated for r in self.rules], self.reference)
        return table.assign(recommendation=recommendation, not_scored=reasons)

    def to_dict(self):
        from .. import __version__

        first = self.rules[0]
        head = rule_to_dict(
            covariates=first.covariates,
            intercept=0.0,
            coef=first.coef,
            lower=first.lower,
            upper=first.upper,
            treated=None,
            control=None,
            categories=first.categories,
            fill=first.fill,
        )
        out = {
            "format": K_FORMAT,
            "rule": (
                f"one score per arm other than '{self.reference}'; recommend the arm of "
                f"the largest score when it is > 0, else '{self.reference}'"
            ),
            **{k: head[k] for k in ("covariates", "one_hot", "categories", "lower", "upper")},
            **({"fill": head["fill"]} if "fill" in head else {}),
            "arms": [plain_label(a) for a in self.arms],
            "reference": plain_label(self.reference),
            "scores": [
                {
                    "arm": plain_label(r.treated),
                    "intercept": float(r.intercept),
                    "coef": [float(v) for v in r.coef],
                }
                for r in self.rules
            ],
        }
        out.update({k: v for k, v in self.settings.items() if k not in out})
        out.update(
            {
                "package": "dpcore",
                "package_version": __version__,
                "apply": K_APPLY_RECIPE,
                "apply_python": K_APPLY_PYTHON,
                "apply_dpcore": APPLY_DPCORE,
            }
        )
        return out


def rule_from_karm(model, trial, *, not_private=(), **settings):
    """An :class:`ArmsRule` from a fitted :class:`dpcore.owl.karm.KArmOWL` and its trial.

    As :func:`rule_from_dpowl`: the file says whether the release is private (``title``,
    ``private``, ``not_private_because``) and holds only public settings and the released
    scores.
    """
    model._check_fitted()
    scaling = model.scaling_
    title, void = _title(
        model, not_private, settings, f"treatment rule over {len(model.arms_)} arms"
    )
    base = {
        "title": title,
        "private": not void,
        "not_private_because": void,
        "treatment": trial.treatment,
        "outcome": trial.outcome,
        "epsilon": model.epsilon,
        "epsilon_per_rule": model.epsilons_[0],
        "delta": OUTPUT_PERTURBATION.delta,
        "gamma": list(model.gammas_),
        "W": list(model.weight_bounds_),
        "C": model.C,
        "sensitivity": list(model.sensitivities_),
        "n": int(trial.n),
        "arm_probabilities": list(model.arm_probabilities_),
        "outcome_bounds": list(model.outcome_bounds),
        "larger_is_better": bool(model.larger_is_better_),
        "mechanism": OUTPUT_PERTURBATION.sentence(
            f"K-arm DP-OWL: {len(model.rules_)} Huber-hinge weighted ERM rules, each "
            f"arm against '{model.reference_}' at ε/{len(model.rules_)}, output "
            "perturbation, basic composition"
        ),
    }
    base = _settings(base, settings, title, void, "K-arm DP-OWL, output perturbation")
    return _arms_rule(model, trial, scaling.lower, scaling.upper, base)


def rule_from_plugin_arms(model, trial, *, not_private=(), **settings):
    """An :class:`ArmsRule` from a fitted :class:`dpcore.owl.plugin_arms.PrivatePlugInArms`:
    one score per compared arm against the reference, released together at ε (one release of
    every arm's statistics, no split of ε)."""
    model._check_fitted()
    lower, upper = model.feature_bounds_
    title, void = _title(
        model, not_private, settings, f"treatment rule over {len(model.arms_)} arms"
    )
    base = {
        "title": title,
        "private": not void,
        "not_private_because": void,
        "treatment": trial.treatment,
        "outcome": trial.outcome,
        "learner": "private plug-in rule over every arm (one linear outcome model per arm)",
        "epsilon": model.epsilon,
        "delta": PLUG_IN_STATISTICS.delta,
        "ridge": model.ridge,
        "sensitivity_l1": model.sensitivity_,
        "n": int(trial.n),
        "arm_probabilities": None
        if trial.arm_probabilities is None
        else list(trial.arm_probabilities),
        "outcome_bounds": list(model.outcome_bounds_),
        "larger_is_better": bool(model.larger_is_better_),
        "model_covariates": [str(trial.covariates[j]) for j in model.columns_],
        "mechanism": PLUG_IN_STATISTICS.sentence(
            f"the private plug-in rule over {len(model.arms_)} arms: every arm's statistics "
            "in one release at ε (a patient is in one arm's block)"
        ),
    }
    base = _settings(base, settings, title, void, PLUG_IN_STATISTICS.name)
    return _arms_rule(model, trial, lower, upper, base)


def _arms_rule(model, trial, lower, upper, settings):
    """The :class:`ArmsRule` of a fitted K-arm model: one linear score per compared arm
    against the reference, in the covariates' original units."""
    categories = {c: [plain_label(v) for v in lv] for c, lv in trial.categories.items()}
    rules = tuple(
        Rule(
            covariates=tuple(trial.covariates),
            intercept=float(b),
            coef=tuple(map(float, w)),
            lower=tuple(map(float, lower)),
            upper=tuple(map(float, upper)),
            treated=plain_label(arm),
            control=plain_label(model.reference_),
            categories=categories,
            fill=dict(getattr(trial, "fills", {})),
        )
        for arm, w, b in zip(model.compared_, model.coef_, model.intercept_)
    )
    return ArmsRule(
        rules=rules,
        arms=tuple(plain_label(a) for a in model.arms_),
        reference=plain_label(model.reference_),
        settings=settings,
    )


def _load_arms(data):
    """An :class:`ArmsRule` from a K-arm rule file's dict (each score checked as a rule)."""
    for key in ("arms", "reference", "scores", "covariates", "lower", "upper"):
        if key not in data:
            raise RuleFileError(f"this K-arm rule file has no {quote(key)}")
    scores, arms = data["scores"], data["arms"]
    if not isinstance(scores, list) or not scores or not isinstance(arms, list):
        raise RuleFileError("'scores' must be a list of {arm, intercept, coef} and 'arms' a list")
    rules = []
    for entry in scores:
        if not isinstance(entry, dict) or not {"arm", "intercept", "coef"} <= entry.keys():
            raise RuleFileError("each entry of 'scores' needs 'arm', 'intercept' and 'coef'")
        rules.append(
            load_rule(
                {
                    **{k: data[k] for k in ("covariates", "lower", "upper")},
                    "categories": data.get("categories") or {},
                    "fill": data.get("fill") or {},
                    "intercept": entry["intercept"],
                    "coef": entry["coef"],
                    "treated": entry["arm"],
                    "control": data["reference"],
                }
            )
        )
    listed = [data["reference"], *(r.treated for r in rules)]
    if sorted(map(str, listed)) != sorted(map(str, arms)):
        raise RuleFileError("'arms' must be the reference and the arm of each score, once each")
    settings = {
        k: v
        for k, v in data.items()
        if k
        not in (
            "covariates",
            "one_hot",
            "categories",
            "lower",
            "upper",
            "arms",
            "reference",
            "scores",
            "fill",
            "format",
            "rule",
            "package",
            "package_version",
            "apply",
            "apply_python",
            "apply_dpcore",
        )
    }
    settings["file_version"] = data.get("package_version")
    return ArmsRule(
        rules=tuple(rules), arms=tuple(arms), reference=data["reference"], settings=settings
    )


def write_rule(
    rule: Rule | ArmsRule | Mapping[str, Any], path: str | os.PathLike[str] | None
) -> str:
    """Write a :class:`Rule` or :class:`ArmsRule` (or the dict of :func:`rule_to_dict`) as
    JSON; returns the text."""
    data = rule.to_dict() if isinstance(rule, (Rule, ArmsRule)) else dict(rule)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def load_rule(source: RuleSource) -> Rule | ArmsRule:
    """Load a rule file written by :func:`write_rule` (or by the app's download).

    Parameters
    ----------
    source : str, path, bytes, file object or dict
        A path to the JSON file, its text or bytes, an open file, or the parsed dict.

    Returns
    -------
    Rule, or ArmsRule for a rule over K arms (``format`` ``dpcore-rule-k-arm/1``); both
    have ``recommend``, ``decision_function``, ``columns`` and ``settings``.

    Raises
    ------
    RuleFileError
        When the file is not a rule file or its entries do not fit together.
    """
    data = source if isinstance(source, dict) else _json(source)
    if not isinstance(data, dict):
        raise RuleFileError("a rule file is a JSON object with the keys " + ", ".join(_REQUIRED))
    if data.get("format") == K_FORMAT:
        return _load_arms(data)
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise RuleFileError(f"this is not a rule file: it has no {name_list(missing)}")
    names = data["covariates"]
    if not isinstance(names, list) or not all(isinstance(c, str) for c in names):
        raise RuleFileError("'covariates' must be a list of column names")
    vectors = {}
    for k in ("coef", "lower", "upper"):
        try:
            v = [float(x) for x in data[k]]
        except (TypeError, ValueError):
            raise RuleFileError(f"'{k}' must be a list of numbers") from None
        if len(v) != len(names) or not all(math.isfinite(x) for x in v):
            raise RuleFileError(f"'{k}' must hold {len(names)} finite numbers, one per covariate")
        vectors[k] = tuple(v)
    if any(lo > hi for lo, hi in zip(vectors["lower"], vectors["upper"])):
        raise RuleFileError("every lower bound must be at most its upper bound")
    try:
        intercept = float(data["intercept"])
    except (TypeError, ValueError):
        raise RuleFileError("'intercept' must be a number") from None
    categories = data.get("categories") or {}
    if not isinstance(categories, dict):
        raise RuleFileError("'categories' must map each one-hot column to its levels")
    one_hot = {f"{c}={lev}" for c, levels in categories.items() for lev in list(levels)[1:]}
    stray = [c for c in names if "=" in c and c not in one_hot and c.split("=", 1)[0] in categories]
    absent = sorted(one_hot - set(names))
    if stray or absent:
        raise RuleFileError(
            f"'covariates' and 'categories' disagree about {name_list(stray + absent)}"
        )
    settings = {
        k: v
        for k, v in data.items()
        if k
        not in (
            *_REQUIRED,
            "categories",
            "one_hot",
            "format",
            "rule",
            "package",
            "package_version",
            "apply",
            "apply_python",
            "apply_dpcore",
            "fill",
        )
    }
    settings["file_version"] = data.get("package_version")
    fill = data.get("fill") or {}
    if not isinstance(fill, dict) or any(f"{c}{MISSING_SUFFIX}" not in names for c in fill):
        raise RuleFileError(
            "'fill' must map each filled column to its value, with its covariate "
            f"'<column>{MISSING_SUFFIX}'"
        )
    return Rule(
        fill=dict(fill),
        covariates=tuple(names),
        intercept=intercept,
        treated=data["treated"],
        control=data["control"],
        categories={c: list(v) for c, v in categories.items()},
        settings=settings,
        **vectors,
    )


def _json(source):
    if isinstance(source, Path) or (
        isinstance(source, str) and source.lstrip()[:1] not in ("{", "[")
    ):
        try:
            source = Path(source).read_bytes()
        except OSError as exc:
            raise RuleFileError(
                f"cannot open the rule file {quote(str(source))}: {exc.strerror}"
            ) from None
    if hasattr(source, "read"):
        source = source.read()
    try:
        return json.loads(source)
    except (json.JSONDecodeError, UnicodeDecodeError, TypeError) as exc:
        raise RuleFileError(f"the rule file is not valid JSON ({exc})") from None


def _read(source):
    if isinstance(source, str) and "\n" in source:
        source = io.StringIO(source)
    return read_table(source)


def _jsonable(v):
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    return v
