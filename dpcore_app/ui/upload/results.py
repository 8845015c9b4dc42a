"""The "Your data" page's release parts: the three downloads and the analyst-only view.

Downloads hold the release and its public settings only, built once from the values captured
with the release (``compute.Released``), never from the page's current settings; the
analyst-only view (the comparison with the non-private rule, clipped weights, solver
diagnostics) is computed on the sensitive data and appears only on screen, inside the
expander titled as analyst-only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st

from dpcore.owl.evaluation_result import ArmsEvaluation
from dpcore_app.ui.common.figures import show
from dpcore_app.ui.common.safety import log_withheld, plain
from dpcore_app.ui.upload import analyst_panels, charts, compute, explain, files, preview_charts
from dpcore_app.ui.upload.explain import DOWNLOAD_WINDOW
from dpcore_app.ui.upload.form import keep, kept

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from dpcore.owl.evaluation_result import PrivateEvaluation
    from dpcore_app.ui.common.demos import Source
    from dpcore_app.ui.upload.release import Release, Released

COMPARE = "your_data_compare"


def _two_arms(released: Released) -> tuple[np.ndarray, PrivateEvaluation | None]:
    """What this module shows of a rule between two arms: its recommendation for every row of
    the file, and its private evaluation (or None). A rule over all K arms has no per-row
    recommendations (:func:`dpcore_app.ui.upload.karm.arms_result` shows it)."""
    rec, evaluation = released.rec, released.evaluation
    assert rec is not None and not isinstance(evaluation, ArmsEvaluation)
    return rec, evaluation


def analyst_panel(released: Released) -> None:
    """The analyst-only view: the solver's diagnostics, and on request the comparison with the
    non-private rule (one more fit on the sensitive data, shown on screen only)."""
    diagnostics = released.diagnostics
    if diagnostics:  # DP-OWL's solver (the plug-in rule has none)
        st.markdown(
            f"- Weights clipped at W: **{100 * diagnostics['clipped_share']:.1f}%** of rows\n"
            f"- Solver: {diagnostics['n_iter']} iterations, gradient norm "
            f"{diagnostics['grad_norm']:.1e}"
        )
    if st.button("Compare with the non-private rule (one more fit on your data)", key="compare"):
        st.session_state[COMPARE] = (
            released.release,
            compute.compare_nonprivate(released.release.made, _two_arms(released)[0]),
        )
    shown, view = st.session_state.get(COMPARE, (None, None))
    if shown is released.release:
        st.markdown(
            f"- Estimated value (IPW) of the private rule: **{view.value_private:.3g}**, "
            f"of the non-private rule: **{view.value_nonprivate:.3g}** (outcome units)\n"
            f"- The private rule agrees with the non-private one for "
            f"**{100 * view.agreement['concordance']:.1f}%** of patients "
            f"(Cohen's κ = {view.agreement['kappa']:.2f})"
        )


class Failed(str):
    """A download that could not be built: the error's type (its message may quote data)."""


def built(released: Released, name: tuple[Any, ...], build: Callable[[], str]) -> str:
    """A download's content, built once per release (and identifier choice), or Failed."""
    if name not in released.files:
        try:
            released.files[name] = build()
        except Exception as exc:  # noqa: BLE001 - said on the page, logged without the message
            log_withheld(f"The download {name[0]!r}", exc)
            released.files[name] = Failed(type(exc).__name__)
    return released.files[name]


def _figure(release: Release) -> go.Figure:
    return charts.rule_effects(release.names, release.effects(), release.treated, release.control)


def identifier_choice(released: Released, source: Source) -> tuple[str, ...]:
    """Which columns the per-row file carries as identifiers: only those the analyst ticks."""
    columns = compute.preview(source.digest, source.data).columns
    options, ticked = compute.id_options(columns, released.columns)
    if not options:  # every column has a role: nothing to choose
        return ()
    k = f"ids_{source.digest[:12]}"
    return tuple(
        kept(
            k,
            st.multiselect(
                "Identifier columns written into the per-row file (only these; ID-like names start ticked)",
                options,
                default=None if keep(k, options, many=True) else list(ticked),
                key=k,
            ),
        )
    )


#: Above this many rows the per-row file is built when the analyst asks (seconds at 10^6).
EAGER_ROWS = 50_000


