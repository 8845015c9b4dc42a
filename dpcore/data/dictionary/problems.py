"""What can be wrong with a data dictionary: each :class:`Problem` with where it is and its
fix, :class:`DictionaryError` carrying them all, and the checks of an assembled dictionary.

Every problem of a file is listed at once; the reader (:mod:`~dpcore.data.dictionary.read`)
builds a dictionary from everything valid and leaves out the parts a problem names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import TrialDataError, duplicates, name_list, quote
from ..labels import same_label
from .vocabulary import LEVEL_SEP

__all__ = ["DictionaryError", "Problem", "bounds_pair", "consistency_problems"]


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


def consistency_problems(d: Any) -> list[Problem]:
    """Every problem of an assembled dictionary (the reader drops the parts they name): a
    column listed twice, two columns in one role, a categorical column without levels, a
    binary one with other bounds, the treated arm or the arm probabilities against the
    levels, a randomization probability against the propensity column."""
    out = []
    names = [c.name for c in d.columns]
    for name in duplicates(names):
        out.append(
            Problem(
                f"column {quote(name)}",
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
                    f"columns {name_list(named)}",
                    "role",
                    f"{len(named)} columns have role {role}; one column can",
                    f"keep role {role} on one of them, give the others role covariate or ignore",
                )
            )
    for c in d.columns:
        if c.role == "covariate" and c.type == "categorical" and not c.levels:
            out.append(
                Problem(
                    f"column {quote(c.name)}",
                    "levels",
                    "a categorical column needs its public levels (never read off the data)",
                    f"write them baseline first, e.g. A{LEVEL_SEP}B{LEVEL_SEP}C",
                )
            )
        if c.type == "binary" and c.bounds not in (None, (0.0, 1.0)):
            out.append(
                Problem(
                    f"column {quote(c.name)}",
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
                    f"column {quote(t.name)}",
                    "levels",
                    f"the treatment must list at least two arms, got {len(t.levels)}",
                    "list the arms, e.g. drug|placebo",
                )
            )
        elif d.treated is not None and not any(same_label(d.treated, v) for v in t.levels):
            out.append(
                Problem(
                    "dictionary",
                    "treated",
                    f"the treated arm {quote(d.treated)} is not one of the levels "
                    f"{name_list(t.levels)} of {quote(t.name)}",
                    f"name one of them: treated = {quote(t.levels[0])} or {quote(t.levels[1])}",
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
                    f"to 1, got {name_list([f'{p:g}' for p in probs])}",
                    "write the design's probabilities, e.g. 0.25 each for 1:1:1:1",
                )
            )
    pcol = next((c.name for c in d.columns if c.role == "propensity"), None)
    if pcol is not None and d.propensity is not None:
        b = d.column(pcol).bounds
        if b is not None and not (b[0] == b[1] and abs(b[0] - d.propensity) < 1e-9):
            shown = f"{b[0]:g}" if b[0] == b[1] else f"[{b[0]:g}, {b[1]:g}]"
            out.append(
                Problem(
                    "dictionary",
                    "propensity",
                    f"the randomization probability {d.propensity:g} and the "
                    f"propensity column {quote(pcol)} ({shown}) disagree",
                    "keep the one that is right and remove the other",
                )
            )
    return out


def bounds_pair(value: Any, name: str, constant: bool = False) -> tuple[float, float]:
    """(lower, upper) as floats, or a DictionaryError with the fix; equal bounds only for a
    constant of the design."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise DictionaryError(
            [
                Problem(
                    f"column {quote(name)}",
                    "bounds",
                    f"bounds must be two numbers [lower, upper], got {quote(value)}",
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
                    f"column {quote(name)}",
                    "bounds",
                    f"bounds must be finite with lower < upper, got [{lo:g}, {hi:g}]",
                    fix,
                )
            ]
        )
    return lo, hi
