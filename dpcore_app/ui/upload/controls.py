"""The "Your data" page's URL-bound controls: their options, defaults and labels.

The file-dependent widgets (columns, treated arm, table) are in :mod:`dpcore_app.ui.upload.form`; these
have fixed options, so a link carries them. The outcome's direction has no default.
"""

from __future__ import annotations

from dpcore.owl.simulate import PROXY_VARIANTS
from dpcore_app.ui.common import specs
from dpcore_app.ui.common.controls import Choice
from dpcore_app.ui.common.demos import DEMOS
from dpcore_app.ui.upload.form import Unchosen, direction_label

RATIOS = {
    "1:1": 1 / 2,
    "2:1": 2 / 3,
    "1:2": 1 / 3,
    "3:1": 3 / 4,
    "1:3": 1 / 4,
    "column": "column",
    "estimated": "logistic",
}
FILE = Choice(
    "file",
    ("upload",) + DEMOS,
    "upload",
    "Trial data",
    {
        "upload": "upload a CSV",
        "paper_trial": "demo: paper's trial (1:1)",
        "hospital_trial": "demo: hospital stay (2:1)",
        "actg175_trial": "real trial: ACTG 175 (2 of its 4 arms, 1:1)",
        "actg175_four_arms": "real trial: ACTG 175, all 4 arms (1:1:1:1)",
    }.get,
    kind="radio",
)
BETTER = Unchosen(
    "better", ("larger", "smaller"), None, "Which outcome is better?", direction_label
)
DESIGN = Choice(
    "design",
    tuple(RATIOS),
    "1:1",
    "Randomization (treated : control)",
    {
        **{k: k for k in RATIOS},
        "column": "a propensity column",
        "estimated": "unknown: estimate (logistic)",
    }.get,
    kind="selectbox",
)
P_MIN = Choice(
    "p_min",
    (0.01, 0.02, 0.05, 0.1, 0.2, 0.25),
    0.05,
    "Smallest propensity (public)",
    help="A public lower bound on P(arm | x); it sets W. Smaller rows' weights are clipped.",
)
EPS = specs.epsilon("Smaller ε means more noise and stronger privacy.", finite=True)
LEARNER = Choice(
    "learner",
    ("dp-owl", "plug-in"),
    "dp-owl",
    "Learner",
    {
        "dp-owl": "DP-OWL (the paper's: output perturbation)",
        "plug-in": "private plug-in rule (noisy per-arm outcome models)",
    }.get,
    kind="radio",
    help="DP-OWL releases a weighted-ERM rule with noise on its coefficients. The plug-in "
    "rule fits a linear outcome model per arm from noisy sums and treats where the treated "
    "arm's prediction is better: on simulated trials with a linear effect it gives the "
    "better arm to more patients at the same ε (docs/findings.md), and it loses when "
    "the effect is not linear in the covariates.",
)
GAMMA_FROM = Choice(
    "gamma_from",
    ("paper", "proxy", "d0"),
    "paper",
    "γ from",
    {
        "paper": "the paper's table",
        "proxy": "Algorithm 2 on a simulated proxy",
        "d0": "Algorithm 2 on your public D0",
    }.get,
    kind="radio",  # its labels wrap on a phone; a segmented control's run off the screen
)
PROXY = Choice(
    "proxy",
    tuple(PROXY_VARIANTS),
    "same as the trial",
    "Simulated public proxy D0",
    str,
    kind="selectbox",
)
CONTROLS = (FILE, BETTER, DESIGN, P_MIN, EPS, LEARNER, GAMMA_FROM, PROXY)
