"""Computations for the "Your data" page: reading a trial, choosing γ and W, releasing a rule.

Privacy rule 4: uploaded bytes live only in this session's memory. They are never written to
disk or logged, and every cache over them is session-scoped (``scope="session"``) and keyed by
a digest, so another session can neither read them nor learn from a cache hit that they
exist. Errors raised here carry the reader's plain-text message and no traceback is logged.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import read_trial
from dpcore.data.columns import clean_cells, is_numeric
from dpcore.data.csv_io import preview_csv, read_table
from dpcore.data.errors import TrialDataError
from dpcore.data.labels import column_labels
from dpcore.data.roles import guess_columns, is_identifier
from dpcore.montecarlo import Stream, stream
from dpcore.owl.owl import default_weight_bound
from dpcore.owl.paper import PAPER_W, default_gamma, paper_gamma
from dpcore.owl.simulate import PROXY_VARIANTS
from dpcore.owl.tuning import tune_gamma
from dpcore.privacy.identity import row_keys
from dpcore_app.ui.common.demos import DEMOS, Source, demo_source, file_digest
from dpcore_app.ui.common.limits import SIMULATIONS
from dpcore_app.ui.upload.analyst_compute import dictionary_from_settings, fit_size  # noqa: F401
from dpcore_app.ui.upload.release import (  # noqa: F401 - the page's compute API
    AnalystView,
    Release,
    Released,
    compare_nonprivate,
    make_release,
    noise_warning,
    plan_from_settings,
    settings_key,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from dpcore.data.csv_io import CsvPreview
    from dpcore.data.trial import Trial

PROXY_N0, PROXY_REPS = 1000, 20
#: The workable size: read, fitted and released in about 10 s on one core at 10^6 rows
#: (benchmarks/upload_latency.py); larger files are refused with a message.
MAX_ROWS, MAX_COLUMNS = 1_000_000, 5_000
#: Most distinct values read off a column for the NOT PRIVATE "levels from the data" shortcut.
MAX_LEVELS = 50


class UploadTooLarge(ValueError):
    """A file over the server's upload limit."""


def max_upload_mb() -> int:
    """The server's upload limit in MB (``server.maxUploadSize``)."""
    return int(st.get_option("server.maxUploadSize"))


def upload_source(name: str, data: bytes) -> Source:
    """An uploaded file as a Source; refuses a file over the upload limit with a message.

    A file identical to a demo file is that demo (public practice data) and gets its dictionary: the comparison is by digest
    against public files, so it reveals nothing about other uploads.
    """
    limit = max_upload_mb()
    if len(data) > limit * 1024 * 1024:
        raise UploadTooLarge(
            f"this file is {len(data) / 1024 / 1024:.0f} MB; the largest file this app accepts is "
            f"{limit} MB. Upload the columns you need only (or a random subset of rows)"
        )
    lines = data.count(b"\n") - 1
    if lines > MAX_ROWS:
        raise UploadTooLarge(
            f"this file has about {lines:,} rows; this page works with at most {MAX_ROWS:,} "
            "(about 10 s to read and fit). Upload a random subset of rows"
        )
    digest = file_digest(data)
    known = {demo.digest: demo.dictionary for demo in map(demo_source, DEMOS)}
    return Source(str(name), data, digest, known.get(digest), shipped=digest in known)


# --------------------------------------------------------------------------------------------
# Session-scoped reads (keyed by the digest; the bytes themselves are not hashed)


@st.cache_data(scope="session", max_entries=8, show_spinner=False)
def preview(digest: str, _data: bytes) -> CsvPreview:
    """The file's columns and first rows as text; refuses a file over :data:`MAX_COLUMNS`."""
    out = preview_csv(_data, n_rows=5)
    if len(out.columns) > MAX_COLUMNS:
        raise UploadTooLarge(
            f"this file has {len(out.columns):,} columns; this page works with "
            f"at most {MAX_COLUMNS:,}. Upload the columns you need only"
        )
    return out


@st.cache_data(scope="session", max_entries=16, show_spinner=False)
def arm_labels(digest: str, _data: bytes, column: str) -> tuple[Any, ...]:
    """The distinct labels of the treatment column (analyst only: read off the data)."""
    return column_labels(_data, column)


