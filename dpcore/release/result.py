"""A release, computed and not yet published: the rule file's content and its ledger record.

:func:`dpcore.release.release` makes a :class:`Release`; its :meth:`Release.to_dict` is what
every surface writes (the page's download, ``dpcore fit``, the library, the rerun script), and
:meth:`Release.record` records it in the dataset's durable privacy ledger.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .._estimator import ClippingWarning, NoiseWarning
from ..owl.dpowl import DPOWL
from ..owl.plugin import PrivatePlugInRule
from ..privacy.composition import record_release
from .plan import ReleasePlan

__all__ = ["Release", "ledger_record"]


@dataclass(frozen=True, eq=False)
class Release:
    """One release, computed and not yet published.

    Attributes
    ----------
    rule : dpcore.owl.rule.Rule
        The rule and its public settings (``rule.to_dict()`` is the rule file's content).
    evaluation : PrivateEvaluation or None
        The private evaluation on the held-out patients, a release itself.
    trial : Trial
        The trial as read (every row; n the file's row count). Sensitive: never publish it.
    plan : ReleasePlan
    mechanism : str
        What the ledger calls it ("DP-OWL rule + private evaluation").
    entry : LedgerEntry or None
        The ledger's record, once :meth:`record` (or :func:`release` with ``ledger=``) ran.
    totals : (float, float) or None
        The dataset's cumulative (ε, δ) with this release, once recorded.
    diagnostics : dict
        The fit's diagnostics (clipped share, solver iterations): computed on the data without
        noise, for the analyst only, never in a file.
    """

    rule: Any
    evaluation: Any
    trial: Any
    plan: ReleasePlan
    mechanism: str
    entry: Any = None
    totals: tuple[float, float] | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def private(self) -> bool:
        return bool(self.rule.settings["private"])

    @property
    def title(self) -> str:
        return str(self.rule.settings["title"])

    def nonprivate_recommendations(self) -> np.ndarray:
        """The same learner with the same public settings at ε = ∞, fitted on every row of the
        trial: its recommendation (+1 treated, -1 control) per row. Analyst only: computed on
        the sensitive data without noise, never published or recorded (two arms only)."""
        trial, rule, s = self.trial, self.rule, self.rule.settings
        bounds = (np.asarray(rule.lower), np.asarray(rule.upper))
        outcome = tuple(s["outcome_bounds"])
        X = pd.DataFrame(np.asarray(trial.X), columns=list(trial.covariates))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ClippingWarning)  # analyst-only, never in the log
            warnings.simplefilter("ignore", NoiseWarning)
            if self.plan.learner == "plug-in":
                model: Any = PrivatePlugInRule(
                    epsilon=math.inf,
                    feature_bounds=bounds,
                    outcome_bounds=outcome,
                    larger_is_better=s["larger_is_better"],
                ).fit_trial(trial)
            else:
                p = self.plan.propensity
                model = DPOWL(
                    epsilon=math.inf,
                    gamma=s["gamma"],
                    weight_bound=s["W"],
                    C=s["C"],
                    feature_bounds=bounds,
                    outcome_bounds=outcome,
                    larger_is_better=s["larger_is_better"],
                ).fit_trial(trial, trial.propensity if p == "column" else p)
        return np.where(model.decision_function(X) > 0, 1.0, -1.0)

    def to_dict(self) -> dict[str, Any]:
        """The rule file's content: the rule, its public settings, its evaluation and, once
        recorded, the ledger's record. Every surface writes exactly this."""
        out = self.rule.to_dict()
        if self.evaluation is not None:
            out["evaluation"] = self.evaluation.to_dict()
        if self.entry is not None and self.totals is not None:
            out["ledger"] = ledger_record(self.entry.index, *self.totals)
        return out

    def record(self, ledger: Any, where: str = "") -> Release:
        """Record the release in ``ledger`` (its parts; without a guarantee when it has none);
        returns the release with its entry and the dataset's totals. ``where`` names the
        surface in the ledger ("dpcore fit"). Raises BudgetExceededError past the dataset's
        cap."""
        reasons = self.rule.settings["not_private_because"]
        name = self.mechanism + (" (NOT PRIVATE)" if reasons else "")
        name += f" ({where})" if where else ""
        entry = record_release(ledger, name, self.plan.parts, reasons)
        return replace(self, entry=entry, totals=tuple(ledger.total(through=entry.index)))


def ledger_record(index: int, epsilon_total: float, delta_total: float) -> dict[str, Any]:
    """The rule file's ``ledger`` field: the release's number on its dataset and the dataset's
    cumulative spend with it.

    Examples
    --------
    >>> (
    ...     ledger_record(2, 1.5, 0.0)["epsilon_total"],
    ...     ledger_record(3, math.inf, 0.0)["epsilon_total"],
    ... )
    ('1.5', 'no guarantee (inf)')
    """
    return {
        "release_index": int(index),
        "epsilon_total": "no guarantee (inf)"
        if math.isinf(epsilon_total)
        else f"{epsilon_total:g}",
        "delta_total": float(delta_total),
        "meaning": "this release's number among the releases on this dataset, and the "
        "privacy spent on it by all of them (basic composition; 'no guarantee' once a "
        "release without one was made)",
    }
