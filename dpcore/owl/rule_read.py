"""Reading a rule file back: :func:`load_rule` (``dpcore.load_rule``) and its checks.

Both formats of :mod:`dpcore.owl.rule_file` are read, from a path, the JSON text or bytes, an
open file or the parsed dict; every entry is checked before a :class:`dpcore.owl.rule.Rule` or
:class:`dpcore.owl.rule.ArmsRule` is made, and a file that does not fit together raises a
:class:`dpcore.owl.rule_file.RuleFileError` that says what is wrong. Everything in the file
that is not the rule itself is kept as the rule's ``settings``, with ``file_version`` the
package version that wrote it.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, cast

from ..data.columns import MISSING_SUFFIX
from ..data.errors import name_list, quote
from .rule import ArmsRule, Rule
from .rule_file import FORMAT_KEYS, K_FORMAT, REQUIRED, RuleFileError

__all__ = ["RuleSource", "load_rule"]

#: What :func:`load_rule` takes: a path to the JSON file, its text or bytes, an open file, the dict.
RuleSource = str | os.PathLike[str] | bytes | IO[Any] | Mapping[str, Any]


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
        raise RuleFileError("a rule file is a JSON object with the keys " + ", ".join(REQUIRED))
    if data.get("format") == K_FORMAT:
        return _load_arms(data)
    missing = [k for k in REQUIRED if k not in data]
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
    settings = _settings(data, (*REQUIRED, "categories"))
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
    listed = [data["reference"], *(cast(Rule, r).treated for r in rules)]  # no "scores": a Rule
    if sorted(map(str, listed)) != sorted(map(str, arms)):
        raise RuleFileError("'arms' must be the reference and the arm of each score, once each")
    settings = _settings(
        data, ("covariates", "categories", "lower", "upper", "arms", "reference", "scores")
    )
    return ArmsRule(
        rules=tuple(rules), arms=tuple(arms), reference=data["reference"], settings=settings
    )


def _settings(data, rule_keys):
    """Everything in a rule file that is not the rule (``rule_keys``) or the format's own keys,
    in the file's order, with ``file_version`` the package version that wrote it."""
    skip = {*rule_keys, "fill", *FORMAT_KEYS}
    settings = {k: v for k, v in data.items() if k not in skip}
    settings["file_version"] = data.get("package_version")
    return settings


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
