"""What the privacy guarantee covers, and what it does not."""

import streamlit as st

from dpcore_app.ui.common.link import check_link

st.title("What the guarantee covers, and what it does not")
check_link([], page="limitations")
st.markdown(
    """
**Covered.** Each private release here is differentially private with respect to one
patient: two datasets that differ by *replacing* one row give output distributions whose
probabilities differ by a factor of at most e^ε. DP-OWL, the Laplace plug-in CVaR and the
exponential mechanism are pure ε-DP (δ = 0); the convex CVaR learner (noisy gradient descent)
is (ε, δ)-DP, with δ stated next to it. This holds whatever an attacker already knows, for the
released numbers and anything computed from them.

**Not covered.**

- **Bounds derived from the data.** Feature bounds, outcome bounds and the weight bound W
  must be fixed in advance (public). The paper's simulation shifts outcomes by the data's own
  minimum; the DP-OWL page reproduces that only as the labelled *authors' shift*, which is
  outside the guarantee. On uploaded data, "use the data's range" voids the guarantee and the
  release then says *not private*.
- **Hyper-parameters tuned on the private data.** γ, h, W and the features used must be
  chosen without looking at the sensitive data (for example with Algorithm 2 on public
  proxy data). Tuning on the private data leaks privacy that is not accounted for.
- **Several releases.** Each release spends its own ε; releasing k rules from the same
  patients costs up to k·ε in total. The sidebar's privacy ledger adds up, per file, the
  releases made with this app's ledger file over every session and restart (basic
  composition; a release made of disjoint parts counts its largest part). It knows a file
  by all its rows (a salted digest per row, whatever columns a release uses), so the same
  trial re-saved (another delimiter, encoding, row order, line ends, column names, label case,
  yes/no for 1/0) is the same dataset, a cap on the file binds every release from it, and a
  file sharing rows with an earlier one is charged to both. It cannot know about releases
  made elsewhere, or about patients whose rows differ in a cell (an edited value, a dropped
  column). A release without a guarantee (NOT PRIVATE, or with a fixed seed) makes the
  dataset's total "no guarantee".
- **Estimated propensities.** Weights that use a propensity model fitted on the same data
  are covered only with C = "worst-case" (n·W); the paper's C = H/n assumes large n and a
  stability constant H that is right, and the code warns when it is used.
- **Floating-point noise.** Noise is sampled in floating point, which has known theoretical
  side channels (Mironov 2012). Fine for teaching and analysis, not a hardened deployment.
  On uploaded data the private evaluation's Laplace noise is drawn with OpenDP's
  floating-point-safe sampler, centred at zero, and then added to the clipped sums in numpy's
  floating point: OpenDP's protection covers the draw, not that addition, whose last-bit
  rounding depends on the data. The rule's own noise (a Gamma radius and a uniform
  direction) is numpy's.
- **Exactness of the solver.** The proof is about the exact minimiser. The solver stops at a
  gradient norm of 10⁻⁹ and refuses to release above 10⁻⁶; a point with gradient norm g lies
  within g/γ of the minimiser, so the sensitivity used for the noise includes 2·10⁻⁶/γ of
  slack and the guarantee holds for what is actually released.
- **Side channels.** Timing, memory use and error messages are not protected. Diagnostics
  computed on uploaded data (the share of clipped weights, iteration counts, the comparison
  with the non-private rule) are analyst-only and never part of a release or a download.
- **Group privacy.** Families or repeated visits that span several rows are protected only
  at k·ε for a group of k rows.
- **Downloaded files stay on the server for a while.** A download (the per-row file holds
  your patients' rows) is built when you click it and then sits in the server's memory at its
  /media address until the server has finished two more page runs, in any session: Streamlit
  ties such a file to no session, marks it at the end of the next run and deletes it at the
  end of the one after. Closing the tab does not remove it, and neither does
  `server.disconnectedSessionTTL` (the closed session's end starts no clean-up), so on a
  server nobody else is using it stays until someone runs a page or the server restarts.
  While your tab is open, your next two clicks on the page remove it. Removing it sooner
  would take Streamlit's private runtime; the address is unguessable, so share the files,
  never the links.
"""
)
