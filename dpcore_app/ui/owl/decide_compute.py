"""What the DP-OWL page decides from a sweep: the smallest ε (and n) reaching a publication
target, on average and for one release (the share of simulated releases that reach it, with
its interval), the best non-private rule a fixed-γ study is compared with, and the accuracy of
the two rules that need no data (treat everyone, treat no one).

Pure functions of the cached sweeps (plus two small cached computations); no widgets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

import numpy as np
import streamlit as st

from dpcore.montecarlo import Stream, reps_to_show, stream
from dpcore.montecarlo import wilson_interval as wilson
from dpcore.owl.simulate import PAPER_TRIAL, optimal_treatment
from dpcore_app.ui.owl.compute import study

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

#: An accuracy (%) a release must reach: one for every release, or an array indexed by
#: repetition, one per simulated trial (a paired target).
Threshold = float | np.ndarray


@dataclass(frozen=True)
class Target:
    """A publication target on accuracy: "patients" (at least ``level`` of 100 new patients get
    the better treatment) or "points" (within ``level`` percentage points of the best
    non-private rule learned from the same patients).

    A "points" target is paired: each simulated release is compared with the best non-private
    rule fitted to its own simulated trial, as a publisher would compare a release with the
    non-private fit of the same data. Against the non-private rules' average instead, the
    trial-to-trial spread of the non-private rule itself would count as a miss (without privacy
    only about 68% of fits land within 1 point of their average, against 100% of their own).
    """

    kind: str
    level: float

    @overload
    def threshold(self, best_accuracy: float) -> float: ...
    @overload
    def threshold(self, best_accuracy: np.ndarray) -> Threshold: ...
    def threshold(self, best_accuracy: float | np.ndarray) -> Threshold:
        """The accuracy (%) that meets the target, given the best non-private rule's: a number
        for a number (its mean), an array for an array (one per simulated trial) except for a
        "patients" target, whose level is the same for every trial."""
        if self.kind == "patients":
            return float(self.level)
        best = np.asarray(best_accuracy, float)
        return best - float(self.level) if best.ndim else float(best) - float(self.level)

    def words(self, threshold: float | None = None) -> str:
        """The target in words; with ``threshold`` (the mean's), what it comes to in %."""
        if self.kind == "patients":
            text = f"at least {self.level:g} of 100 new patients get the better treatment"
            return text if threshold is None else f"{text} ({threshold:.1f}%)"
        text = (
            f"within {self._points()} of the accuracy of the best non-private rule learned "
            "from the same patients"
        )
        return text if threshold is None else f"{text} ({threshold:.1f}% on average)"

    def reach(self, threshold: float) -> str:
        """What a single release must do, as a verb phrase ("reach 80.0%")."""
        if self.kind == "patients":
            return f"reach {threshold:.1f}%"
        return (
            f"come within {self._points(short=True)} of the best non-private rule learned from "
            "the same patients"
        )

    def _points(self, short: bool = False) -> str:
        """The level in words: 5 percentage points, 1 percentage point (short: 5 points)."""
        unit = "point" if self.level == 1 else "points"
        return f"{self.level:g} {unit}" if short else f"{self.level:g} percentage {unit}"


@dataclass(frozen=True)
class Hit:
    """A grid point (ε or n) and the accuracy measured there with its 95% Monte-Carlo interval."""

    at: float
    mean: float
    lo: float
    hi: float


@dataclass(frozen=True)
class EpsAnswer:
    """Smallest ε on the grid whose mean accuracy meets the threshold (``first``), and the
    Monte-Carlo uncertainty of that ε: the smallest ε whose interval lies above the threshold
    (``sure``) and the smallest whose interval reaches it (``possible``). None: not on the grid."""

    threshold: float
    first: Hit | None
    sure: Hit | None
    possible: Hit | None


def _hit(row: pd.Series, at: float) -> Hit:
    return Hit(float(at), float(row.accuracy_mean), float(row.accuracy_lo), float(row.accuracy_hi))


def smallest_eps(summary: pd.DataFrame, n: int, threshold: float) -> EpsAnswer:
    """The private ε grid at one n, scanned from the smallest ε (non-private excluded)."""
    rows = summary[(summary["n"] == n) & np.isfinite(summary["epsilon"])].sort_values("epsilon")

    def first(column):
        reached = np.flatnonzero(rows[column].to_numpy() >= threshold)
        return (
            _hit(rows.iloc[reached[0]], rows["epsilon"].iloc[reached[0]]) if reached.size else None
        )

    return EpsAnswer(
        float(threshold), first("accuracy_mean"), first("accuracy_lo"), first("accuracy_hi")
    )


def hit_at(summary: pd.DataFrame, n: int, eps: float | None) -> Hit | None:
    """The :class:`Hit` of the mean accuracy at (n, ε), or None when ``eps`` is None."""
    if eps is None:
        return None
    rows = summary[summary["n"] == n]
    row = rows[np.isclose(rows["epsilon"], eps) | (np.isinf(rows["epsilon"]) & math.isinf(eps))]
    return _hit(row.iloc[0], eps)


@dataclass(frozen=True)
class Share:
    """How often one release reaches a threshold at a grid point (ε or n): the share of the
    simulated releases (one per simulated trial) at or above it, its 95% Wilson interval, and
    the median release's accuracy (%)."""

    at: float
    share: float
    lo: float
    hi: float
    median: float
    releases: int


def release_shares(runs: pd.DataFrame, threshold: Threshold) -> list[Share]:
    """One :class:`Share` per ε of ``runs`` (one n's per-repetition rows), smallest ε first.

    ``threshold``: one accuracy (%) for every release, or an array indexed by repetition, one
    per simulated trial (a paired target: :meth:`Target.threshold` of each trial's best
    non-private accuracy, :func:`per_trial`)."""
    acc = runs["accuracy"].to_numpy(float)
    eps = runs["epsilon"].to_numpy(float)
    bar = np.asarray(threshold, float)
    meets = acc >= (bar[runs["rep"].to_numpy()] if bar.ndim else bar)
    out = []
    for e in np.unique(eps):
        here = eps == e
        m, k = int(np.count_nonzero(here)), int(np.count_nonzero(meets[here]))
        lo, hi = wilson(k, m)
        out.append(Share(float(e), k / m, float(lo), float(hi), float(np.median(acc[here])), m))
    return out


def per_trial(runs: pd.DataFrame, eps: float = math.inf, metric: str = "accuracy") -> np.ndarray:
    """``metric`` at one ε of ``runs``, as an array indexed by repetition (simulated trial)."""
    rows = runs[(runs["epsilon"] == eps) | (np.isinf(runs["epsilon"]) & math.isinf(eps))]
    out = np.full(int(runs["rep"].max()) + 1, np.nan)
    out[rows["rep"].to_numpy()] = rows[metric].to_numpy(float)
    return out


def share_at(runs: pd.DataFrame, eps: float, threshold: Threshold) -> Share:
    """The :class:`Share` at one ε."""
    return next(
        s for s in release_shares(runs, threshold) if s.at == eps or math.isclose(s.at, eps)
    )


def smallest_assured_eps(
    runs: pd.DataFrame, threshold: Threshold, assurance: float
) -> Share | None:
    """The smallest private ε whose share's interval lies at or above ``assurance`` (a
    fraction): there, at least that share of single releases reaches the threshold, beyond
    Monte-Carlo doubt. None when no ε on the grid does."""
    return next(
        (s for s in release_shares(runs, threshold) if math.isfinite(s.at) and s.lo >= assurance),
        None,
    )


def smallest_assured_n(
    runs_by_n: Mapping[int, pd.DataFrame],
    eps: float,
    thresholds: Mapping[int, Threshold],
    assurance: float,
) -> Share | None:
    """Among the simulated sizes, the smallest n whose share at ε clears ``assurance``;
    ``thresholds`` maps each n to its threshold (a number, or one per simulated trial)."""
    for n in sorted(runs_by_n):
        s = share_at(runs_by_n[n], eps, thresholds[n])
        if s.lo >= assurance:
            return Share(float(n), s.share, s.lo, s.hi, s.median, s.releases)
    return None


def reps_needed(reps: int, assurance: float) -> int | None:
    """The fewest repetitions at which the Wilson bound can show that ``assurance`` of single
    releases meet a target (:func:`dpcore.montecarlo.reps_to_show`), when ``reps`` are fewer;
    None when ``reps`` can show it (whether they do is then up to the releases)."""
    floor = reps_to_show(assurance)
    return floor if int(reps) < floor else None


def control_setting(needed: float, low: int, step: int, high: int) -> int:
    """The smallest value of a stepped control (``low``, ``low + step``, ... ``high``) at or
    above ``needed``; ``high`` when none is."""
    return int(min(high, low + max(0, math.ceil((needed - low) / step)) * step))


@st.cache_data(max_entries=32, show_spinner=False)
def best_nonprivate(
    n: int, h: float, W: float | str, reps: int, seed: int, prep: str = "public"
) -> tuple[dict[str, float], np.ndarray]:
    """The best non-private rule (the authors' tuned γ at ε = ∞) on the same simulated trials
    as any sweep with this (n, h, W, reps, seed, prep): (its summary row as a dict, its
    accuracy on each trial as an array indexed by repetition).

    A fixed-γ study compares with this rule, so the cost of regularization stays visible.
    The engine's streams are keyed by (seed, n), so these are the very trials of the sweep.
    """
    res = study(n, [math.inf], "paper", h, W, reps, seed, prep)
    row = res.summary.iloc[0]
    summary = {
        k: float(row[k]) for k in row.index if k.endswith(("_mean", "_lo", "_hi")) or k == "gamma"
    }
    return summary, per_trial(res.runs)


@st.cache_data(show_spinner=False)
def fixed_rule_accuracy(size: int = 400_000) -> dict[str, float]:
    """Accuracy (%) of treating everyone and of treating no one in the simulated trial.

    A fixed seeded sample of ``size`` patients: the Monte-Carlo error is below 0.2 points.
    """
    f = PAPER_TRIAL.sample(int(size), rng=stream(0, Stream.TEST, 999))["f"]
    share = 100.0 * float(np.mean(optimal_treatment(f) > 0))
    return {"treat_all": share, "treat_none": 100.0 - share}