@st.cache_data(scope="session", max_entries=8, show_spinner="Reading the trial…")
def load_trial(
    digest: str,
    _data: bytes,
    treatment: str,
    outcome: str,
    covariates: Sequence[str],
    categorical: Iterable[tuple[str, Sequence[str]]],
    propensity: str | None,
    treated: object,
    public_n: bool = True,
    arms: Sequence[object] | None = None,
    binary: Sequence[str] = (),
    outcome_levels: Sequence[str] | None = None,
    fill: Iterable[tuple[str, object]] = (),
) -> Trial:
    """read_trial on the session's bytes; ``categorical`` is a tuple of (column, levels),
    ``binary`` the 0/1 covariates whose yes/no, y/n, true/false cells read as 1/0,
    ``outcome_levels`` a binary outcome's two public labels (the first reads 0), ``fill``
    the dictionary's public fill-in values as (column, value) pairs.

    ``public_n``: every row is kept (n is the file's row count; an incomplete row gets weight
    0) and a value outside the public levels reads as the baseline, so n, the covariate names
    and the release's dimension never depend on the data (privacy rule 8). A public D0 is
    read with ``public_n=False`` (its incomplete rows dropped). ``arms``: the dictionary's two
    public labels (a cell matching neither is missing), else read off the file.
    """
    return read_trial(
        _data,
        treatment=treatment,
        outcome=outcome,
        covariates=list(covariates),
        propensity=propensity,
        treated=treated,
        arms=list(arms) if arms else None,
        categorical={c: list(levels) for c, levels in categorical} or None,
        incomplete="keep" if public_n else "drop",
        unknown_levels="baseline",
        binary=list(binary) or None,
        outcome_levels=list(outcome_levels) if outcome_levels else None,
        fill=dict(fill) or None,
    )


@st.cache_data(scope="session", max_entries=4, show_spinner="Reading the data's ranges…")
def data_metadata(
    digest: str, _data: bytes, numeric: Sequence[str], categorical: Sequence[str], outcome: str
) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[Any, ...]]]:
    """The data's own ranges and levels (voids the guarantee: the NOT PRIVATE shortcut)."""
    table = read_table(_data)
    ranges: dict[str, tuple[float, float]] = {}
    levels: dict[str, tuple[Any, ...]] = {}
    for c in (*numeric, outcome):
        s = clean_cells(table[c]).dropna() if c in table else pd.Series(dtype=float)
        if len(s) and is_numeric(s):
            ranges[c] = (float(s.min()), float(s.max()))
    for c in categorical:
        if c in table:
            levels[c] = column_labels(_data, c, limit=MAX_LEVELS)
    return ranges, levels


# --------------------------------------------------------------------------------------------
# γ, W and C from public settings


def weight_bound(
    outcome_bounds: tuple[float, float], propensity: float | str, p_min: float
) -> float:
    """W = (hi - lo) / min π: π from the randomization ratio, else the public smallest propensity."""
    p = propensity if isinstance(propensity, float) else p_min
    return default_weight_bound(outcome_bounds, p)


def gamma_scale(W: float) -> float:
    """Factor from a γ tuned at the paper's W = 30 to a release with weight bound W.

    Scaling every weight, W and γ by one factor leaves the minimiser and the sensitivity
    2W/γ unchanged, so the release has the same distribution; γ therefore moves with W.
    """
    return W / PAPER_W


@st.cache_data(scope="session", max_entries=16, show_spinner=False)
def tuned_gamma(
    source: str, variant: str, n: int, eps: float, W: float
) -> tuple[float, float, str]:
    """(γ for this release, γ on the proxy's scale, a sentence saying where it came from)."""
    if source == "paper":  # dpcore.owl.paper.default_gamma: the rule every surface applies
        g0 = paper_gamma(eps, n)
        where = f"the paper's table (cell nearest n = {n}, ε = {eps:g})"
    else:
        design = PROXY_VARIANTS[variant]
        proxy = design.sample(PROXY_N0, rng=stream(0, Stream.PROXY))
        with SIMULATIONS.slot():
            g0 = tune_gamma(
                proxy,
                int(n),
                float(eps),
                reps=PROXY_REPS,
                weight_bound=PAPER_W,
                propensity=design.propensity,
                feature_bounds=design.feature_bounds,
                seed=0,
            ).best_gamma
        where = (
            f"Algorithm 2 on a simulated public proxy ({variant}, n0 = {PROXY_N0}, "
            f"{PROXY_REPS} fits per γ); no privacy spent"
        )
    gamma = default_gamma(eps, n, W) if source == "paper" else g0 * gamma_scale(W)
    return gamma, g0, where


