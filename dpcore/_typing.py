"""Type aliases shared by dpcore's annotations."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "FloatOrArray", "Seed", "Shape"]

#: What ``np.random.default_rng`` accepts: None, an int seed, a SeedSequence or a Generator.
Seed = int | np.random.SeedSequence | np.random.Generator | None

#: A scalar in, a float out; an array in, an array out (vectorized formulas).
FloatOrArray = float | np.ndarray

#: A numpy shape: an int or a tuple of ints.
Shape = int | tuple[int, ...]
