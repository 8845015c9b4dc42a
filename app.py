"""Entry point: `streamlit run app.py`."""

import streamlit as st

st.set_page_config(page_title="What privacy costs in learning", page_icon=":material/shield:",
                   layout="wide")

pages = [
    st.Page("app_pages/overview.py", title="Overview", icon=":material/home:", default=True),
]
st.navigation(pages).run()
