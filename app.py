"""`streamlit run app.py` from a checkout: the dashboard's entry script is dpcore_app/app.py."""

from dpcore_app.app import main

main()
