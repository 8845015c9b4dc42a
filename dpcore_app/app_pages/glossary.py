"""Glossary: every symbol and term the pages show, in one place."""

import streamlit as st

from dpcore_app.ui.common import glossary
from dpcore_app.ui.common.link import check_link

st.title("Glossary")
check_link([], page="glossary")
st.markdown(
    "Every symbol and term the pages show, in words. Each page's “What the words mean” "
    "expander shows its own share of this list."
)
st.markdown(glossary.markdown())
