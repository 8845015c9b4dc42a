"""The "Your data" page for a trial with more than two arms (the dictionary lists K > 2).

Step 2 asks whether to compare two of the arms (then the page's two-arm steps run on the
dictionary of those two, the other arms' rows at weight 0 and n the file's row count) or to
release a rule over all K arms (the same steps, with every setting from the dictionary; its
result is shown by :func:`arms_result`). The arm
labels are the dictionary's, public; the widgets are keyed by the file's digest and kept out
of the URL like the page's other file-dependent widgets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import streamlit as st

from dpcore.owl.rule_file import write_rule
from dpcore_app.ui.common.safety import plain
from dpcore_app.ui.upload import karm_compute as compute
from dpcore_app.ui.upload.analyst_panels import script_download

if TYPE_CHECKING:
    from dpcore_app.ui.common.demos import Source
    from dpcore_app.ui.upload.release import Released

MODES = ("two", "all")


def arms_choice(source: Source) -> tuple[Source | None, str | None]:
    """(source, mode): the source with a two-arm dictionary when two arms are compared;
    mode "all" for a rule over every arm, None otherwise (a two-arm trial)."""
    arms = compute.arms_of(source.dictionary)
    if arms is None:
        return source, None
    k = len(arms)
    st.subheader(f"A trial with {k} arms", anchor=False)
    mode = st.radio(
        # the labels are the dictionary's text: shown as text (an image link is never fetched)
        f"The dictionary lists {k} arms: {plain(', '.join(map(str, arms)))}",
        MODES,
        format_func={
            "two": "compare two arms (the others' rows get weight 0)",
            "all": f"a rule over all {k} arms",
        }.get,
        key=f"arms_mode_{source.digest[:12]}",
        horizontal=True,
    )
    if mode == "all":
        return source, "all"
    a, b = st.columns(2)
    treated = a.selectbox(
        "Treated arm", arms, index=1, format_func=plain, key=f"arms_treated_{source.digest[:12]}"
    )
    control = b.selectbox(
        "Compared with", arms, index=0, format_func=plain, key=f"arms_control_{source.digest[:12]}"
    )
    if treated == control:
        st.warning("Choose two different arms.", icon=":material/rule:")
        return None, None
    st.caption(
        f"n stays the file's {k}-arm row count: the rows of the other arms are kept at "
        "weight 0, so replacing any one patient is covered by the same ε."
    )
    if source.dictionary is None:  # arms_of found the arms in it: never None here
        raise TypeError("a trial's arms come from its data dictionary")
    return replace(
        source, dictionary=compute.two_arm_dictionary(source.dictionary, treated, control)
    ), None


def arms_result(last: Released, files: Callable[[], None]) -> None:
    """A rule over all K arms on screen: its scores and its private evaluation, then (after
    ``files()`` moves the page to the "Files" step) the rule file and the rerun script."""
    rule = last.release.to_dict()
    title = last.release.title()
    st.subheader(plain(title), anchor=False)
    st.markdown(plain(rule["rule"]))
    st.dataframe(
        [
            {
                "arm": s["arm"],
                "intercept": s["intercept"],
                **dict(zip(rule["covariates"], s["coef"])),
            }
            for s in rule["scores"]
        ],
        hide_index=True,
        width="stretch",
    )
    if last.evaluation is not None:
        st.info(plain(last.evaluation.summary()), icon=":material/balance:")
    files()
    st.download_button(
        "Rule (JSON)",
        write_rule(rule, None),
        "private_rule_k_arms.json",
        "application/json",
        key="dl_rule",
        on_click="ignore",
    )
    script_download(last)
