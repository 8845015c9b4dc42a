"""Lessons."""
import streamlit as st

st.title("Lessons")
