"""One release of a private treatment rule, assembled in one place.

:class:`ReleasePlan` holds a release's public settings (ε and its parts, γ, W, C, the
evaluation, the seed); :func:`release` reads the trial with its public dictionary, splits it,
fits, evaluates and, given a ledger, records the release before returning it. ``dpcore fit``
and the library call it, so a setting, a default or a check changed here changes every surface
that calls it.
"""

from .pipeline import ReleaseError, release
from .plan import ReleasePlan
from .result import Release

__all__ = ["Release", "ReleaseError", "ReleasePlan", "release"]
