"""Tail risk: empirical and private CVaR and private CVaR learning (the private-CVaR paper).

- :mod:`dpcore.cvar.estimation`: exact CVaR, its sensitivity and the Laplace plug-in.
- :mod:`dpcore.cvar.learning`: the exponential mechanism over a finite class and DP-GD on the
  Rockafellar-Uryasev lift with Gaussian-DP accounting.
- :mod:`dpcore.cvar.experiments`: the Monte-Carlo studies the dashboard draws.
"""

from .estimation import cvar_sensitivity, empirical_cvar, empirical_var, private_cvar
from .learning import dp_gd_cvar, private_select

__all__ = [
    "cvar_sensitivity",
    "dp_gd_cvar",
    "empirical_cvar",
    "empirical_var",
    "private_cvar",
    "private_select",
]
