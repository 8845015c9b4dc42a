"""A release of the "Your data" page: the pipeline's release, and what the page shows of it.

The release itself is made by :func:`dpcore.release.release`, as ``dpcore fit``, the library and
the rerun script make it: the page builds the public dictionary and the plan from its settings
(:func:`plan_from_settings`, :func:`dpcore_app.ui.upload.analyst_compute.dictionary_from_settings`)
and calls it. A :class:`Release` is the page's view of it (the rule, its public settings, the
ledger's record, the title the analyst typed); its rule file is the pipeline's, word for word.
A :class:`Released` bundle ties the release to the settings key it was computed from and keeps
the values its downloads are built from, captured at release time.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpcore import ClippingWarning, NoiseWarning, agreement_test, ipw_value
from dpcore.owl.owl import fit_logistic_propensity
from dpcore.release import ReleasePlan, release

if TYPE_CHECKING:
    from dpcore.data.dictionary import Dictionary
    from dpcore.data.trial import Trial
    from dpcore.owl.evaluation_result import ArmsEvaluation, PrivateEvaluation
    from dpcore.release import Release as PipelineRelease
    from dpcore_app.ui.common.ledger import Receipt

#: Why a release is NOT PRIVATE, by what the analyst took from the data.
VOID = {"bounds": "bounds or levels read from the data"}


@dataclass(frozen=True)
class Release:
    """What the page shows of one release: the pipeline's release (``made``), the title the
    analyst typed for the report, the roles that differ from the public dictionary, and when
    it was made. Everything else is read from the rule file's public settings."""

    made: PipelineRelease
    label: str = ""
    #: Where the analyst's roles differ from the public dictionary, one sentence each (public
    #: choices, published with the release).
    overrides: tuple = ()
    time: str = ""

    @property
    def settings(self) -> dict[str, Any]:
        return self.made.rule.settings

    def __getattr__(self, name: str) -> Any:
        # The rule's own fields and its public settings, by the names the page uses.
        if name in _RULE:
            return getattr(self.made.rule, _RULE[name])
        if name in _SETTINGS:
            return self.made.rule.settings[name]
        raise AttributeError(name)

    @property
    def outcome_bounds(self) -> tuple[float, ...]:
        return tuple(self.settings["outcome_bounds"])

    @property
    def void(self) -> str:
        """Why the release has no guarantee, in words ('' when it has one)."""
        return "; ".join(self.settings["not_private_because"])

    @property
    def propensity(self) -> str:
        """The design in words."""
        p = self.settings["propensity"]
        if p == "per row":
            return f"per-row propensity column '{self.made.trial.propensity_column}'"
        if isinstance(p, str):
            return "estimated by logistic regression on the same data (C = worst-case, n W)"
        return f"known randomization probability P(treated) = {p:.4g}"

    @property
    def ledger_index(self) -> int | None:
        return None if self.made.entry is None else int(self.made.entry.index)

    @property
    def epsilon_total(self) -> float | None:
        return None if self.made.totals is None else float(self.made.totals[0])

    @property
    def delta_total(self) -> float | None:
        return None if self.made.totals is None else float(self.made.totals[1])

    def title(self) -> str:
        return self.settings["title"]

    def to_dict(self) -> dict[str, Any]:
        """The rule file: the pipeline's, with the roles that differ from the dictionary."""
        out = self.made.to_dict()
        if self.overrides:
            out["roles_differ_from_dictionary"] = list(self.overrides)
        return out

    def effects(self) -> np.ndarray:
        """coef × (upper − lower): how far each covariate moves the score across its bounds."""
        return np.asarray(self.coef) * (np.asarray(self.upper) - np.asarray(self.lower))


#: The page's names of the rule's fields.
_RULE = {
    "names": "covariates",
    "intercept": "intercept",
    "coef": "coef",
    "lower": "lower",
    "upper": "upper",
    "treated": "treated",
    "control": "control",
    "categories": "categories",
}
_SETTINGS = (
    "treatment",
    "outcome",
    "larger_is_better",
    "epsilon",
    "delta",
    "gamma",
    "gamma_source",
    "W",
    "C",
    "sensitivity",
    "private",
    "n",
)


@dataclass(frozen=True, eq=False)
class Released:
    """A release with what it came from: the settings key, the trial, the recommendations.

    ``key`` is the tuple of public settings and the file's digest the release was computed
    from; the page shows the release only while its current settings give the same key.
    ``files`` caches the downloads built from these captured values (plain dict, this
    session only); ``receipt`` is the ledger's record of the release (a release is kept only
    once recorded). ``rec`` is None for a rule over all K arms, ``evaluation`` None when the
    rule was not evaluated.
    """

    release: Release
    rec: np.ndarray | None
    diagnostics: dict
    settings: dict
    trial: Trial
    key: tuple
    receipt: Receipt
    mapping: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    evaluation: PrivateEvaluation | ArmsEvaluation | None = None
    preview: dict | None = None

    @property
    def over_all_arms(self) -> bool:
        """A rule over all K arms of a trial (no per-row recommendations on screen)."""
        return self.rec is None

    @property
    def columns(self) -> tuple[str, ...]:
        """The file's columns the release used (treatment, outcome, covariates, propensity)."""
        t = self.trial
        return tuple(
            c
            for c in (
                t.treatment,
                t.outcome,
                t.propensity_column,
                *self.mapping.get("covariates", ()),
            )
            if c
        )


