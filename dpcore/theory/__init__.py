"""Theory: the DP-wERM paper's bound and the measurements held against both papers' bounds.

- :mod:`dpcore.theory.bounds`: Theorem 10, Theorem 11, Corollary 12 (and, re-exported for the
  Theory page, the private-CVaR paper's rates of :mod:`dpcore.cvar.rates`).
- :mod:`dpcore.theory.measurement`: Monte-Carlo measurements held against those bounds.
"""
