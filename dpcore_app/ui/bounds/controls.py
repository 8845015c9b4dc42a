"""The theory-bounds page's URL-bound controls: their options, defaults and labels, the state a
preset sets, and the presets. A link to the page names every one of :data:`CONTROLS` with its value."""

from __future__ import annotations

from dpcore_app.ui.bounds import explain
from dpcore_app.ui.common import specs
from dpcore_app.ui.common.controls import Choice, IntRange
from dpcore_app.ui.common.presets import presets

EPS = specs.epsilon("Smaller ε: more noise, stronger privacy.")
N = specs.trial_size(500)
MODE = specs.gamma_mode("Paper-tuned: the authors' Algorithm 2 choice for the nearest (ε, n) cell.")
GAMMA = specs.gamma()
H = specs.huber_width()
W = IntRange(
    "W", 1, 100, 30, "Weight bound W", help="Public bound on the weights; the authors use 30."
)
C = Choice(
    "C",
    (0.0, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0),
    0.0,
    "Constant C",
    help="0 when the propensity is known (a randomized trial); see Theorem 7.",
)
RHO = Choice("rho", (0.01, 0.05, 0.1, 0.2), 0.05, "Failure probability ρ")
G = Choice("G", (0.0, 0.1, 0.5, 1.0, 2.0, 5.0), 0.0, "Generalization term G (Theorem 11)")
SEED = specs.seed()
FORM = Choice(
    "form",
    ("re-derived", "printed"),
    "re-derived",
    "Bound to stack",
    explain.FORM_NAMES.get,
    kind="segmented",
    help="Transcribed: the formula as the seed text prints it, at its stated λ = 2γ/n.",
)
ALPHA = Choice("alpha", (0.1, 0.2, 0.5, 1.0, 2.0, 5.0), 1.0, "Target excess risk α")
TAU = Choice("tau", (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0), 0.05, "Tail fraction τ")
DIM = Choice("d", (1, 2, 5, 10, 20, 50, 100), 5, "Model dimension d")
CONTROLS = (EPS, N, MODE, GAMMA, H, W, C, RHO, G, SEED, FORM, ALPHA, TAU, DIM)
STATE = (EPS, N, MODE, GAMMA, H, W, C, RHO, G, SEED)  # what a preset sets, all of it
PRESETS = presets(
    STATE,
    {
        "Paper: n = 500, ε = 1": dict(eps=1.0, n=500, gamma_mode="paper", h=0.5, W=30),
        "Strict privacy: n = 200, ε = 0.1": dict(eps=0.1, n=200, gamma_mode="paper", h=0.5, W=30),
        "Large trial: n = 1000, ε = 5": dict(eps=5.0, n=1000, gamma_mode="paper", h=0.5, W=30),
        "Where the transcribed formula fails": dict(
            eps=1.0, n=200, gamma_mode="free", gamma=1, h=2.0, W=1
        ),
    },
)
