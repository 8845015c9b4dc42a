"""What the privacy guarantee covers, and what it does not."""

import streamlit as st

from ui.controls import check_link

st.title("What the guarantee covers, and what it does not")
check_link([])
st.markdown(
    """
**Covered.** Each private release here is ε-differentially private with respect to one
patient: two datasets that differ by *replacing* one row give output distributions whose
probabilities differ by a factor of at most e^ε (δ = 0 for DP-OWL). This holds whatever an
attacker already knows, for the released coefficients and anything computed from them.

**Not covered.**

- **Bounds derived from the data.** Feature bounds, outcome bounds and the weight bound W
  must be fixed in advance (public). The paper's simulation shifts outcomes by the data's own
  minimum; the dashboard reproduces that as the labelled *paper's preprocessing*, which is
  outside the guarantee.
- **Hyper-parameters tuned on the private data.** γ, h, W and the features used must be
  chosen without looking at the sensitive data (for example with Algorithm 2 on public
  proxy data). Tuning on the private data leaks privacy that is not accounted for.
- **Several releases.** Each release spends its own ε; releasing k rules from the same
  patients costs up to k·ε in total.
- **Estimated propensities.** Weights that use a propensity model fitted on the same data
  need the paper's constant C > 0; the guarantee assumes the model's stability constant H is
  right.
- **Floating-point noise.** Noise is sampled in floating point, which has known theoretical
  side channels (Mironov 2012). Fine for teaching and analysis, not a hardened deployment.
- **Exactness of the solver.** The sensitivity bound assumes the exact minimiser; the solver
  stops only when the gradient norm is below 1e-9 and otherwise refuses to release.
- **Side channels.** Timing, memory use and error messages are not protected.
- **Group privacy.** Families or repeated visits that span several rows are protected only
  at k·ε for a group of k rows.
"""
)
