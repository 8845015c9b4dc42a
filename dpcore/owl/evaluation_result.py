"""A released private evaluation, and what it says in words: two arms or K arms.

:class:`PrivateEvaluation` holds a two-arm evaluation's noisy cells and second moments (IPW's,
:func:`dpcore.owl.evaluation.evaluate_rule`; AIPW's subclass it), the complete-row counts, and
what follows from them by post-processing: the values of the rule, of treat-all and of
treat-none, the rule's gains over each fixed arm, the verdict and the average effect.
:class:`ArmsEvaluation` is the same over K arms (:func:`dpcore.owl.evaluation_arms.
evaluate_arms_rule`). Every field is releasable; ``summary`` says it in plain sentences, first
which arm is better on average (:mod:`dpcore.owl.evaluation_effect`), then the rule's verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .evaluation_common import (
    CELLS,
    COUNT_SENSITIVITY,
    Estimate,
    EvaluationPlan,
    by_arm,
    estimates_of,
    verdict_of,
)
from .evaluation_effect import (
    average_effect,
    best_arm,
    best_arm_sentence,
    better_arm,
    effect_sentence,
)

__all__ = ["COMPLETE_ROWS", "ArmsEvaluation", "PrivateEvaluation"]

#: What an evaluation's values are when some rows are incomplete (its counts are released).
COMPLETE_ROWS = (
    " The values are those of patients with complete rows, each arm's corrected by a noisy "
    "count of its complete rows (the population's when rows are missing completely at random "
    "within each arm: independently of the patients' covariates and outcomes)."
)


@dataclass(frozen=True)
class PrivateEvaluation:
    """The released evaluation: noisy cells and what follows from them (all releasable).

    ``values`` holds the rule, treat_all and treat_none on the outcome's scale; ``gains`` the
    rule's improvement over each fixed arm (positive is better for patients, outcome units);
    ``verdict`` is "better", "worse" or "inconclusive"
    (:func:`dpcore.owl.evaluation_common.verdict_of`). ``complete`` is the pair of noisy per-arm
    counts of complete rows (treated, control; None when every row was declared complete),
    ``count_rates`` the arms' public rates that turn them into complete shares
    (:func:`dpcore.owl.evaluation_common.count_rates`) and ``budget`` the split (ε_cells, ε_moments,
    ε_counts) of ε_eval.
    """

    epsilon: float
    m: int
    sensitivity: float
    level: float
    cells: tuple
    moments: tuple
    values: dict
    gains: dict
    verdict: str
    treated: object = None
    control: object = None
    complete: tuple | None = None
    budget: tuple = ()
    count_rates: tuple | None = None
    #: treat-all's value minus treat-none's (treated minus control, outcome units): the
    #: average effect, post-processing of the same cells (:func:`average_effect`).
    average_effect: Estimate | None = None
    larger_is_better: bool = True

    @classmethod
    def released(
        cls,
        plan: EvaluationPlan,
        release: Callable[..., dict],
        cells: Any,
        moments: Any,
        count: tuple | None,
        *,
        sensitivity: float,
        arms: tuple,
        **fields: Any,
    ) -> Any:
        """The evaluation of released numbers under ``plan``: ``release`` gives their values,
        gains and intervals at a level (post-processing, :meth:`EvaluationPlan.estimates`),
        from which follow the verdict and the average effect; ``fields`` are the rest of the
        class's fields."""

        def at(level: float) -> dict:
            return plan.estimates(release, cells, moments, count, level)

        values, gains = estimates_of(at(plan.level))
        return cls(
            epsilon=plan.epsilon,
            m=plan.m,
            sensitivity=sensitivity,
            level=plan.level,
            cells=tuple(map(float, cells)),
            moments=tuple(map(float, moments)),
            treated=arms[0],
            control=arms[1],
            complete=count,
            budget=tuple(float(e) for e in plan.epsilons),
            count_rates=tuple(float(r) for r in plan.count_rates) if plan.counted else None,
            values=values,
            gains=gains,
            verdict=verdict_of(gains),
            average_effect=average_effect(at, plan.level),
            larger_is_better=plan.larger_is_better,
            **fields,
        )

    @property
    def better_on_average(self) -> object:
        """The arm better on average when the average effect's interval excludes 0, else None."""
        return better_arm(self.average_effect, self.larger_is_better, self.treated, self.control)

    def first_answer(self) -> str:
        """Which arm is better on average, with its interval, in one sentence ('' without)."""
        return effect_sentence(
            self.average_effect, self.level, self.larger_is_better, self.treated, self.control
        )

    @property
    def complete_shares(self) -> tuple | None:
        """The arms' noisy complete shares N~_a / (m rho_a) (post-processing), or None."""
        if self.complete is None or self.count_rates is None:
            return None
        return tuple(float(n) / (self.m * r) for n, r in zip(self.complete, self.count_rates))

    def summary(self) -> str:
        """The first answer (which arm is better on average), then the rule's verdict and the
        evidence behind it, in plain sentences."""
        first = self.first_answer()
        return (first + " " if first else "") + self.rule_sentence()

    def rule_sentence(self) -> str:
        """One plain sentence with the rule's verdict and the evidence behind it."""
        pct = f"{100 * self.level:g}%"
        all_, none = self.gains["over_treat_all"], self.gains["over_treat_none"]
        arms = f"'{self.treated}'" if self.treated is not None else "the treated arm"
        ctrl = f"'{self.control}'" if self.control is not None else "the control arm"
        head = {
            "better": "The private rule beats treating everyone with either arm",
            "worse": "The private rule does worse than treating everyone with one arm",
            "inconclusive": "This evaluation cannot tell whether the private rule beats "
            "treating everyone with the better arm",
        }[self.verdict]
        return (
            f"{head} ({pct} confidence, ε_eval = {self.epsilon:g}, {self.m} patients held "
            f"out): its gain over giving everyone {arms} is {all_.value:+.3g} "
            f"[{all_.lower:.3g}, {all_.upper:.3g}], over giving everyone {ctrl} "
            f"{none.value:+.3g} [{none.lower:.3g}, {none.upper:.3g}], in the outcome's "
            "units (positive is better for patients)."
            + ("" if self.complete is None else COMPLETE_ROWS)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon_eval": self.epsilon,
            "patients": self.m,
            "level": self.level,
            "sensitivity_l1": self.sensitivity,
            "cells": dict(zip(CELLS, self.cells)),
            "second_moments": dict(zip(CELLS, self.moments)),
            "complete_rows_noisy": by_arm(self.complete),
            "complete_share_noisy": by_arm(self.complete_shares),
            "complete_count_rates": by_arm(self.count_rates),
            "complete_count_sensitivity_l1": (None if self.complete is None else COUNT_SENSITIVITY),
            "epsilon_split": dict(zip(("cells", "second_moments", "complete_count"), self.budget)),
            "values": {k: v.to_dict() for k, v in self.values.items()},
            "gains": {k: v.to_dict() for k, v in self.gains.items()},
            **(
                {}
                if self.average_effect is None
                else {
                    "average_effect": {
                        **self.average_effect.to_dict(),
                        "meaning": "treat-all's value minus treat-none's (treated minus control), "
                        "outcome units; the interval's level holds for the two values together",
                        "better_on_average": None
                        if self.better_on_average is None
                        else str(self.better_on_average),
                    }
                }
            ),
            "verdict": self.verdict,
            "summary": self.summary(),
        }


