"""What the DP-OWL page decides from a sweep: the smallest ε (and n) reaching a publication
target, on average and for one release (the share of simulated releases that reach it, with
its interval), the best non-private rule a fixed-γ study is compared with, and the accuracy of
the two rules that need no data (treat everyone, treat no one).

Pure functions of the cached sweeps (plus two small cached computations); no widgets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import streamlit as st

from dpcore.montecarlo import Stream, stream
from dpcore.montecarlo import wilson_interval as wilson
from dpcore.owl.experiments import owl_monte_carlo
from dpcore.owl.simulate import PAPER_TRIAL, optimal_treatment
from dpcore_app.ui.owl.compute import TEST_SIZE, preprocessing


@dataclass(frozen=True)
class Target:
    """A publication target on accuracy: "patients" (at least ``level`` of 100 new patients get
    the better treatment) or "points" (within ``level`` percentage points of the best
    non-private rule's accuracy)."""

    kind: str
    level: float

    def threshold(self, best_accuracy):
        """The accuracy (%) that meets the target, given the best non-private rule's."""
        return (
            float(self.level)
            if self.kind == "patients"
            else float(best_accuracy) - float(self.level)
        )

    def words(self):
        if self.kind == "patients":
            return f"at least {self.level:g} of 100 new patients get the better treatment"
        return f"within {self.level:g} percentage points of the best non-private rule's accuracy"


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


def _hit(row, at):
    return Hit(float(at), float(row.accuracy_mean), float(row.accuracy_lo), float(row.accuracy_hi))


def smallest_eps(summary, n, threshold):
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


def hit_at(summary, n, eps):
    """The :class:`Hit` of the mean accuracy at (n, ε), or None when ``eps`` is None."""
    if eps is None:
        return None
    rows = summary[summary["n"] == n]
    row = rows[np.isclose(rows["epsilon"], eps) | (np.isinf(rows["epsilon"]) & math.isinf(eps))]
    return _hit(row.iloc[0], eps)


def smallest_n(summary, eps, thresholds):
    """Among the simulated sizes, the smallest n whose mean accuracy at ε meets its threshold.

    ``thresholds`` maps each n to its threshold (a "points" target depends on n).
    Returns (Hit or None, the sizes looked at, in order).
    """
    sizes = sorted(int(n) for n in thresholds)
    for n in sizes:
        rows = summary[
            (summary["n"] == n)
            & (
                np.isclose(summary["epsilon"], eps)
                | (np.isinf(summary["epsilon"]) & math.isinf(eps))
            )
        ]
        if len(rows) and rows.iloc[0].accuracy_mean >= thresholds[n]:
            return _hit(rows.iloc[0], n), sizes
    return None, sizes


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


def release_shares(runs, threshold):
    """One :class:`Share` per ε of ``runs`` (one n's per-repetition rows), smallest ε first."""
    acc = runs["accuracy"].to_numpy(float)
    eps = runs["epsilon"].to_numpy(float)
    grid = np.unique(eps)
    out = []
    for e in grid:
        here = acc[eps == e]
        k = int(np.count_nonzero(here >= threshold))
        lo, hi = wilson(k, here.size)
        out.append(
            Share(
                float(e),
                k / here.size,
                float(lo),
                float(hi),
                float(np.median(here)),
                int(here.size),
            )
        )
    return out


def share_at(runs, eps, threshold):
    """The :class:`Share` at one ε."""
    return next(
        s for s in release_shares(runs, threshold) if s.at == eps or math.isclose(s.at, eps)
    )


def smallest_assured_eps(runs, threshold, assurance):
    """The smallest private ε whose share's interval lies at or above ``assurance`` (a
    fraction): there, at least that share of single releases reaches the threshold, beyond
    Monte-Carlo doubt. None when no ε on the grid does."""
    return next(
        (s for s in release_shares(runs, threshold) if math.isfinite(s.at) and s.lo >= assurance),
        None,
    )


def smallest_assured_n(runs_by_n, eps, thresholds, assurance):
    """Among the simulated sizes, the smallest n whose share at ε clears ``assurance``."""
    for n in sorted(runs_by_n):
        s = share_at(runs_by_n[n], eps, thresholds[n])
        if s.lo >= assurance:
            return Share(float(n), s.share, s.lo, s.hi, s.median, s.releases)
    return None


@st.cache_data(max_entries=32, show_spinner=False)
def best_nonprivate(n, h, W, reps, seed, prep="public"):
    """The best non-private rule (the authors' tuned γ at ε = ∞) on the same simulated trials
    as any sweep with this (n, h, W, reps, seed, prep): its summary row as a dict.

    A fixed-γ study compares with this rule, so the cost of regularization stays visible.
    The engine's streams are keyed by (seed, n), so these are the very trials of the sweep.
    """
    outcome, W = preprocessing(prep, W)
    res = owl_monte_carlo(
        [int(n)],
        [math.inf],
        gamma="paper",
        h=float(h),
        weight_bound=W,
        reps=int(reps),
        test_size=TEST_SIZE,
        seed=int(seed),
        outcome=outcome,
    )
    row = res.summary.iloc[0]
    return {
        k: float(row[k]) for k in row.index if k.endswith(("_mean", "_lo", "_hi")) or k == "gamma"
    }


@st.cache_data(show_spinner=False)
def fixed_rule_accuracy(size=400_000):
    """Accuracy (%) of treating everyone and of treating no one in the simulated trial.

    A fixed seeded sample of ``size`` patients: the Monte-Carlo error is below 0.2 points.
    """
    f = PAPER_TRIAL.sample(int(size), rng=stream(0, Stream.TEST, 999))["f"]
    share = 100.0 * float(np.mean(optimal_treatment(f) > 0))
    return {"treat_all": share, "treat_none": 100.0 - share}
