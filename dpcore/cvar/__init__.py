"""Tail risk: empirical and private CVaR and private CVaR learning (the private-CVaR paper).

- :mod:`dpcore.cvar.estimation`: exact CVaR, its sensitivity and the Laplace plug-in.
- :mod:`dpcore.cvar.learning`: the exponential mechanism over a finite class and DP-GD on the
  Rockafellar-Uryasev lift with Gaussian-DP accounting.
- :mod:`dpcore.cvar.rates`: the paper's rates and bounds (the Theory page draws them too).
- :mod:`dpcore.cvar.constructions`: the paper's hard instances and the demos' loss laws.
- The Monte-Carlo studies the dashboard draws: :mod:`dpcore.cvar.sweep` (scalar estimation),
  :mod:`dpcore.cvar.learning_study` (a finite class, convex learning) and
  :mod:`dpcore.cvar.tail_risk` (a private treatment rule's tail risk).
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
