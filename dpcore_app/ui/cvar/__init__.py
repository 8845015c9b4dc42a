"""The CVaR page: its computations, charts, sentences and handout."""
