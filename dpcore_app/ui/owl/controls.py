"""The DP-OWL page's URL-bound controls: their options, defaults and labels, the state a preset
sets, and the presets. A link to the page names every one of :data:`CONTROLS` with its value."""

from __future__ import annotations

from dpcore_app.ui.common import specs
from dpcore_app.ui.common.controls import Choice, IntRange, MultiChoice
from dpcore_app.ui.common.grids import N_OPTIONS, fmt_number
from dpcore_app.ui.common.presets import presets
from dpcore_app.ui.owl import decide, tuning

EPS = specs.epsilon(
    "How much one patient may change what is released. Smaller ε: more noise, stronger privacy."
)
N = specs.trial_size(1000)
COMPARE = MultiChoice("compare", N_OPTIONS, (200, 500, 2500), "Also show n")
MODE = specs.gamma_mode(
    "Paper-tuned: the authors' choice for each (ε, n). Fixed: one γ for "
    "every ε, the clean experiment where only the noise changes."
)
GAMMA = specs.gamma(
    "How strongly the rule is pulled towards zero. Larger γ: less noise needed, blurrier rule."
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
H = specs.huber_width("Width of the Huber smoothing of the hinge loss.")
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
SEED = specs.seed("Same seed, same simulated trials: a link reproduces the view.")
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
CONTROLS = (*STATE, METRIC, SCALE, *tuning.CONTROLS, *decide.CONTROLS)
PRESETS = presets(
    STATE,
    {
        "Strong privacy (ε = 0.1)": {"eps": 0.1},
        "Moderate (ε = 1)": {"eps": 1.0},
        "Weak (ε = 10)": {"eps": 10.0},
        "Clean: fixed γ = 75": {"gamma_mode": "free", "gamma": 75},
    },
)
