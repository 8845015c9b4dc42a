"""The "Your data" page for a trial with more than two arms (the dictionary lists K > 2).

Step 2 asks whether to compare two of the arms (then the page's two-arm steps run on the
dictionary of those two, the other arms' rows at weight 0 and n the file's row count) or to
release a rule over all K arms (steps 3 to 5 below: ε, the release, the rule file). The arm
labels are the dictionary's, public; the widgets are keyed by the file's digest and kept out
of the URL like the page's other file-dependent widgets.
"""

from __future__ import annotations

import json
from dataclasses import replace

import streamlit as st

from dpcore_app.ui.common import ledger
from dpcore_app.ui.common.explain import epsilon_note
from dpcore_app.ui.common.safety import plain
from dpcore_app.ui.upload import karm_compute as compute
from dpcore_app.ui.upload.controls import EPS

RELEASE = "your_data_karm_release"
MODES = ("two", "all")


def arms_choice(source):
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
    return replace(
        source, dictionary=compute.two_arm_dictionary(source.dictionary, treated, control)
    ), None


def k_arm_steps(source, verdict, flow):
    """Steps 2 (the dictionary's metadata) to 5 (the rule file) of a rule over all K arms."""
    d = source.dictionary
    needed = compute.missing(d)
    if needed:
        st.info(
            plain("Still needed in the data dictionary: " + "; ".join(needed[:5])),
            icon=":material/rule:",
        )
        return verdict.info(
            "A rule over all arms takes every bound, the outcome's direction and "
            "the arms' design probabilities from the data dictionary.",
            icon=":material/rule:",
        )
    trial = compute.load_arms_trial(source.digest, source.data, json.dumps(d, sort_keys=True))
    key = ledger.dataset_key(source, name=source.name)
    flow.has(1, f"{source.name}; " + _spend(key))
    flow.has(
        2,
        f"n = {trial.n}, {len(trial.arms)} arms, {len(trial.covariates)} covariates, "
        "every bound from the dictionary",
    )
    flow.at(3)
    st.subheader("Privacy", anchor=False)
    eps = EPS.widget()
    evaluate = st.checkbox(
        "Evaluate the rule on held-out patients (a public 80/20 split; "
        "costs ε on the held-out 20%, in parallel with the fit)",
        key="arms_evaluate",
    )
    k = len(trial.arms)
    st.caption(
        f"The rule is {k - 1} comparisons of each arm with the reference arm, each "
        f"released at ε/{k - 1} = {eps / (k - 1):.3g}; together they spend ε = {eps:g} "
        "(basic composition: every comparison reads the same patients)."
    )
    flow.has(3, f"ε = {eps:g}" + (" with a private evaluation" if evaluate else ""))
    flow.at(4)
    rkey = f"{source.digest}:{eps}:{evaluate}"
    if st.button(
        f"Release the private rule over {k} arms at ε = {eps:g}", type="primary", key="release_arms"
    ):
        with st.spinner("Fitting the rules and adding their noise…"):
            made = compute.make_arms_release(source.data, d, eps, evaluate)
        # Recorded before anything of it is shown; past the cap it is dropped unseen.
        recorded = ledger.record(key, made, "Your data")
        if isinstance(recorded, str):
            st.error(recorded, icon=":material/block:")
            return None
        made, receipt = recorded
        rule, title, evaluation = made.to_dict(), made.title, made.evaluation
        st.session_state[RELEASE] = compute.ArmsReleased(
            rkey, rule, title, eps, evaluation, receipt
        )
        st.rerun()
    last = st.session_state.get(RELEASE)
    if last is None or last.key != rkey:
        return verdict.info(
            f"A rule over {k} arms can be released at ε = {eps:g}.", icon=":material/check_circle:"
        )
    verdict.info(
        f"{last.title}. {ledger.release_number(last.receipt)} {epsilon_note(last.epsilon)}",
        icon=":material/verified_user:",
    )
    st.subheader(plain(last.title), anchor=False)
    st.markdown(plain(last.rule["rule"]))
    st.dataframe(
        [
            {
                "arm": s["arm"],
                "intercept": s["intercept"],
                **dict(zip(last.rule["covariates"], s["coef"])),
            }
            for s in last.rule["scores"]
        ],
        hide_index=True,
        width="stretch",
    )
    if last.evaluation is not None:
        st.info(plain(last.evaluation.summary()), icon=":material/balance:")
    flow.has(4, f"{last.title}, recorded as no. {last.receipt.index} in the ledger")
    flow.at(5)
    st.download_button(
        "Rule (JSON)",
        json.dumps(last.rule, indent=2, ensure_ascii=False),
        "private_rule_k_arms.json",
        "application/json",
        key="dl_rule_arms",
        on_click="ignore",
    )
    flow.has(5, "the rule file")
    return None


def _spend(key):
    from dpcore_app.ui.upload.steps import spend_text

    return spend_text(*ledger.standing(key))
