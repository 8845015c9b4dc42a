"""The roles a public data dictionary gives the columns of the "Your data" page's file: which
is the treatment, the outcome and the treated arm, which are covariates (and categorical), and
which it excludes; where the analyst's mapping departs from it; and the two arms it names for
a treatment column. The starting point of the page's mapping, never the data's values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Roles:
    """The roles a public dictionary gives the file's columns (the mapping's starting point).

    ``excluded`` are the columns it gives a role other than covariate (``ignore``,
    ``identifier``, the outcome, the propensity): never offered as covariates.
    """

    treatment: str | None
    outcome: str | None
    treated: object
    covariates: tuple
    categorical: tuple
    excluded: frozenset

    def overrides(
        self,
        treatment: str | None,
        outcome: str | None,
        treated: object,
        covariates: Sequence[str],
    ) -> tuple[str, ...]:
        """Where the analyst's mapping differs from the dictionary, one sentence each."""
        out: list[str] = []
        if treatment != self.treatment:
            out.append(f"treatment column {treatment!r} (the dictionary names {self.treatment!r})")
        if outcome != self.outcome:
            out.append(f"outcome column {outcome!r} (the dictionary names {self.outcome!r})")
        if treatment == self.treatment and self.treated is not None and treated != self.treated:
            out.append(f"treated arm {treated!r} (the dictionary names {self.treated!r})")
        added = [c for c in covariates if c not in self.covariates]
        dropped = [c for c in self.covariates if c not in covariates]
        if added:
            out.append("covariates the dictionary does not name: " + ", ".join(map(repr, added)))
        if dropped:
            out.append("dictionary covariates left out: " + ", ".join(map(repr, dropped)))
        return tuple(out)


def dictionary_roles(dictionary: Mapping[str, Any] | None, columns: Iterable[str]) -> Roles | None:
    """:class:`Roles` from a public dictionary (a dict) for a file with these columns, or None
    without a dictionary. Only the file's columns are named."""
    if not dictionary:
        return None
    from dpcore.data import read_dictionary

    d = read_dictionary(dictionary, strict=False)
    cols = set(columns)
    entries = [c for c in d.columns if c.name in cols]
    excluded = {c.name for c in entries if c.role not in (None, "covariate")}
    excluded |= {c for c in (d.outcome, d.propensity_column) if c in cols}
    return Roles(
        treatment=d.treatment if d.treatment in cols else None,
        outcome=d.outcome if d.outcome in cols else None,
        treated=d.treated,
        covariates=tuple(c for c in d.covariates if c in cols and c not in excluded),
        categorical=tuple(c.name for c in entries if c.type == "categorical"),
        excluded=frozenset(excluded),
    )


def dictionary_arms(
    dictionary: Mapping[str, Any] | None, treatment: str | None
) -> tuple[tuple[Any, ...], Any] | None:
    """``(arms, treated)`` from a public dictionary (a dict) for this treatment column, or None.

    The arms are the dictionary's own two labels, treated first when it names the treated
    one (``treated`` is None otherwise); never the data's values.
    """
    if not dictionary or treatment is None:
        return None
    from dpcore.data import read_dictionary

    d = read_dictionary(dictionary, strict=False)
    if d.treatment != treatment:
        return None
    levels = d.column(treatment).levels
    if not levels or len(levels) != 2:
        return None
    return tuple(levels), d.treated
