"""The first answer of a private evaluation: which arm is better on average.

Before the rule's verdict, an evaluation says whether one arm is better for everyone on
average. Over two arms it is the average effect, treat-all's value minus treat-none's (treated
minus control, in the outcome's units), with an interval that holds at the evaluation's level:
each of the two values is taken at 1 - (1 - level)/2, so both hold together with probability
at least ``level`` (a union bound). Over K arms it is the single arm whose value's interval lies
beyond every other arm's, each of the K values taken at 1 - (1 - level)/K. Both are
post-processing of the released cells: they spend no ε.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .evaluation_common import Estimate

__all__ = [
    "average_effect",
    "best_arm",
    "best_arm_sentence",
    "better_arm",
    "effect_sentence",
    "joint_values",
]


def average_effect(release: Callable[[float], dict], level: float) -> Estimate:
    """The average effect, treat-all's value minus treat-none's (treated minus control, in the
    outcome's units), with an interval at ``level``: post-processing of the released cells.

    ``release(level)`` gives the estimates at a level (the evaluation's own release function
    on its noisy numbers); each of the two values is taken at 1 - (1 - level)/2, so both hold
    together with probability at least ``level`` (a union bound) and the difference's interval
    is [lower_all - upper_none, upper_all - lower_none]. Nothing more is released: it spends no ε.
    """
    half = release(1.0 - (1.0 - level) / 2.0)
    (a, a_lo, a_hi), (b, b_lo, b_hi) = half["treat_all"], half["treat_none"]
    return Estimate(float(a - b), float(a_lo - b_hi), float(a_hi - b_lo))


def better_arm(effect: Estimate | None, larger_is_better: bool, treated: Any, control: Any) -> Any:
    """The arm better on average when the average effect's interval excludes 0, else None."""
    if effect is None or effect.lower <= 0.0 <= effect.upper:
        return None
    treated_better = (effect.lower > 0.0) == bool(larger_is_better)
    return treated if treated_better else control


def effect_sentence(
    effect: Estimate | None, level: float, larger_is_better: bool, treated: Any, control: Any
) -> str:
    """Which arm is better on average, with its interval, in one sentence ('' without)."""
    if effect is None:
        return ""
    pct = f"{100 * level:g}%"
    treated_name = f"'{treated}'" if treated is not None else "the treated arm"
    control_name = f"'{control}'" if control is not None else "the control arm"
    diff = (
        f"{treated_name} minus {control_name}: {effect.value:+.3g} "
        f"[{effect.lower:.3g}, {effect.upper:.3g}]"
    )
    better = better_arm(effect, larger_is_better, treated, control)
    if better is None:
        return (
            f"On average the two arms cannot be told apart ({pct} interval of the "
            f"difference {diff}, in the outcome's units)."
        )
    size = min(abs(effect.lower), abs(effect.upper))
    return (
        f"On average '{better}' is better, by at least {size:.3g} in the outcome's units "
        f"({pct} interval of the difference {diff})."
    )


def joint_values(
    release: Callable[[float], tuple], level: float, arms: Sequence[Any]
) -> dict[Any, tuple[float, float]]:
    """Each arm's value (everyone given it) with an interval that holds for all K arms together
    at ``level``: ``release(level)`` gives (point, lower, upper) with the rule's value first,
    then each arm's; each is taken at 1 - (1 - level)/K (a union bound)."""
    k = len(arms)
    _, lower, upper = release(1.0 - (1.0 - level) / k)
    return {arms[j]: (float(lower[1 + j]), float(upper[1 + j])) for j in range(k)}


def best_arm(joint: dict[Any, tuple[float, float]], larger_is_better: bool) -> Any:
    """The arm whose joint interval lies beyond every other arm's (in the better direction),
    else None: the single arm shown best on average."""
    if not joint:
        return None
    sign = 1.0 if larger_is_better else -1.0
    for arm, (lo, hi) in joint.items():
        worst = min(sign * lo, sign * hi)
        others = [max(sign * a, sign * b) for o, (a, b) in joint.items() if o != arm]
        if all(worst > other for other in others):
            return arm
    return None


def best_arm_sentence(
    joint: dict[Any, tuple[float, float]], level: float, larger_is_better: bool
) -> str:
    """Which single arm is best on average, or that none can be told best ('' without)."""
    if not joint:
        return ""
    pct = f"{100 * level:g}%"
    listed = ", ".join(f"'{a}' [{lo:.3g}, {hi:.3g}]" for a, (lo, hi) in joint.items())
    best = best_arm(joint, larger_is_better)
    if best is None:
        return (
            f"On average no single arm can be told best (each arm's value, {pct} "
            f"intervals for all arms together: {listed})."
        )
    return (
        f"On average '{best}' is the best single arm: its interval lies beyond every other "
        f"arm's ({pct} intervals for all arms together: {listed})."
    )
