"""The "Your data" page's five steps, one module each, in the analyst's order.

A step needs what the step before handed on, shows its part of the page inside its box of the
:class:`dpcore_app.ui.upload.flow.Flow`, and hands on what the next step needs, or None (then
the page stops there and the verdict says what is missing):

1. :mod:`.data`: the trial CSV and its public dictionary (or a demo) → a ``Source``;
2. :mod:`.table`: the roles, the design and the public bounds and levels → a :class:`Ready`
   trial (two arms, or a rule over all K arms of a trial with more);
3. :mod:`.privacy`: ε, the private evaluation, γ and the preview → a :class:`Chosen` release:
   the public dictionary and the plan (:class:`dpcore.release.ReleasePlan`);
4. :mod:`.release`: the release button → the release, made by :func:`dpcore.release.release`
   and recorded in the ledger;
5. :mod:`.files`: what was released and its files.

A trial with more than two arms goes through the same steps: step 2 asks whether to compare
two arms (the two-arm path, on the dictionary of those two) or to release a rule over all K.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dpcore.data.dictionary import Dictionary
    from dpcore.data.trial import Trial
    from dpcore.release import ReleasePlan
    from dpcore_app.ui.common.demos import Source
    from dpcore_app.ui.upload.meta import Meta


@dataclass(frozen=True)
class Ready:
    """Step 2's hand-over: a trial read with public metadata only.

    ``kind`` is "two" (a rule between two arms) or "all" (a rule over all K arms, whose
    settings are the dictionary's). ``key`` is the file's ledger key. For two arms, ``mapping``
    holds the roles (with ``p_min`` and ``propensity_column``), ``table`` the public metadata
    (:class:`dpcore_app.ui.upload.meta.Meta`), ``larger`` the direction and ``propensity`` the
    design (a float, "column" or "logistic").
    """

    source: Source
    kind: str
    key: str
    trial: Trial
    mapping: dict = field(default_factory=dict)
    table: Meta | None = None
    from_data: tuple = ()
    larger: bool | None = None
    propensity: float | str | None = None
    p_min: float | None = None


@dataclass(frozen=True)
class Chosen:
    """Step 3's hand-over: the release as planned (public settings only).

    ``settings`` are the page's (ε, γ and where it came from, W, bounds, the evaluation...),
    ``plan`` the pipeline's plan of them, ``dictionary`` the public dictionary it is released
    from (the one the analyst downloads), ``rkey`` everything the release depends on (a
    release on screen is shown only while the settings still give its key), ``preview`` what
    the report shows of the preview, ``ready`` whether the release may go ahead (bounds in the
    data's units confirmed) and ``confirmed`` the columns whose bounds the analyst confirmed.
    """

    settings: dict
    plan: ReleasePlan
    dictionary: Dictionary
    rkey: tuple
    preview: dict | None = None
    ready: bool = True
    confirmed: tuple = ()
