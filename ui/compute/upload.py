"""Computations for the "Your data" page: reading a trial, choosing γ and W, releasing a rule.

Privacy rule 4: uploaded bytes live only in this session's memory. They are never written to
disk or logged, and every cache over them is session-scoped (``scope="session"``) and keyed by
a digest, so another session can neither read them nor learn from a cache hit that they
exist. Errors raised here carry the reader's plain-text message and no traceback is logged.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import DPOWL, agreement_test, ipw_value, read_trial
from dpcore.data.trial import TrialDataError, column_labels, guess_columns, preview_csv, read_table
from dpcore.montecarlo import Stream, stream
from dpcore.owl.owl import default_weight_bound, fit_logistic_propensity
from dpcore.owl.paper import PAPER_W, paper_gamma
from dpcore.owl.simulate import PROXY_VARIANTS
from dpcore.owl.tuning import tune_gamma

from .limits import SIMULATIONS

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo_data"
DEMOS = ("paper_trial", "hospital_trial")
PROXY_N0, PROXY_REPS = 1000, 20


class UploadTooLarge(ValueError):
    """A file over the server's upload limit."""


@dataclass(frozen=True, eq=False)
class Source:
    """A CSV held in memory: its name as given, bytes, digest and, for a demo, its dictionary."""

    name: str
    data: bytes = field(repr=False)
    digest: str
    dictionary: dict | None = None

    @property
    def demo(self):
        return self.dictionary is not None


def max_upload_mb():
    return int(st.get_option("server.maxUploadSize"))


def _digest(data):
    return hashlib.sha256(data).hexdigest()


@st.cache_data(show_spinner=False)
def _demo_bytes(name):
    """A demo file and its data dictionary (public, so a global cache is fine)."""
    data = (DEMO_DIR / f"{name}.csv").read_bytes()
    return data, _digest(data), json.loads((DEMO_DIR / f"{name}.json").read_text())


def demo_source(name):
    data, digest, dictionary = _demo_bytes(name)
    return Source(f"{name}.csv", data, digest, dictionary)


def upload_source(name, data):
    """An uploaded file as a Source; refuses a file over the upload limit with a message.

    A file identical to a demo file gets that demo's dictionary: the comparison is by digest
    against public files, so it reveals nothing about other uploads.
    """
    limit = max_upload_mb()
    if len(data) > limit * 1024 * 1024:
        raise UploadTooLarge(
            f"this file is {len(data) / 1024 / 1024:.0f} MB; the largest file this app accepts is "
            f"{limit} MB. Upload the columns you need only (or a random subset of rows)")
    digest = _digest(data)
    known = {_demo_bytes(d)[1]: _demo_bytes(d)[2] for d in DEMOS}
    return Source(str(name), data, digest, known.get(digest))


# --------------------------------------------------------------------------------------------
# Session-scoped reads (keyed by the digest; the bytes themselves are not hashed)


@st.cache_data(scope="session", max_entries=8, show_spinner=False)
def preview(digest, _data):
    return preview_csv(_data, n_rows=5)


@st.cache_data(scope="session", max_entries=16, show_spinner=False)
def arm_labels(digest, _data, column):
    return column_labels(_data, column)


@st.cache_data(scope="session", max_entries=8, show_spinner="Reading the trial…")
def load_trial(digest, _data, treatment, outcome, covariates, categorical, propensity, treated):
    """read_trial on the session's bytes; ``categorical`` is a tuple of (column, levels or None)."""
    cat = {c: (list(levels) if levels is not None else None) for c, levels in categorical}
    if all(levels is None for levels in cat.values()):
        cat = list(cat)
    return read_trial(_data, treatment=treatment, outcome=outcome, covariates=list(covariates),
                      propensity=propensity, treated=treated, categorical=cat or None)


def data_ranges(trial):
    """Each numeric covariate's observed (min, max): reading them voids the guarantee."""
    dummies = {f"{c}={lev}" for c, levels in trial.categories.items() for lev in levels[1:]}
    return {c: (float(trial.X[:, j].min()), float(trial.X[:, j].max()))
            for j, c in enumerate(trial.covariates) if c not in dummies}


def outcome_range(trial):
    return float(trial.B.min()), float(trial.B.max())


# --------------------------------------------------------------------------------------------
# γ, W and C from public settings


def weight_bound(outcome_bounds, propensity, p_min):
    """W = (hi - lo) / min π: π from the randomization ratio, else the public smallest propensity."""
    p = propensity if isinstance(propensity, float) else p_min
    return default_weight_bound(outcome_bounds, p)


