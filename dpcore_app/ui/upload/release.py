"""A release of the "Your data" page: the fit, what it publishes, and what it was computed from.

A :class:`Release` holds the noisy coefficients and the public settings, nothing else: its
number of patients is the public n (the file's row count), its levels are the public ones, and
``void`` names what (if anything) the analyst took from the data, which titles it NOT PRIVATE.
A :class:`Released` bundle ties the release to the settings key it was computed from and keeps
the values its downloads are built from, captured at release time.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from dpcore import DPOWL, ClippingWarning, NoiseWarning, agreement_test, ipw_value
from dpcore.owl.evaluation import evaluate_rule, public_split
from dpcore.owl.owl import fit_logistic_propensity

#: Why a release is NOT PRIVATE, by what the analyst took from the data.
VOID = {"bounds": "bounds or levels read from the data"}


@dataclass(frozen=True)
class Release:
    """What was released, and the public settings that define it: everything a download holds."""

    label: str
    names: tuple
    intercept: float
    coef: tuple
    lower: tuple
    upper: tuple
    categories: dict
    treatment: str
    treated: object
    control: object
    outcome: str
    outcome_bounds: tuple
    larger_is_better: bool
    epsilon: float
    gamma: float
    gamma_source: str
    W: float
    C: object
    sensitivity: float
    propensity: str
    private: bool
    n: int
    time: str
    void: str = VOID["bounds"]
    #: The ledger's record of this release (index on the file, the file's totals with it),
    #: copied from its receipt at release time; None before it is recorded.
    ledger_index: int | None = None
    epsilon_total: float | None = None
    delta_total: float | None = None
    #: Where the analyst's roles differ from the public dictionary, one sentence each (public
    #: choices, published with the release).
    overrides: tuple = ()

    def title(self):
        head = "Private treatment rule" if self.private else "NOT PRIVATE treatment rule"
        return f"{head} (ε = {self.epsilon:g})" + (
            "" if self.private else f": {self.void} void the guarantee"
        )

    def effects(self):
        """coef × (upper − lower): how far each covariate moves the score across its bounds."""
        return np.asarray(self.coef) * (np.asarray(self.upper) - np.asarray(self.lower))


@dataclass(frozen=True, eq=False)
class Released:
    """A release with what it came from: the settings key, the trial, the recommendations.

    ``key`` is the tuple of public settings and the file's digest the release was computed
    from; the page shows the release only while its current settings give the same key.
    ``files`` caches the downloads built from these captured values (plain dict, this
    session only); ``receipt`` is the ledger's record of the release, when it gives one.
    """

    release: Release
    rec: np.ndarray
    diagnostics: dict
    settings: dict
    trial: object
    key: tuple
    mapping: dict = field(default_factory=dict)
    receipt: object = None
    files: dict = field(default_factory=dict)
    evaluation: object = None
    preview: dict | None = None

    @property
    def columns(self):
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


def settings_key(digest, mapping, settings):
    """Everything a release depends on, as a small hashable tuple (no data)."""
    plain = {
        k: (tuple(sorted(v.items())) if isinstance(v, dict) else v) for k, v in settings.items()
    }
    m = tuple(
        (k, tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in sorted(mapping.items())
    )
    return (digest, m, tuple(sorted(plain.items())))


def _owl_setup(trial, bounds, outcome_bounds, larger_is_better, gamma, W, propensity):
    """DPOWL's keyword arguments and the propensity for ``fit``, from the page's settings."""
    lower, upper = trial.feature_bounds(bounds)
    p = trial.propensity if propensity == "column" else propensity
    C = "worst-case" if propensity == "logistic" else 0.0
    kw = dict(
        gamma=gamma,
        weight_bound=W,
        C=C,
        feature_bounds=(lower, upper),
        outcome_bounds=outcome_bounds,
        larger_is_better=larger_is_better,
    )
    return kw, p


def fit_release(
    trial,
    label,
    bounds,
    outcome_bounds,
    larger_is_better,
    eps,
    gamma,
    gamma_source,
    W,
    propensity,
    private,
    rng=None,
    void=VOID["bounds"],
):
    """Fit DP-OWL with fresh randomness; returns (Release, recommendations, diagnostics).

    Not cached: every call is a new release (record it in the ledger first). ``label`` is a
    title the analyst typed for the report ("" for none: the file's name is never
    published). ``propensity`` is a float (known randomization), "column" (the trial's
    propensity column) or "logistic" (estimated, with C = "worst-case" so that pure ε-DP
    still holds). An incomplete row gets weight 0 (``Trial.outcomes_for_fit``); n is the
    trial's public n. ``rng`` is for tests: the page leaves it None, so each release draws
    fresh noise from the operating system. The diagnostics are analyst-only.
    """
    kw, p = _owl_setup(trial, bounds, outcome_bounds, larger_is_better, gamma, W, propensity)
    B = trial.outcomes_for_fit(outcome_bounds, larger_is_better)
    with warnings.catch_warnings():
        # Never in the server's log: how much of the uploaded data was clipped (the analyst view
        # reports it), and the noise warning the page already shows. A PrivacyWarning is not
        # silenced: every bound here is public, so one would mean a bug.
        warnings.simplefilter("ignore", ClippingWarning)
        warnings.simplefilter("ignore", NoiseWarning)
        rule = DPOWL(epsilon=eps, rng=np.random.default_rng(rng), **kw).fit(trial.X, trial.A, B, p)
    lower, upper = kw["feature_bounds"]
    release = Release(
        label=str(label),
        names=tuple(trial.covariates),
        intercept=float(rule.intercept_),
        coef=tuple(float(c) for c in rule.coef_),
        lower=tuple(map(float, lower)),
        upper=tuple(map(float, upper)),
        categories={c: [json_label(v) for v in levels] for c, levels in trial.categories.items()},
        treatment=trial.treatment,
        treated=json_label(trial.arms[0]),
        control=json_label(trial.arms[1]),
        outcome=trial.outcome,
        outcome_bounds=tuple(map(float, outcome_bounds)),
        larger_is_better=bool(larger_is_better),
        epsilon=float(eps),
        gamma=float(gamma),
        gamma_source=gamma_source,
        W=float(W),
        C=kw["C"],
        sensitivity=float(rule.sensitivity_),
        propensity=_propensity_text(propensity, trial),
        private=bool(private),
        n=int(trial.n),
        void=void,
        time=np.datetime_as_string(np.datetime64("now"), unit="s") + "Z",
    )
    return release, rule.predict(trial.X), dict(rule.diagnostics_)


def compare_nonprivate(
    trial, rec, bounds, outcome_bounds, larger_is_better, gamma, W, propensity, **_
):
    """Value (IPW) of the private and the non-private rule and their agreement: analyst only.

    One more fit on the sensitive data, run only when the analyst asks for it; the values
    are estimated on the complete rows.
    """
    kw, p = _owl_setup(trial, bounds, outcome_bounds, larger_is_better, gamma, W, propensity)
    B = trial.outcomes_for_fit(outcome_bounds, larger_is_better)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ClippingWarning)  # analyst-only, never in the log
        warnings.simplefilter("ignore", NoiseWarning)
        exact = DPOWL(epsilon=math.inf, **kw).fit(trial.X, trial.A, B, p).predict(trial.X)
    p_eval = fit_logistic_propensity(trial.X, trial.A) if propensity == "logistic" else p
    ok = np.ones(trial.n, bool) if trial.complete is None else np.asarray(trial.complete)
    p_ok = p_eval[ok] if np.ndim(p_eval) else p_eval
    return AnalystView(
        value_private=float(ipw_value(rec[ok], trial.A[ok], trial.B[ok], p_ok)),
        value_nonprivate=float(ipw_value(exact[ok], trial.A[ok], trial.B[ok], p_ok)),
        agreement=agreement_test(rec[ok], exact[ok]),
    )


def fit_evaluated_release(
    trial,
    label,
    bounds,
    outcome_bounds,
    larger_is_better,
    eps,
    gamma,
    gamma_source,
    W,
    propensity,
    private,
    eps_eval,
    fit_share,
    p_min,
    split_seed=0,
    rng=None,
    sampler="opendp",
    void=VOID["bounds"],
):
    """A release with its private evaluation: (Release, recommendations, diagnostics, evaluation).

    The public seeded split (:func:`dpcore.owl.evaluation.public_split`, over the public n)
    gives the fit its part, where :func:`fit_release` runs as usual (its n is the part's);
    on the other part the rule's value, treat-all's and treat-none's are released at
    ``eps_eval`` with OpenDP's sampler (``sampler``): incomplete rows count 0 in the cells and
    a noisy count of the complete rows (within ``eps_eval``) turns the values into those of the
    patients with complete rows (:mod:`dpcore.owl.evaluation`). The two parts are disjoint: record the release as parallel parts of the dataset. The
    recommendations are the released rule's on every row of the file.
    """
    if propensity == "logistic":
        raise ValueError(
            "the private evaluation needs a known randomization or a propensity column"
        )
    fit_rows, eval_rows = public_split(trial.n, fit_share, split_seed)
    rng = np.random.default_rng(rng)
    release, _, diagnostics = fit_release(
        _part(trial, fit_rows),
        label,
        bounds,
        outcome_bounds,
        larger_is_better,
        eps,
        gamma,
        gamma_source,
        W,
        propensity,
        private,
        rng=rng,
        void=void,
    )
    x = np.clip(trial.X, release.lower, release.upper)
    rec = np.where(release.intercept + x @ np.asarray(release.coef) > 0, 1.0, -1.0)
    p = trial.propensity if propensity == "column" else propensity
    ev = evaluate_rule(
        rec[eval_rows],
        trial.A[eval_rows],
        trial.B[eval_rows],
        p if np.ndim(p) == 0 else np.asarray(p)[eval_rows],
        outcome_bounds=outcome_bounds,
        larger_is_better=larger_is_better,
        min_propensity=None if np.ndim(p) == 0 else p_min,
        epsilon=eps_eval,
        include=None if trial.complete is None else np.asarray(trial.complete)[eval_rows],
        rng=rng,
        sampler=sampler,
        arms=(release.treated, release.control),
    )
    return release, rec, diagnostics, ev


def _part(trial, rows):
    """The trial restricted to some rows (a public split's part)."""
    cut = {
        k: (None if getattr(trial, k) is None else np.asarray(getattr(trial, k))[rows])
        for k in ("X", "A", "B", "propensity", "rows", "complete", "covariates_complete")
    }
    return replace(trial, **cut)


def with_receipt(release, receipt):
    """The release with the ledger's receipt (index, the file's cumulative ε and δ) in it."""
    return replace(
        release,
        ledger_index=int(receipt.index),
        epsilon_total=float(receipt.epsilon_total),
        delta_total=float(receipt.delta_total),
    )


def noise_warning(n, W, gamma, propensity):
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


def json_label(v):
    return v.item() if isinstance(v, np.generic) else v


def _propensity_text(propensity, trial):
    if propensity == "column":
        return f"per-row propensity column '{trial.propensity_column}'"
    if propensity == "logistic":
        return "estimated by logistic regression on the same data (C = worst-case, n W)"
    return f"known randomization probability P(treated) = {propensity:.4g}"