@dataclass(frozen=True)
class ArmsEvaluation:
    """The released evaluation of a K-arm rule (all releasable).

    ``values``: "rule" and one entry per arm (everyone given that arm), outcome scale;
    ``gains``: the rule's improvement over giving everyone each arm (positive is better for
    patients); ``verdict``: "better", "worse" or "inconclusive". ``cells`` and
    ``cell_moments`` are the released 2K cells and second moments (:func:`arm_cells`);
    ``sums`` and ``moments`` their sums (V_rule, V_1..V_K), post-processing; ``complete``
    the arms' noisy counts of complete rows (None when every row was declared complete).
    """

    epsilon: float
    m: int
    sensitivity: float
    level: float
    sums: tuple
    moments: tuple
    values: dict
    gains: dict
    verdict: str
    arms: tuple
    complete: tuple | None = None
    budget: tuple = ()
    cells: tuple = ()
    cell_moments: tuple = ()
    #: Each arm's value with an interval that holds for all K arms together at the level.
    joint_values: dict = field(default_factory=dict)
    larger_is_better: bool = True

    @property
    def best_on_average(self):
        """The arm whose joint interval lies beyond every other arm's (in the better
        direction), else None: the single arm shown best on average."""
        return best_arm(self.joint_values, self.larger_is_better)

    def first_answer(self):
        """Which single arm is best on average, or that none can be told best ('' without)."""
        return best_arm_sentence(self.joint_values, self.level, self.larger_is_better)

    def summary(self):
        first = self.first_answer()
        return (first + " " if first else "") + self.rule_sentence()

    def rule_sentence(self):
        pct = f"{100 * self.level:g}%"
        head = {
            "better": "The private rule beats giving everyone any one arm",
            "worse": "The private rule does worse than giving everyone one of the arms",
            "inconclusive": "This evaluation cannot tell whether the private rule beats "
            "giving everyone the best single arm",
        }[self.verdict]
        gains = "; ".join(
            f"over '{a}' {g.value:+.3g} [{g.lower:.3g}, {g.upper:.3g}]"
            for a, g in self.gains.items()
        )
        return (
            f"{head} ({pct} confidence, ε_eval = {self.epsilon:g}, {self.m} patients held "
            f"out). Its gains, in the outcome's units (positive is better for patients): "
            f"{gains}." + ("" if self.complete is None else COMPLETE_ROWS)
        )

    def to_dict(self):
        names = ["rule", *(str(a) for a in self.arms)]
        cell_names = [
            f"arm '{a}', {kind}" for a in self.arms for kind in ("recommended", "not recommended")
        ]
        labels = [str(a) for a in self.arms]
        return {
            "epsilon_eval": self.epsilon,
            "patients": self.m,
            "level": self.level,
            "sensitivity_l1": self.sensitivity,
            "sums": dict(zip(names, self.sums)),
            "second_moments": dict(zip(names, self.moments)),
            "cells": dict(zip(cell_names, self.cells)),
            "cell_second_moments": dict(zip(cell_names, self.cell_moments)),
            "complete_rows_noisy": (
                None if self.complete is None else dict(zip(labels, self.complete))
            ),
            "complete_count_sensitivity_l1": None if self.complete is None else COUNT_SENSITIVITY,
            "epsilon_split": dict(zip(("sums", "second_moments", "complete_count"), self.budget)),
            "values": {str(k): v.to_dict() for k, v in self.values.items()},
            "gains": {str(k): v.to_dict() for k, v in self.gains.items()},
            "values_joint": {
                str(k): {"lower": lo, "upper": hi} for k, (lo, hi) in self.joint_values.items()
            },
            "best_on_average": None if self.best_on_average is None else str(self.best_on_average),
            "verdict": self.verdict,
            "summary": self.summary(),
        }
