"""Overview: what the dashboard is for, one live example of a noisy release, links to every page."""

import streamlit as st

from dpcore_app.ui.common import glossary
from dpcore_app.ui.common.link import check_link
from dpcore_app.ui.overview.panels import DEMO_EPS, audiences, noisy_release, pages_list

st.title("What does differential privacy cost in learning?")
check_link([DEMO_EPS], page="overview")
st.markdown(
    "Differential privacy (DP) lets you publish what a dataset teaches (a count, a model, a "
    "treatment rule) while limiting what anyone can learn about a single person in it. The "
    "price is noise, and this dashboard shows how much noise costs, live, as you move the "
    "privacy budget **ε** and the sample size **n**."
)
audiences()

st.divider()
st.subheader("Try it: one noisy release", anchor=False)
noisy_release()
glossary.panel(("epsilon", "Laplace", "n"))

st.divider()
st.subheader("Pages", anchor=False)
pages_list()
