"""The floor for a page's first chart: a bare Streamlit page with four Plotly charts.

    streamlit run benchmarks/bare_charts.py

``benchmarks/first_chart.py`` measures it beside the dashboard's pages in the same run.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(layout="wide")
st.title("Four charts")
x = np.arange(15)
for k, column in enumerate(st.columns(2) + st.columns(2)):
    fig = go.Figure(go.Scatter(x=x, y=np.sin(x + k), mode="lines+markers"))
    fig.update_layout(height=380, title=f"chart {k + 1}")
    column.plotly_chart(fig, width="stretch", key=f"c{k}")
