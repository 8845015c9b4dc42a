"""Type aliases shared by dpcore's annotations."""

from __future__ import annotations

from typing import Union

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "FloatOrArray", "Seed", "Shape"]

#: What ``np.random.default_rng`` accepts: None, an int seed, a SeedSequence or a Generator.
Seed = Union[None, int, np.random.SeedSequence, np.random.Generator]

#: A scalar in, a float out; an array in, an array out (vectorized formulas).
FloatOrArray = Union[float, np.ndarray]

#: A numpy shape: an int or a tuple of ints.
Shape = Union[int, tuple[int, ...]]
