"""What one release costs its dataset, whether a cap can take it, and how it is recorded.

The one home of three rules every surface (the library, ``dpcore fit``, the Your-data page, the
rerun script) applies to a release:

- a release made of disjoint parts of the rows (a rule fitted on one part, its evaluation on the
  other) costs the dataset its largest part's ε (parallel composition, McSherry 2009);
- a cap takes a release when the total stays within it, up to a relative slack for rounding
  (0.1 + 0.2 is 0.3); a release without a guarantee (ε = ∞) never fits under a cap;
- a release has no guarantee when a bound was read from the data, an ε is infinite (no noise)
  or its noise was drawn from an int seed (anyone with the seed can subtract it)
  (:func:`void_reasons`);
- a release is recorded as a release without a guarantee when there is a reason for one, as
  parallel parts when it has several, else as one release of its ε.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "CAP_SLACK",
    "parallel_cost",
    "record_release",
    "seeded_noise",
    "void_reasons",
    "within_cap",
]

#: The relative slack of every cap check: 0.1 + 0.2 under a cap of 0.3 is not refused.
CAP_SLACK = 1e-12


def parallel_cost(parts: Mapping[str, float]) -> float:
    """The ε a release made of disjoint parts of the dataset costs it: the largest part's.

    Examples
    --------
    >>> parallel_cost({"fit": 1.0, "evaluation": 0.5})
    1.0
    """
    if not parts:
        raise ValueError("a release has at least one part")
    return max(float(eps) for eps in parts.values())


def within_cap(spent: float, epsilon: float, cap: float | None) -> bool:
    """Whether a release of ``epsilon`` on a dataset that has ``spent`` fits under ``cap``.

    Examples
    --------
    >>> within_cap(0.1 + 0.2, 0.0, 0.3), within_cap(1.0, 0.5, 1.2), within_cap(0.0, math.inf, 9)
    (True, False, False)
    >>> within_cap(5.0, 1.0, None)
    True
    """
    if cap is None:
        return True
    if math.isinf(epsilon) or math.isinf(spent):
        return False
    return spent + epsilon <= cap * (1.0 + CAP_SLACK)


#: What a release's noise may be drawn from without a fixed seed: a generator already made.
GENERATORS = (np.random.Generator, np.random.BitGenerator, np.random.RandomState)


def seeded_noise(rng: Any) -> bool:
    """Whether ``rng`` is a seed: anything numpy makes a generator from (an int, True, a
    sequence of ints, a SeedSequence), not None or a generator already made. Anyone who knows
    the seed can subtract the noise, so a release drawn from it has no guarantee (every
    learner's ledger and rule file say so).

    Examples
    --------
    >>> (
    ...     seeded_noise(0),
    ...     seeded_noise([1, 2]),
    ...     seeded_noise(None),
    ...     seeded_noise(np.random.default_rng(0)),
    ... )
    (True, True, False, False)
    """
    return rng is not None and not isinstance(rng, GENERATORS)


def void_reasons(
    bounds_from_data: bool | Iterable[str] = False,
    epsilon: float | Iterable[float] = (),
    rng: Any = None,
) -> list[str]:
    """The reasons a release has no privacy guarantee, as the ledger records them (empty: it
    has one). The one home of the rule every learner's ledger entry applies.

    Parameters
    ----------
    bounds_from_data : bool or iterable of str
        The bounds read from the data (``"feature bounds"``, ``"outcome bounds"``); True
        stands for the feature bounds.
    epsilon : float or iterable of float
        The release's ε, or each of its parts' ε: one that is infinite adds no noise.
    rng : seed, Generator or None
        What the release's noise was drawn from (None when not from numpy's generator): a
        seed lets anyone who knows it subtract the noise (:func:`seeded_noise`), and the
        reason names it.

    Examples
    --------
    >>> void_reasons()
    []
    >>> for reason in void_reasons(True, math.inf, 3):
    ...     print(reason)
    feature bounds read from the data
    epsilon = inf (no noise)
    seeded noise (seed 3)
    >>> void_reasons(["outcome bounds"], [1.0, 0.5])
    ['outcome bounds read from the data']
    """
    if isinstance(bounds_from_data, (bool, np.bool_)):
        bounds_from_data = ["feature bounds"] if bounds_from_data else []
    epsilons = [epsilon] if isinstance(epsilon, (int, float, np.number)) else list(epsilon)
    reasons = [f"{what} read from the data" for what in dict.fromkeys(bounds_from_data)]
    if any(math.isinf(float(eps)) for eps in epsilons):
        reasons.append("epsilon = inf (no noise)")
    if seeded_noise(rng):
        if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
            seed = f"seed {int(rng)}"
        elif isinstance(rng, np.random.SeedSequence):
            seed = "a SeedSequence"
        else:
            seed = f"seed {rng!r}"
        reasons.append(f"seeded noise ({seed})")
    return reasons


def record_release(
    ledger: Any,
    mechanism: str,
    parts: Mapping[str, float],
    reasons: Sequence[str] = (),
    delta: float = 0.0,
) -> Any:
    """Record a release in ``ledger``: without a guarantee when there are ``reasons`` (the
    dataset's total becomes ∞), as parallel parts when there are several, else as one release.

    Returns
    -------
    LedgerEntry
    """
    if reasons:
        return ledger.record_no_guarantee(mechanism, "; ".join(reasons))
    if len(parts) > 1:
        return ledger.record_parallel(mechanism, dict(parts), delta=delta)
    return ledger.record(mechanism, parallel_cost(parts), delta)