@st.cache_data(scope="session", max_entries=4, show_spinner="Running Algorithm 2 on D0…")
def d0_gamma(
    digest: str,
    _proxy: Trial,
    n: int,
    eps: float,
    W: float,
    propensity: float | str,
    lower: ArrayLike,
    upper: ArrayLike,
    outcome_bounds: tuple[float, float],
    larger_is_better: bool,
) -> tuple[float, str]:
    """(γ, where) from Algorithm 2 on the user's public file D0, in the trial's own units.

    D0 is public, so it is tuned with the release's own W, bounds and direction and needs no
    rescaling. A smaller-is-better outcome is negated (with its bounds) so the benefit is the
    same hi − B that DPOWL uses. That D0 is public is the analyst's assertion; the page checks
    only that it is not the trial and shares no row with it (:func:`check_d0`).
    """
    if not isinstance(propensity, float):
        raise TrialDataError(
            "Algorithm 2 on D0 needs a known randomization ratio (D0's arms are "
            "weighted by it); choose a ratio, or take γ from the paper's table"
        )
    lo, hi = outcome_bounds
    B, bounds = (_proxy.B, (lo, hi)) if larger_is_better else (-_proxy.B, (-hi, -lo))
    proxy = {"X": _proxy.X, "A": _proxy.A, "B": B}
    with SIMULATIONS.slot():
        g = tune_gamma(
            proxy,
            int(n),
            float(eps),
            reps=PROXY_REPS,
            weight_bound=float(W),
            propensity=propensity,
            feature_bounds=(np.array(lower), np.array(upper)),
            outcome=bounds,
            seed=0,
        ).best_gamma
    return g, (
        f"Algorithm 2 on a file D0 ({_proxy.n} rows, {PROXY_REPS} fits per γ) that the "
        "analyst declares public; that D0 is public is the analyst's assertion, not "
        "checked by the app. No privacy is spent on the trial if it is"
    )


@st.cache_data(scope="session", max_entries=4, show_spinner="Comparing D0 with the trial…")
def row_hashes(digest: str, _data: bytes, columns: Sequence[str]) -> np.ndarray:
    """One 64-bit hash per row of the used columns, each cell read as the ledger reads it
    (re-cased labels, yes/no for 1/0 and 1.0 for 1 are the same patient)."""
    table = read_table(_data)
    missing = [c for c in columns if c not in table]
    if missing:
        raise TrialDataError(f"D0 has no column named {missing[0]!r}; it needs the trial's columns")
    return row_keys({c: clean_cells(table[c]) for c in columns})


def check_d0(trial_source: Source, d0_source: Source, columns: Sequence[str]) -> None:
    """Refuse a D0 that is the trial, or that shares a row with it (privacy rule 8).

    Refusing, rather than releasing with a NOT PRIVATE title, keeps the release's title
    independent of which rows the trial holds.
    """
    if d0_source.digest == trial_source.digest:
        raise TrialDataError(
            "D0 is the trial itself: tuning γ on it spends privacy that no "
            "release accounts for. Upload a different, public file, or take γ "
            "from the paper's table"
        )
    shared = np.isin(
        row_hashes(d0_source.digest, d0_source.data, columns),
        row_hashes(trial_source.digest, trial_source.data, columns),
    )
    if shared.any():
        raise TrialDataError(
            f"D0 shares {int(shared.sum())} {rows_word(int(shared.sum()))} with the trial (equal in every used column): a "
            "public D0 must not hold the trial's patients. Remove them from D0, or take γ from "
            "the paper's table"
        )


def identifiers(data: bytes, id_columns: Sequence[str], rows: ArrayLike) -> dict[str, np.ndarray]:
    """The ticked identifier columns' values on the given 1-based data rows (per-row file)."""
    if not id_columns:
        return {}
    table = read_table(data)
    return {c: table[c].to_numpy()[np.asarray(rows) - 1] for c in id_columns}


def guesses(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> dict[str, Any]:
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


def id_options(
    columns: Iterable[str], used: Collection[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Columns that may go into the per-row file as identifiers, and the pre-ticked ones.

    Only the columns the analyst ticks are written; ID-like names (id, patient_id, …) start
    ticked. Columns with a role in the trial are not offered.
    """
    options = tuple(c for c in columns if c not in used)
    return options, tuple(c for c in options if is_identifier(c))


def preview_frame(preview: CsvPreview) -> pd.DataFrame:
    """The first rows as a table of text (shown to the analyst, never as markup)."""
    return pd.DataFrame(list(preview.rows), columns=list(preview.columns), dtype=str)


def read_summary(trial: Trial) -> str:
    """How the file was read and what was kept, in one sentence (analyst only)."""
    names = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
    k = (
        int((trial.A[trial.complete] > 0).sum())
        if trial.complete is not None
        else int((trial.A > 0).sum())
    )
    complete = trial.n - trial.n_incomplete
    incomplete = (
        f"; for you only (not in any release): {trial.n_incomplete} of them miss a "
        "value in a used column (an arm other than the two compared counts as "
        "missing) and get weight 0"
        if trial.n_incomplete
        else ""
    )
    return (
        f"Read {trial.n} {rows_word(trial.n)}, the public n{incomplete}. Complete rows: "
        f"'{trial.treated}' (treated) {k}, '{trial.arms[1]}' {complete - k}; "
        f"{names.get(trial.delimiter, trial.delimiter)}-separated, {trial.encoding}, decimal "
        f"mark '{trial.decimal}'; {len(trial.covariates)} covariate columns."
    )


def rows_word(n: int, word: str = "row") -> str:
    """``word`` in the singular for one, in the plural otherwise."""
    return word if n == 1 else word + "s"
