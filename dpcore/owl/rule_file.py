"""The rule file's format and its writer: which keys a released rule's JSON file holds.

Two formats. A two-arm rule (``format: "dpcore-rule/1"``, :data:`FORMAT`) is one linear score
in the covariates' original units, ``score = intercept + sum_j coef_j * clip(x_j, lower_j,
upper_j)``, and recommends ``treated`` when the score is positive. A rule over K arms
(``format: "dpcore-rule-k-arm/1"``, :data:`K_FORMAT`) holds one such score per arm against a
``reference``. Both carry the covariates (one-hot levels in ``categories``, public fills in
``fill``), the public bounds, the release's public settings as given (ε, bounds, n, the
learner's own), the package version and the recipes that apply them without dpcore
(:mod:`dpcore.owl.rule_recipe`). A file never holds a value estimate computed from the data
without noise (docs/architecture.md, privacy rule 7).

:func:`dpcore.owl.rule_read.load_rule` reads both formats back; files written by earlier
versions read the same way (their keys are unchanged).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from .._version import __version__
from ..data.errors import TrialDataError
from ..data.labels import plain_label
from .rule_recipe import (
    APPLY_DPCORE,
    APPLY_PYTHON,
    APPLY_RECIPE,
    K_APPLY_PYTHON,
    K_APPLY_RECIPE,
)

__all__ = [
    "FORMAT",
    "FORMAT_KEYS",
    "K_FORMAT",
    "REQUIRED",
    "RuleFileError",
    "RuleLike",
    "arms_rule_to_dict",
    "rule_to_dict",
    "write_rule",
]

FORMAT = "dpcore-rule/1"
K_FORMAT = "dpcore-rule-k-arm/1"
#: The keys a two-arm rule file must have.
REQUIRED = ("covariates", "intercept", "coef", "lower", "upper", "treated", "control")
#: The keys the writer adds around a rule and its settings (the format, the rule in words, the
#: one-hot columns, the package and the recipes): whatever else a file holds is a setting.
FORMAT_KEYS = (
    "format",
    "rule",
    "one_hot",
    "package",
    "package_version",
    "apply",
    "apply_python",
    "apply_dpcore",
)


class RuleFileError(TrialDataError):
    """A rule file that cannot be loaded, or patients it cannot be applied to."""


class RuleLike(Protocol):
    """What :func:`write_rule` writes besides a dict: a rule with its file's content."""

    def to_dict(self) -> dict[str, Any]: ...


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
        As the attributes of :class:`dpcore.owl.rule.Rule` (``fill`` is written only when
        there is one).
    **settings
        The release's public settings, written as given (``epsilon``, ``delta``, ``gamma``,
        ``W``, ``C``, ``sensitivity``, ``n``, ``outcome``, ``outcome_bounds``,
        ``larger_is_better``, ``propensity``, ``treatment``...). Pass only public values and
        released numbers, never a non-private estimate.

    Returns
    -------
    dict, ready for ``json.dumps``
    """
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
    return _with_settings(out, settings, APPLY_RECIPE, APPLY_PYTHON)


def arms_rule_to_dict(rule: Any) -> dict[str, Any]:
    """The K-arm rule file's content (:data:`K_FORMAT`) of a :class:`dpcore.owl.rule.ArmsRule`:
    the shared covariates, bounds and fills once, then one score per compared arm."""
    first = rule.rules[0]
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
            f"one score per arm other than '{rule.reference}'; recommend the arm of "
            f"the largest score when it is > 0, else '{rule.reference}'"
        ),
        **{k: head[k] for k in ("covariates", "one_hot", "categories", "lower", "upper")},
        **({"fill": head["fill"]} if "fill" in head else {}),
        "arms": [plain_label(a) for a in rule.arms],
        "reference": plain_label(rule.reference),
        "scores": [
            {
                "arm": plain_label(r.treated),
                "intercept": float(r.intercept),
                "coef": [float(v) for v in r.coef],
            }
            for r in rule.rules
        ],
    }
    return _with_settings(out, rule.settings, K_APPLY_RECIPE, K_APPLY_PYTHON)


def _with_settings(out, settings, recipe, python):
    """The rule's keys, then the settings (never overriding a rule's key), then the package
    and the recipes, in the order every rule file has."""
    out.update({k: v for k, v in settings.items() if k not in out})
    out.update(
        {
            "package": "dpcore",
            "package_version": __version__,
            "apply": recipe,
            "apply_python": python,
            "apply_dpcore": APPLY_DPCORE,
        }
    )
    return out


def write_rule(rule: RuleLike | Mapping[str, Any], path: str | os.PathLike[str] | None) -> str:
    """Write a :class:`dpcore.owl.rule.Rule` or :class:`dpcore.owl.rule.ArmsRule` (or the dict
    of :func:`rule_to_dict`) as JSON; returns the text."""
    if isinstance(rule, Mapping):
        data = dict(rule)
    elif callable(getattr(rule, "to_dict", None)):
        data = rule.to_dict()
    else:
        raise TypeError(
            "write_rule takes a Rule or ArmsRule (dpcore.owl.rule) or the dict of "
            f"rule_to_dict, got {type(rule).__name__}"
        )
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text
