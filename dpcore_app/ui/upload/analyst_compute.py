"""Computations of the "Your data" page's analyst tools: the preview, the dictionary, the script.

The preview reads nothing private: its inputs are the public n, the public bounds, the design
and the release's settings, all plain values, so it is cached across sessions (privacy rule 4
concerns uploaded data; nothing of them is in the cache key or the result).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st

from dpcore.data.columns import MISSING_SUFFIX
from dpcore.data.dictionary import Column, Dictionary
from dpcore.owl.evaluation_fit import public_split
from dpcore.owl.paper import default_gamma
from dpcore.owl.simulate import STRENGTHS, TwinDesign
from dpcore.owl.werm_release import noise_per_coefficient, resolve_C, sensitivity
from dpcore.release.preview import preview
from dpcore.release.preview_reading import needed_heterogeneity
from dpcore.release.script import release_script
from dpcore_app.ui.common.grids import EPS_OPTIONS

if TYPE_CHECKING:
    import pandas as pd

    from dpcore.data.trial import Trial
    from dpcore_app.ui.upload.release import Released

#: The ε grid of the preview curves (the chosen ε is added to it).
PREVIEW_EPS = tuple(e for e in EPS_OPTIONS if math.isfinite(e) and 0.1 <= e <= 100)
TARGETS = (70, 80, 90, 95)
TWINS, DRAWS = 8, 25


def preview_gammas(
    eps_grid: Sequence[float], n: int, W: float, gamma: float, eps: float, gamma_source: str
) -> tuple[float, ...]:
    """γ at each previewed ε: the paper's table scaled by W/30 when the release takes γ from it,
    otherwise the release's own γ held at every ε; at the chosen ε always the release's γ."""
    if gamma_source == "paper":
        out = [default_gamma(e, n, W) for e in eps_grid]
    else:
        out = [float(gamma)] * len(eps_grid)
    return tuple(float(gamma) if math.isclose(e, eps) else g for e, g in zip(eps_grid, out))


def preview_grid(eps: float) -> tuple[float, ...]:
    """The preview curves' ε grid (:data:`PREVIEW_EPS`) with the chosen ε, in order."""
    return tuple(sorted(set(PREVIEW_EPS) | {float(eps)}))


#: The name of the analyst's own effect size among the preview's strengths.
YOURS = "yours"


def strength_sd(
    strength: str, outcome_bounds: Sequence[float], yours: float | None = None
) -> float:
    """A strength's standard deviation of the treatment effect, in the outcome's units."""
    if strength == YOURS:
        if yours is None:
            raise TypeError('the strength "yours" comes with its SD')
        return float(yours)
    return STRENGTHS[strength] * (float(outcome_bounds[1]) - float(outcome_bounds[0]))


#: The twin's average advantage of the treated arm in the "dominant arm" scenario, as a share
#: of the outcome's range.
DOMINANT = 0.10


def twin_design(
    n: int,
    lower: Iterable[float],
    upper: Iterable[float],
    binary: Iterable[bool],
    outcome_bounds: Iterable[float],
    larger_is_better: bool,
    propensity: float,
    dominant: bool,
) -> TwinDesign:
    """The simulated twin of the analyst's trial, from public values only: what both cached
    computations of the preview (:func:`twin_preview`, :func:`needed_sd`) take. ``dominant``:
    the treated arm is better on average by :data:`DOMINANT` of the outcome's range."""
    return TwinDesign(
        n=int(n),
        lower=tuple(map(float, lower)),
        upper=tuple(map(float, upper)),
        outcome_bounds=tuple(map(float, outcome_bounds)),
        larger_is_better=bool(larger_is_better),
        propensity=float(propensity),
        binary=tuple(binary),
        average_effect=DOMINANT if dominant else 0.0,
    )


@st.cache_data(max_entries=32, show_spinner="Simulating a twin of your trial (no privacy spent)…")
def twin_preview(
    design: TwinDesign,
    eps_grid: Sequence[float],
    gammas: Sequence[float],
    W: float,
    C: float | str,
    huber_h: float = 0.5,
    yours: float | None = None,
) -> pd.DataFrame:
    """The preview's table (see :func:`dpcore.release.preview.preview`) on the twin ``design``
    (:func:`twin_design`); public inputs only. ``yours``: the analyst's own standard deviation
    of the treatment effect between patients, in the outcome's units, previewed as the strength
    "yours" beside the three presets."""
    # Bounded whatever n (a twin has at most dpcore.release.preview.MAX_ROWS patients), so it runs
    # in the analyst's own session, not behind the gate the teaching pages' sweeps share.
    strengths = dict(STRENGTHS)
    if yours is not None:
        lo, hi = design.outcome_bounds
        strengths[YOURS] = float(yours) / (float(hi) - float(lo))
    return preview(
        design,
        eps_grid,
        strengths=strengths,
        gamma=list(gammas),
        weight_bound=W,
        C=C,
        huber_h=huber_h,
        twins=TWINS,
        draws=DRAWS,
        seed=0,
    )


@st.cache_data(max_entries=32, show_spinner=False)
def needed_sd(
    design: TwinDesign, eps: float, gamma: float, W: float, C: float | str
) -> float | None:
    """How much the effect must vary between patients (SD, outcome units) for a private DP-OWL
    release at ``eps`` to beat giving everyone one arm on the twin ``design`` (public inputs
    only), or None on the grid tried
    (:func:`dpcore.release.preview_reading.needed_heterogeneity`)."""
    return needed_heterogeneity(design, float(eps), gamma=float(gamma), weight_bound=W, C=C)