def downloads_panel(released: Released, source: Source) -> None:
    """The rule file, the per-row file (built on request above :data:`EAGER_ROWS` rows) and the
    report, each built once from the values captured with the release; then the rerun script."""
    release, trial = released.release, released.trial
    rec, ev = _two_arms(released)
    data_rows = trial.rows
    assert data_rows is not None  # a trial read from a file knows each row's line in it
    ids = identifier_choice(released, source)
    rule = built(released, ("rule",), lambda: files.rule_json(release))
    report = built(
        released,
        ("report",),
        lambda: files.report_html(
            release, _figure(release), ev, _preview_section(released.preview)
        ),
    )
    name = ("rows", ids)
    if (
        name in released.files
        or trial.n <= EAGER_ROWS
        or st.button(
            f"Prepare the per-row file ({trial.n:,} rows, a few seconds)", key="prepare_rows"
        )
    ):
        rows = built(
            released,
            name,
            lambda: files.rows_csv(
                release, trial, rec, compute.identifiers(source.data, ids, data_rows)
            ),
        )
    else:
        rows = None
    marker = "" if release.private else "_NOT_PRIVATE"
    a, b, c = st.columns(3)
    for column, content, label, name, mime, wkey in (
        (a, rule, "Rule (JSON)", f"private_rule{marker}.json", "application/json", "dl_rule"),
        (
            b,
            rows,
            "Per-row recommendations (CSV)",
            f"recommendations{marker}.csv",
            "text/csv",
            "dl_rows",
        ),
        (
            c,
            report,
            "Report (HTML, opens offline)",
            f"private_rule_report{marker}.html",
            "text/html",
            "dl_report",
        ),
    ):
        if content is None:
            continue
        if isinstance(content, Failed):
            column.error(
                plain(
                    f"The {label} download could not be built ({content}); the other "
                    "files are fine. Release again, or report the problem."
                ),
                icon=":material/error:",
            )
            continue
        # Built in the script run above; the button only hands the captured bytes over.
        column.download_button(
            label,
            _handed(content),
            name,
            mime,
            key=wkey,
            on_click="ignore",
            width="stretch",
        )
    st.caption(DOWNLOAD_WINDOW)
    analyst_panels.script_download(released)


def _handed(content: str) -> Callable[[], str]:
    """A download's content as the button takes it: handed over on the click, as built."""
    return lambda: content


def _preview_section(preview: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The preview the analyst saw before the release, for the report (simulated, public)."""
    if preview is None:
        return None
    figure = preview_charts.agreement_curve(preview["frame"], preview["eps"], preview["target"])
    learners = preview_charts.learners_curve(preview["frame"], preview["strength"], preview["eps"])
    return dict(preview, figure=figure, learners=learners)


def result_panel(
    released: Released, source: Source, files: Callable[[], None] | None = None
) -> None:
    """The release on screen, then its downloads; ``files`` (optional) is called first, to
    move the page to where the downloads go (the page's "Files" step)."""
    release, trial = released.release, released.trial
    rec, evaluation = _two_arms(released)
    st.subheader(release.title(), anchor=False)
    st.markdown(plain(explain.rule_sentence(release)))
    scored = rec if trial.covariates_complete is None else rec[trial.covariates_complete]
    treated, n = int((scored > 0).sum()), len(scored)
    a, b = st.columns(2)
    a.metric(
        plain(f"Recommended {release.treated}"),
        f"{100 * treated / n:.1f}%",
        explain.patients(treated, n),
        delta_color="off",
        delta_arrow="off",
    )
    b.metric(
        plain(f"Recommended {release.control}"),
        f"{100 * (1 - treated / n):.1f}%",
        explain.patients(n - treated, n),
        delta_color="off",
        delta_arrow="off",
    )
    st.caption(
        "Shares counted on your uploaded patients with every covariate: the count is not "
        "covered by ε, so it is for you, not for the report."
    )
    st.info(explain.release_statement(release), icon=":material/shield_lock:")
    show(  # its numbers are the released rule's, in the rule file (JSON)
        _figure(release),
        key="rule_effects",
        numbers=False,
    )
    st.caption(
        "Each bar is how much the rule's score moves when that covariate goes from its "
        "lower to its upper public bound; the longest bars drive the recommendation."
    )
    if evaluation is not None:
        analyst_panels.evaluation_panel(
            evaluation,
            release.epsilon,
            release.n,
            (released.preview or {}).get("unit", ""),
        )
    with st.expander("Analyst only: computed on your data, NOT private, never in a download"):
        analyst_panel(released)
    if files is not None:
        files()
    downloads_panel(released, source)