def gamma_scale(W):
    """Factor from a γ tuned at the paper's W = 30 to a release with weight bound W.

    Scaling every weight, W and γ by one factor leaves the minimiser and the sensitivity
    2W/γ unchanged, so the release has the same distribution; γ therefore moves with W.
    """
    return W / PAPER_W


@st.cache_data(scope="session", max_entries=16, show_spinner=False)
def tuned_gamma(source, variant, n, eps, W):
    """(γ for this release, γ on the proxy's scale, a sentence saying where it came from)."""
    if source == "paper":
        g0 = paper_gamma(eps, n)
        where = f"the paper's table (cell nearest n = {n}, ε = {eps:g})"
    else:
        design = PROXY_VARIANTS[variant]
        proxy = design.sample(PROXY_N0, rng=stream(0, Stream.PROXY))
        with SIMULATIONS.slot():
            g0 = tune_gamma(proxy, int(n), float(eps), reps=PROXY_REPS, weight_bound=PAPER_W,
                            propensity=design.propensity, feature_bounds=design.feature_bounds,
                            seed=0).best_gamma
        where = (f"Algorithm 2 on a simulated public proxy ({variant}, n0 = {PROXY_N0}, "
                 f"{PROXY_REPS} fits per γ); no privacy spent")
    return g0 * gamma_scale(W), g0, where


@st.cache_data(scope="session", max_entries=4, show_spinner="Running Algorithm 2 on D0…")
def d0_gamma(digest, _proxy, n, eps, W, propensity, lower, upper, outcome_bounds, larger_is_better):
    """(γ, where) from Algorithm 2 on the user's public file D0, in the trial's own units.

    D0 is public, so it is tuned with the release's own W, bounds and direction and needs no
    rescaling. A smaller-is-better outcome is negated (with its bounds) so the benefit is the
    same hi − B that DPOWL uses.
    """
    if not isinstance(propensity, float):
        raise TrialDataError("Algorithm 2 on D0 needs a known randomization ratio (D0's arms are "
                             "weighted by it); choose a ratio, or take γ from the paper's table")
    lo, hi = outcome_bounds
    B, bounds = (_proxy.B, (lo, hi)) if larger_is_better else (-_proxy.B, (-hi, -lo))
    proxy = {"X": _proxy.X, "A": _proxy.A, "B": B}
    with SIMULATIONS.slot():
        g = tune_gamma(proxy, int(n), float(eps), reps=PROXY_REPS, weight_bound=float(W),
                       propensity=propensity, feature_bounds=(np.array(lower), np.array(upper)),
                       outcome=bounds, seed=0).best_gamma
    return g, (f"Algorithm 2 on your public file D0 ({_proxy.n} rows, {PROXY_REPS} fits per γ); "
               "no privacy spent on the trial")


# --------------------------------------------------------------------------------------------
# The release and the analyst-only view


@dataclass(frozen=True)
class Release:
    """What was released, and the public settings that define it: everything a download holds."""

    file_name: str
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

    def title(self):
        head = "Private treatment rule" if self.private else "NOT PRIVATE treatment rule"
        return f"{head} (ε = {self.epsilon:g})" + ("" if self.private else
                                                  ": bounds read from the data void the guarantee")

    def effects(self):
        """coef × (upper − lower): how far each covariate moves the score across its bounds."""
        return np.asarray(self.coef) * (np.asarray(self.upper) - np.asarray(self.lower))


@dataclass(frozen=True)
class AnalystView:
    """The private rule against the non-private one on the sensitive data: analyst only."""

    value_private: float
    value_nonprivate: float
    agreement: dict


def _owl_setup(trial, bounds, outcome_bounds, larger_is_better, gamma, W, propensity):
    """DPOWL's keyword arguments and the propensity for ``fit``, from the page's settings."""
    lower, upper = trial.feature_bounds(bounds)
    p = trial.propensity if propensity == "column" else propensity
    C = "worst-case" if propensity == "logistic" else 0.0
    kw = dict(gamma=gamma, weight_bound=W, C=C, feature_bounds=(lower, upper),
              outcome_bounds=outcome_bounds, larger_is_better=larger_is_better)
    return kw, p