def fit_size(n: int, evaluation: tuple[float, float] | None) -> int:
    """Patients the rule is fitted on: the public split's fit part when the release is
    evaluated (``evaluation`` = (ε_eval, share)), else all n."""
    if evaluation is None:
        return int(n)
    return len(public_split(int(n), evaluation[1])[0])


def twin_propensity(propensity: float | str | None, p_min: float | None) -> float:
    """The twin's randomization: the known ratio, else 1/2 (a per-row or estimated propensity
    is replaced by balanced arms; the weights still use the public smallest propensity)."""
    return float(propensity) if isinstance(propensity, float) else 0.5


def noise_lengths(
    lower: Sequence[float] | np.ndarray,
    upper: Sequence[float] | np.ndarray,
    eps: float,
    W: float,
    gamma: float,
    C: float | str,
    n: int,
) -> dict[str, Any]:
    """Typical noise per coefficient at ε, in the rule's own units (public settings only)."""
    delta = sensitivity(W, gamma, resolve_C(C, n, W))
    return noise_per_coefficient(np.asarray(lower), np.asarray(upper), eps, delta)


def dictionary_from_settings(
    trial: Trial,
    bounds: Mapping[str, Sequence[float]],
    outcome_bounds: Sequence[float],
    larger_is_better: bool,
    propensity: float | str | None,
    units: Mapping[str, str] | None = None,
    base: Dictionary | None = None,
    min_propensity: float | None = None,
    binary: Collection[str] = (),
) -> Dictionary:
    """The page's filled-in public metadata as a Dictionary: what the page releases from
    (:func:`dpcore.release.release`) and what "download this dictionary" gives.

    ``bounds`` are the numeric covariates' public bounds as entered; categorical levels and
    the arms come from the trial's public mapping; ``binary`` names the 0/1 covariates whose
    cells may be words (yes/no). Units and meanings are kept from ``base`` (the uploaded
    dictionary) when there is one. ``min_propensity`` (the public smallest propensity) is
    written for a per-row propensity column, which the evaluation needs.
    """
    units = units or {}
    kept = {c.name: c for c in (base.columns if base is not None else ())}
    cols = []
    # The covariates in the rule's order (a categorical one where its first indicator is), so
    # that a release from the downloaded dictionary fits the same column order.
    dummies = {f"{c}={lev}": c for c, levels in trial.categories.items() for lev in levels[1:]}
    dummies |= {c + MISSING_SUFFIX: c for c in trial.fills}
    order = list(dict.fromkeys(dummies.get(c, c) for c in trial.covariates))
    order += [c for c in trial.categories if c not in order]  # a single-level categorical
    for name in order:
        old = kept.get(name)
        fill = trial.fills.get(name)  # the dictionary's public fill-in value, kept
        if name in trial.categories:
            cols.append(
                Column(
                    name,
                    "covariate",
                    "categorical",
                    units.get(name, old.unit if old else ""),
                    None,
                    tuple(trial.categories[name]),
                    old.meaning if old else "",
                    fill,
                )
            )
            continue
        is_binary = name in binary or (old is not None and old.type == "binary")
        kind = "binary" if is_binary else "numeric"
        cols.append(
            Column(
                name,
                "covariate",
                kind,
                units.get(name, old.unit if old else ""),
                None if kind == "binary" else tuple(map(float, bounds[name])),
                None,
                old.meaning if old else "",
                fill,
            )
        )
    old = kept.get(trial.treatment)
    cols.append(
        Column(
            trial.treatment,
            "treatment",
            "label",
            "",
            None,
            tuple(trial.arms),
            old.meaning if old else "",
        )
    )
    if trial.propensity_column:
        cols.append(Column(trial.propensity_column, "propensity", "numeric"))
    old = kept.get(trial.outcome)
    # A yes/no outcome written as labels keeps its public levels (the first reads 0).
    labelled = old is not None and old.type == "binary" and bool(old.levels)
    cols.append(
        Column(
            trial.outcome,
            "outcome",
            "binary" if labelled else "numeric",
            units.get(trial.outcome, old.unit if old else ""),
            None if labelled else tuple(map(float, outcome_bounds)),
            tuple(old.levels) if labelled and old is not None else None,
            old.meaning if old else "",
        )
    )
    return Dictionary(
        columns=tuple(cols),
        treated=trial.arms[0],
        propensity=propensity if isinstance(propensity, float) else None,
        larger_is_better=bool(larger_is_better),
        min_propensity=(
            float(min_propensity) if propensity == "column" and min_propensity is not None else None
        ),
        dataset=base.dataset if base is not None else "",
        description=base.description if base is not None else "",
    )


def script_for(
    released: Released, csv_name: str = "trial.csv", dictionary_name: str = "trial_dictionary.json"
) -> str:
    """The "Python script" download of a release (a ``Released``): the release's own plan,
    which the script hands to :func:`dpcore.release.release` with the CSV and the dictionary
    download, so it makes the release the page made (with fresh noise) and records it under
    the same dataset (the file's rows)."""
    return release_script(
        released.release.made.plan, csv_name=csv_name, dictionary_name=dictionary_name
    )


__all__ = [
    "PREVIEW_EPS",
    "STRENGTHS",
    "YOURS",
    "strength_sd",
    "TARGETS",
    "dictionary_from_settings",
    "noise_lengths",
    "fit_size",
    "preview_gammas",
    "preview_grid",
    "script_for",
    "twin_preview",
    "twin_propensity",
]
