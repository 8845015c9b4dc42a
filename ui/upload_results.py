"""The "Your data" page's release parts: the three downloads and the analyst-only view.

Downloads hold the release and its public settings only; the analyst-only view (the
comparison with the non-private rule, clipped weights, solver diagnostics) is computed on the
sensitive data and appears only on screen, inside the expander titled as analyst-only.
"""

from __future__ import annotations

import streamlit as st

from .charts import upload as charts
from .compute import upload as compute
from .compute import upload_files as files

COMPARE = "your_data_compare"


def analyst_panel(release, rec, diagnostics, settings, trial):
    st.markdown(f"- Weights clipped at W: **{100 * diagnostics['clipped_share']:.1f}%** of rows\n"
                f"- Solver: {diagnostics['n_iter']} iterations, gradient norm "
                f"{diagnostics['grad_norm']:.1e}")
    if st.button("Compare with the non-private rule (one more fit on your data)", key="compare"):
        st.session_state[COMPARE] = (release, compute.compare_nonprivate(trial, rec, **settings))
    shown, view = st.session_state.get(COMPARE, (None, None))
    if shown is release:
        st.markdown(f"- Estimated value (IPW) of the private rule: **{view.value_private:.3g}**, "
                    f"of the non-private rule: **{view.value_nonprivate:.3g}** (outcome units)\n"
                    f"- The private rule agrees with the non-private one for "
                    f"**{100 * view.agreement['concordance']:.1f}%** of patients "
                    f"(Cohen's κ = {view.agreement['kappa']:.2f})")


def downloads_panel(release, rec, trial, source):
    columns = compute.preview(source.digest, source.data).columns
    ids = compute.id_columns(columns, (trial.treatment, trial.outcome, trial.propensity_column))
    id_values = compute.identifiers(source.digest, source.data, ids, tuple(trial.rows))
    a, b, c = st.columns(3)
    a.download_button("Rule (JSON)", files.rule_json(release), "private_rule.json",
                      "application/json", key="dl_rule", on_click="ignore", width="stretch")
    # Deferred downloads run outside the script thread: they may not call session caches.
    b.download_button("Per-row recommendations (CSV)",
                      lambda: files.rows_csv(release, trial, rec, id_values),
        "recommendations.csv", "text/csv", key="dl_rows", on_click="ignore", width="stretch")
    c.download_button("Report (HTML, opens offline)", lambda: files.report_html(
        release, charts.rule_effects(release.names, release.effects(), release.treated,
                                     release.control)),
        "private_rule_report.html", "text/html", key="dl_report", on_click="ignore", width="stretch")
    st.caption("Share the rule file and the report. The per-row file holds your patients' rows: "
               "keep it as you keep the data.")
