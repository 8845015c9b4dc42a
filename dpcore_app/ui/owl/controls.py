"""The DP-OWL page's URL-bound controls: their options, defaults and labels, the state a preset
sets, and the presets. A link to the page names every one of :data:`CONTROLS` with its value."""

from __future__ import annotations

from dpcore_app.ui.common import controls
from dpcore_app.ui.common.controls import Choice, IntRange, MultiChoice
from dpcore_app.ui.common.grids import EPS_OPTIONS, H_OPTIONS, N_OPTIONS, fmt_eps, fmt_number
from dpcore_app.ui.owl import decide, tuning

EPS = Choice(
    "eps",
    EPS_OPTIONS,
    1.0,
    "Privacy budget ε",
    fmt_eps,
    help="How much one patient may change what is released. Smaller ε: more noise, stronger privacy.",
)
N = Choice("n", N_OPTIONS, 1000, "Patients in the trial (n)")
COMPARE = MultiChoice("compare", N_OPTIONS, (200, 500, 2500), "Also show n")
MODE = Choice(
    "gamma_mode",
    ("paper", "free"),
    "paper",
    "γ",
    {"paper": "paper-tuned", "free": "fixed"}.get,
    kind="segmented",
    help="Paper-tuned: the authors' choice for each (ε, n). Fixed: one γ for "
    "every ε, the clean experiment where only the noise changes.",
)
GAMMA = IntRange(
    "gamma",
    1,
    1000,
    75,
    "Regularization γ",
    kind="slider",
    help="How strongly the rule is pulled towards zero. Larger γ: less noise needed, blurrier rule.",
)
PREP = Choice(
    "prep",
    ("public", "paper"),
    "public",
    "Outcome preprocessing",
    {"public": "public bounds", "paper": "authors' shift"}.get,
    kind="radio",
    help="Public bounds: outcomes clipped to a range fixed in advance, covered by the guarantee. "
    "Authors' shift: each data set shifted by its own minimum, as in the paper's code; it "
    "reads the data, so the guarantee does not cover it.",
)
H = Choice(
    "h", H_OPTIONS, 0.5, "Huber width h", help="Width of the Huber smoothing of the hinge loss."
)
W_BOUND = Choice(
    "W",
    ("auto", 10, 20, 30, 48, 60, 100),
    "auto",
    "Weight bound W",
    fmt_number,
    kind="selectbox",
    help="Public bound on benefit / propensity; larger weights are clipped. Auto: 48 with public "
    "bounds (no clipping), the authors' 30 with their preprocessing.",
)
REPS = IntRange("reps", 20, 500, 200, "Repetitions", step=20, help="Simulated trials per setting.")
SEED = IntRange(
    "seed",
    0,
    10**6,
    0,
    "Seed",
    help="Same seed, same simulated trials: a link reproduces the view.",
)
METRIC = Choice(
    "metric",
    ("accuracy", "value", "concordance"),
    "accuracy",
    "Show",
    {"accuracy": "accuracy", "value": "value", "concordance": "agreement"}.get,
    kind="segmented",
)
SCALE = Choice(
    "scale",
    ("own", "paper"),
    "own",
    "Outcome scale",
    {"own": "own scale", "paper": "paper scale"}.get,
    kind="radio",
    help="Own scale: the outcome as measured. Paper scale: the authors shift each "
    "test set's outcomes by its own minimum, which adds a constant.",
)
CONTROLS = (
    EPS,
    N,
    COMPARE,
    MODE,
    GAMMA,
    PREP,
    H,
    W_BOUND,
    REPS,
    SEED,
    METRIC,
    SCALE,
    *tuning.CONTROLS,
    *decide.CONTROLS,
)
STATE = (
    EPS,
    N,
    COMPARE,
    MODE,
    GAMMA,
    PREP,
    H,
    W_BOUND,
    REPS,
    SEED,
)  # what a preset sets, all of it
PRESETS = controls.presets(
    STATE,
    {
        "Strong privacy (ε = 0.1)": {"eps": 0.1},
        "Moderate (ε = 1)": {"eps": 1.0},
        "Weak (ε = 10)": {"eps": 10.0},
        "Clean: fixed γ = 75": {"gamma_mode": "free", "gamma": 75},
    },
)
