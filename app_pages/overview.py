import streamlit as st

st.title("What does differential privacy cost in learning?")
st.write("The dashboard's pages are being built; the science core `dpcore` is ready to use.")
