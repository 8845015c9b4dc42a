"""Theory: both papers' bounds and rates, and their measurement against the mechanisms.

- :mod:`dpcore.theory.bounds`: Theorem 10, Theorem 11, Corollary 12 and the CVaR rates.
- :mod:`dpcore.theory.measurement`: Monte-Carlo measurements held against those bounds.
"""