def fit_release(trial, file_name, bounds, outcome_bounds, larger_is_better, eps, gamma,
                gamma_source, W, propensity, private, rng=None):
    """Fit DP-OWL with fresh randomness; returns (Release, recommendations, diagnostics).

    Not cached: every call is a new release (record it in the ledger first). ``propensity``
    is a float (known randomization), "column" (the trial's propensity column) or "logistic"
    (estimated, with C = "worst-case" so that pure ε-DP still holds). ``rng`` is for tests:
    the page leaves it None, so each release draws fresh noise from the operating system.
    The diagnostics (clipped share, solver iterations) are analyst-only.
    """
    kw, p = _owl_setup(trial, bounds, outcome_bounds, larger_is_better, gamma, W, propensity)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipped weights are reported in the analyst view
        rule = DPOWL(epsilon=eps, rng=np.random.default_rng(rng), **kw).fit(trial.X, trial.A, trial.B, p)
    lower, upper = kw["feature_bounds"]
    release = Release(
        file_name=file_name, names=tuple(trial.covariates), intercept=float(rule.intercept_),
        coef=tuple(float(c) for c in rule.coef_), lower=tuple(map(float, lower)),
        upper=tuple(map(float, upper)),
        categories={c: [_json_label(v) for v in levels] for c, levels in trial.categories.items()},
        treatment=trial.treatment, treated=_json_label(trial.arms[0]),
        control=_json_label(trial.arms[1]), outcome=trial.outcome,
        outcome_bounds=tuple(map(float, outcome_bounds)), larger_is_better=bool(larger_is_better),
        epsilon=float(eps), gamma=float(gamma), gamma_source=gamma_source, W=float(W), C=kw["C"],
        sensitivity=float(rule.sensitivity_), propensity=_propensity_text(propensity, trial),
        private=bool(private), n=int(trial.n),
        time=np.datetime_as_string(np.datetime64("now"), unit="s") + "Z",
    )
    return release, rule.predict(trial.X), dict(rule.diagnostics_)


def compare_nonprivate(trial, rec, bounds, outcome_bounds, larger_is_better, gamma, W, propensity,
                       **_):
    """Value (IPW) of the private and the non-private rule and their agreement: analyst only.

    One more fit on the sensitive data, run only when the analyst asks for it.
    """
    kw, p = _owl_setup(trial, bounds, outcome_bounds, larger_is_better, gamma, W, propensity)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exact = DPOWL(epsilon=math.inf, **kw).fit(trial.X, trial.A, trial.B, p).predict(trial.X)
    p_eval = fit_logistic_propensity(trial.X, trial.A) if propensity == "logistic" else p
    return AnalystView(value_private=float(ipw_value(rec, trial.A, trial.B, p_eval)),
                       value_nonprivate=float(ipw_value(exact, trial.A, trial.B, p_eval)),
                       agreement=agreement_test(rec, exact))


def _json_label(v):
    return v.item() if isinstance(v, np.generic) else v


def _propensity_text(propensity, trial):
    if propensity == "column":
        return f"per-row propensity column '{trial.propensity_column}'"
    if propensity == "logistic":
        return "estimated by logistic regression on the same data (C = worst-case, n W)"
    return f"known randomization probability P(treated) = {propensity:.4g}"


@st.cache_data(scope="session", max_entries=4, show_spinner=False)
def identifiers(digest, _data, id_columns, rows):
    """The identifier columns' values on the rows used (for the per-row download)."""
    table = read_table(_data)
    return {c: table[c].to_numpy()[np.asarray(rows) - 1] for c in id_columns}


def guesses(columns, rows):
    """guess_columns, plus categorical guesses: covariates whose previewed cells are all text."""
    guess = guess_columns(columns)
    text = []
    for j, c in enumerate(columns):
        cells = [r[j] for r in rows if r[j].strip()]
        if c in guess["covariates"] and cells and not any(_is_number(v) for v in cells):
            text.append(c)
    guess["categorical"] = text
    return guess


def _is_number(text):
    try:
        float(text.replace(",", "."))
        return True
    except ValueError:
        return False


def id_columns(columns, used):
    """Columns named like identifiers (id, patient_id, …) that play no role in the trial."""
    covariates = set(guess_columns(list(columns))["covariates"])
    return tuple(c for c in columns if c not in covariates and c not in used)


def preview_frame(preview):
    """The first rows as a table of text (shown to the analyst, never as markup)."""
    return pd.DataFrame(list(preview.rows), columns=list(preview.columns), dtype=str)


def read_summary(trial):
    """How the file was read and what was kept, in one sentence."""
    names = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
    k = int((trial.A > 0).sum())
    dropped = (f"; {trial.n_dropped} rows dropped for a missing value in a used column"
               if trial.n_dropped else "")
    return (f"Read {trial.n} patients{dropped}: '{trial.treated}' (treated) {k}, "
            f"'{trial.arms[1]}' {trial.n - k}; {names.get(trial.delimiter, trial.delimiter)}-"
            f"separated, {trial.encoding}, decimal mark '{trial.decimal}'; "
            f"{len(trial.covariates)} covariate columns.")
