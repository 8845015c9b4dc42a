"""The CVaR page's URL-bound controls: their options, defaults and labels, the state a preset
sets, and the presets. A link to the page names every one of :data:`CONTROLS` with its value."""

from __future__ import annotations

from dpcore.cvar.constructions import KINDS
from dpcore_app.ui.common import specs
from dpcore_app.ui.common.controls import Choice, IntRange, MultiChoice
from dpcore_app.ui.common.grids import EPS_OPTIONS, fmt_eps
from dpcore_app.ui.common.presets import presets
from dpcore_app.ui.cvar import compute

KIND_NAMES = {
    "uniform": "uniform",
    "beta": "concentrated",
    "two-point": "hard two-point",
    "heavy-tailed": "heavy-tailed",
}
AXES = {"epsilon": "ε", "n": "n", "tau": "τ", "eps_n_tau": "εnτ"}
EPS = specs.epsilon("Smaller ε means more noise and stronger privacy.")
N = Choice("n", compute.N_GRID, 2000, "Patients (records) n")
TAU = Choice(
    "tau",
    compute.TAU_GRID,
    0.05,
    "Tail level τ",
    help="The share of worst outcomes averaged: 0.05 is the worst 5%.",
)
KIND = Choice(
    "loss",
    KINDS,
    "uniform",
    "Loss distribution",
    KIND_NAMES.get,
    kind="selectbox",
    help="Concentrated: Beta(20, 20) in [B/4, 3B/4]. Hard two-point: B with probability τ/2, "
    "else 0 (the lower-bound instance). Heavy-tailed: Pareto with tail index 2, cut at B.",
)
BOUND = Choice(
    "B", compute.B_GRID, 1.0, "Loss bound B", help="Public: every loss is clipped to [0, B]."
)
REPS = IntRange(
    "reps", 20, 1000, 200, "Repetitions", step=20, help="Simulated data sets per setting."
)
SEED = specs.seed("Same seed, same simulated data: a link reproduces the view.")
XAXIS = Choice("x", tuple(AXES), "epsilon", "Error against", AXES.get, kind="segmented")
CLASS_M = Choice("M", compute.M_GRID, 31, "Candidates M", help="Slopes θ on a grid in [-1.5, 1.5].")
DIMS = MultiChoice("d", compute.D_GRID, (2, 10, 50), "Dimensions d")
EPS_RULE = Choice("eps_rule", EPS_OPTIONS[:-1], 2.0, "ε₁ for the treatment rule", fmt_eps)
CONTROLS = (EPS, N, TAU, KIND, BOUND, REPS, SEED, XAXIS, CLASS_M, DIMS, EPS_RULE)
STATE = (EPS, N, TAU, KIND, BOUND, REPS, SEED)  # what a preset sets, all of it
PRESETS = presets(
    STATE,
    {
        "Clinical tail: 2000 patients, worst 5%, ε = 1": dict(
            n=2000, tau=0.05, eps=1.0, loss="uniform"
        ),
        "Hard instance, ε = 0.5": dict(n=1000, tau=0.05, eps=0.5, loss="two-point"),
        "Rare events: worst 1% of 500": dict(n=500, tau=0.01, eps=1.0, loss="heavy-tailed"),
        "Generous budget: ε = 10": dict(n=2000, tau=0.05, eps=10.0, loss="uniform"),
    },
)
