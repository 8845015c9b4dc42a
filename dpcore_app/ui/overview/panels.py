"""The overview page's panels: whom the dashboard is for, one live noisy release, and the
links to every page."""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpcore import laplace_interval_halfwidth, laplace_noise
from dpcore_app import page
from dpcore_app.ui.common import explain, frames, specs
from dpcore_app.ui.common.figures import figure, show
from dpcore_app.ui.common.safety import guarded
from dpcore_app.ui.overview import charts

PAGES = (
    (
        page("dp_owl"),
        "DP-OWL: a private treatment rule, live",
        ":material/medication:",
        "Move ε, n, γ and h on the DP-wERM paper's simulated trial; tune γ on public data.",
    ),
    (
        page("cvar"),
        "Private CVaR: the privacy price of tail risk",
        ":material/warning:",
        "Estimate and learn the mean of the worst τ share under ε-DP: privacy acts on εnτ.",
    ),
    (
        page("bounds"),
        "Theory bounds: what the theorems promise",
        ":material/functions:",
        "Every term of both papers' bounds, live, against the mechanisms' measured errors.",
    ),
    (
        page("your_data"),
        "Your data: a private rule from your trial",
        ":material/upload_file:",
        "Upload a trial CSV; release a private treatment rule, with its privacy spend and files to share.",
    ),
    (
        page("lessons"),
        "Lessons: six guided experiments, with a printable handout",
        ":material/school:",
        "For a lecture or alone: each lesson sets a page for you, says what to look at, and shows the answer.",
    ),
    (
        page("limitations"),
        "What the guarantee does not cover",
        ":material/report:",
        "Floating-point noise, tuning on private data, side channels.",
    ),
    (page("glossary"), "Glossary", ":material/menu_book:", "Every symbol and term the pages use."),
)
DEMO_EPS = specs.epsilon(key="demo_eps", label="Privacy budget ε for this release", finite=True)
TRUE_COUNT = 412


def audiences() -> None:
    """What the dashboard answers for a clinician and for a student, side by side."""
    clinician, student = st.columns(2, gap="large")
    with clinician:
        st.subheader("For clinicians", anchor=False)
        st.markdown(
            "A trial can tell us *which patients do better on which treatment*. Publishing that "
            "rule can leak something about the patients who took part. A private rule adds "
            "carefully sized noise so no single patient's data changes it much. The question is "
            "whether the noisy rule still treats patients well: the DP-OWL page answers it in "
            "outcome points and in *out of 100 patients*."
        )
    with student:
        st.subheader("For students", anchor=False)
        st.markdown(
            "A mechanism M is ε-DP if for any two datasets that differ in one row and any set of "
            "outputs S, P[M(D) ∈ S] ≤ e^ε · P[M(D′) ∈ S]. Output perturbation solves a "
            "regularized weighted ERM exactly, then adds noise scaled to the solution's "
            "sensitivity (C + 2W)/γ: W bounds any one patient's weight, γ is the regularization, and "
            "C is 0 when the treatment probabilities are fixed by the trial's design. The pages put "
            "each term of that recipe on a slider and measure its effect by Monte Carlo."
        )
        st.page_link(
            page("lessons"),
            label="Teaching? Start with the Lessons (printable handout)",
            icon=":material/school:",
        )


def releases(eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(one release of the count at ε, 2000 possible releases), the same draws at every visit."""
    rng = np.random.default_rng(2026)
    one = TRUE_COUNT + laplace_noise(eps, 1.0, rng=rng)
    return one, TRUE_COUNT + laplace_noise(eps, 1.0, size=2000, rng=rng)


@st.fragment
@guarded("The noisy release")
def noisy_release() -> None:
    """One noisy release of a count at the ε the user moves, among the 2000 it could have been."""
    st.markdown(
        f"A trial has **{TRUE_COUNT}** responders. Replacing one patient by another changes that "
        "count by at most 1, so releasing it with Laplace noise of scale 1/ε is ε-DP."
    )
    eps = DEMO_EPS.widget()
    one, _ = releases(eps)
    left, right = st.columns([1, 2], gap="large")
    with left:
        st.metric(
            "Released count",
            f"{one:.0f}",
            f"{one - TRUE_COUNT:+.1f} noise",
            delta_color="off",
            delta_arrow="off",
        )
        half_width = laplace_interval_halfwidth(eps, 1.0, level=0.95)
        st.markdown(f"95% of releases land within **±{half_width:.1f}** of the truth.")
        st.info(explain.attacker_sentence(eps, what="the count"), icon=":material/visibility_off:")
    with right:
        show(  # every ε of the grid as a step of the chart's own slider
            figure(
                charts.noisy_count_steps,
                TRUE_COUNT,
                {e: np.round(releases(e)[1]) for e in DEMO_EPS.options},
                eps,
            ),
            key="noisy_count",
        )
        frames.follow("noisy_count", DEMO_EPS)  # a drag on the chart's slider sets ε above
        st.caption(
            "Small ε: wide spread, strong privacy. Large ε: the release is nearly exact, "
            "and nearly nothing is hidden."
        )


def pages_list() -> None:
    """A link to every page, each with one line on what it answers."""
    for path, label, icon, what in PAGES:
        st.page_link(path, label=label, icon=icon)
        st.caption(what)