@dataclass(frozen=True)
class AnalystView:
    """The private rule against the non-private one on the sensitive data: analyst only."""

    value_private: float
    value_nonprivate: float
    agreement: dict


def settings_key(
    digest: str, mapping: Mapping[str, Any], settings: Mapping[str, Any]
) -> tuple[Any, ...]:
    """Everything a release depends on, as a small hashable tuple (no data)."""
    plain = {
        k: (tuple(sorted(v.items())) if isinstance(v, dict) else v) for k, v in settings.items()
    }
    m = tuple(
        (k, tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in sorted(mapping.items())
    )
    return (digest, m, tuple(sorted(plain.items())))


def plan_from_settings(settings: Mapping[str, Any], p_min: float | None = None) -> ReleasePlan:
    """The release plan of the page's settings (ε, the evaluation, γ and where it came from,
    W, the design); ``p_min`` is the public smallest propensity of a per-row design."""
    evaluation = settings.get("evaluation")
    propensity = settings["propensity"]
    reasons = () if settings["private"] else (VOID["bounds"],)
    if settings.get("learner") == "plug-in":  # no γ, W or C
        return ReleasePlan(
            epsilon=float(settings["eps"]),
            learner="plug-in",
            epsilon_eval=float(evaluation[0]) if evaluation else None,
            fit_share=float(evaluation[1]) if evaluation else 0.8,
            propensity=propensity,
            min_propensity=float(p_min) if propensity == "column" and p_min is not None else None,
            not_private=reasons,
        )
    return ReleasePlan(
        epsilon=float(settings["eps"]),
        epsilon_eval=float(evaluation[0]) if evaluation else None,
        fit_share=float(evaluation[1]) if evaluation else 0.8,
        # γ from the paper's table is the pipeline's default, at the fit's size (the same
        # number the page shows); any other γ is given, with where it came from.
        gamma=None if settings.get("gamma_paper") else float(settings["gamma"]),
        gamma_source=None if settings.get("gamma_paper") else settings["gamma_source"],
        weight_bound=float(settings["W"]),
        C="worst-case" if propensity == "logistic" else 0.0,
        propensity=propensity,
        min_propensity=float(p_min) if propensity == "column" and p_min is not None else None,
        not_private=reasons,
    )


def make_release(
    data: bytes, dictionary: Dictionary, plan: ReleasePlan
) -> tuple[PipelineRelease, np.ndarray]:
    """The pipeline's release of the page's trial (not yet recorded: record it before showing
    anything), and the released rule's recommendation (+1 treated, -1 control) for every row
    of the file. Fresh noise every call: never cached."""
    with warnings.catch_warnings():
        # Never in the server's log: how much of the uploaded data was clipped (the analyst
        # view reports it), and the noise warning the page already shows. A PrivacyWarning is
        # not silenced: every bound here is public, so one would mean a bug.
        warnings.simplefilter("ignore", ClippingWarning)
        warnings.simplefilter("ignore", NoiseWarning)
        made = release(data, dictionary, plan)
    rule, X = made.rule, made.trial.X
    score = rule.intercept + np.clip(X, rule.lower, rule.upper) @ np.asarray(rule.coef)
    return made, np.where(score > 0, 1.0, -1.0)


def compare_nonprivate(made: PipelineRelease, rec: np.ndarray) -> AnalystView:
    """Value (IPW) of the private and the non-private rule and their agreement: analyst only.

    One more fit on the sensitive data (the release's public settings at ε = ∞, on every
    row), run only when the analyst asks for it; the values are estimated on the complete rows.
    """
    trial, propensity = made.trial, made.plan.propensity
    p = trial.propensity if propensity == "column" else propensity
    return _compared(trial, rec, made.nonprivate_recommendations(), p, propensity)


def _compared(trial, rec, exact, p, propensity):
    p_eval = fit_logistic_propensity(trial.X, trial.A) if propensity == "logistic" else p
    ok = np.ones(trial.n, bool) if trial.complete is None else np.asarray(trial.complete)
    p_ok = p_eval[ok] if np.ndim(p_eval) else p_eval
    return AnalystView(
        value_private=float(ipw_value(rec[ok], trial.A[ok], trial.B[ok], p_ok)),
        value_nonprivate=float(ipw_value(exact[ok], trial.A[ok], trial.B[ok], p_ok)),
        agreement=agreement_test(rec[ok], exact[ok]),
    )


def noise_warning(n: int, W: float, gamma: float, propensity: float | str) -> str | None:
    """A sentence before the release when an estimated propensity makes the rule mostly noise.

    With C = n W (the worst case, needed for pure ε-DP with an estimated propensity) the noise
    scale (C + 2W)/γ is (n + 2)/2 times the known-ratio one: for any n a rule needs to be
    released, the coefficients are then essentially noise. Public values only (n, W, γ).
    """
    if propensity != "logistic":
        return None
    delta, known = (n + 2) * W / gamma, 2 * W / gamma
    return (
        f"With an estimated propensity the noise scale is Δ = (nW + 2W)/γ = {delta:.3g}, "
        f"{(n + 2) / 2:.3g} times the Δ = 2W/γ = {known:.3g} of a known randomization "
        "ratio: the released rule will be essentially noise. Choose the trial's "
        "randomization ratio if it is known."
    )
