"""The "Your data" page's data-dependent widgets: column mapping and public bounds.

Their options are the file's own column names and labels, which are data: they are kept out of
the URL (a shared link must carry nothing from the data), so these widgets are not bound to
query parameters. Their keys carry the file's digest, so a new file starts from fresh guesses.
Column names and labels are shown as plain text (``plain``) or in dataframes, never as markup.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import streamlit as st

from dpcore.data.columns import default_treated

from .compute import upload as compute
from .safety import plain


def key(source, name):
    return f"{name}_{source.digest[:12]}"


def mapping(source, preview):
    """Treatment, treated label, outcome, covariates, categorical, propensity column."""
    cols = list(preview.columns)
    guess = compute.guesses(cols, preview.rows)

    def index(value):
        return cols.index(value) if value in cols else 0

    a, b = st.columns(2)
    with a:
        treatment = st.selectbox("Treatment column", cols, index=index(guess["treatment"]),
                                 key=key(source, "treat"), format_func=plain)
    with b:
        rest = [c for c in cols if c != treatment]
        outcome = st.selectbox("Outcome column", rest, format_func=plain, key=key(source, "outcome"),
                               index=rest.index(guess["outcome"]) if guess["outcome"] in rest else 0)
    labels = compute.arm_labels(source.digest, source.data, treatment)
    treated = None
    if len(labels) == 2:
        guessed = default_treated(labels)
        treated = st.radio("Treated arm (the rule's “treat” recommendation)", labels,
                           index=labels.index(guessed) if guessed in labels else 0,
                           horizontal=True, format_func=plain, key=key(source, "treated"))
    options = [c for c in cols if c not in (treatment, outcome)]
    covariates = st.multiselect(
        "Covariates the rule may use", options, format_func=plain, key=key(source, "covs"),
        default=[c for c in guess["covariates"] if c in options])
    categorical = st.multiselect(
        "Categorical covariates (one-hot encoded, first level is the baseline)", covariates,
        format_func=plain, key=key(source, "cats"),
        default=[c for c in guess["categorical"] if c in covariates])
    return dict(treatment=treatment, outcome=outcome, treated=treated,
                covariates=tuple(covariates), categorical=tuple(categorical))


def propensity_column(source, columns, used):
    options = [c for c in columns if c not in used]
    if not options:
        return None
    return st.selectbox("Propensity column, P(treated) per row", options, format_func=plain,
                        key=key(source, "prop"))


def _categorical_levels(source, m):
    """Public levels for categorical covariates: the dictionary's, or read from the file."""
    levels = {}
    for c in m["categorical"]:
        entry = _dictionary_column(source, c)
        levels[c] = tuple(entry["levels"]) if entry and "levels" in entry else None
    return tuple(levels.items())


def _dictionary_column(source, name):
    if not source.demo:
        return None
    return next((c for c in source.dictionary["columns"] if c["name"] == name), None)


def trial_args(source, m, propensity):
    return (source.digest, source.data, m["treatment"], m["outcome"], m["covariates"],
            _categorical_levels(source, m), propensity, m["treated"])


def d0_source(source, m):
    """The public proxy D0 for Algorithm 2: a file with the trial's columns; None until read."""
    up = st.file_uploader("Public proxy D0: a CSV with the same columns (e.g. an earlier, "
                          "published trial). Its rows spend no privacy.", type=["csv", "tsv", "txt"],
                          key="upload_d0")
    if up is None:
        st.info("Upload D0 to tune γ on it, or take γ from the paper's table.",
                icon=":material/upload_file:")
        return None
    d0 = compute.upload_source(up.name, up.getvalue())
    return SimpleNamespace(digest=d0.digest, trial=compute.load_trial(*trial_args(d0, m, None)))


# --------------------------------------------------------------------------------------------
# Public bounds


def numeric_covariates(trial):
    return list(compute.data_ranges(trial))


def fill_from_dictionary(source, names, outcome):
    """Button callback: the demo dictionary's public bounds, outcome direction and design."""
    d = source.dictionary
    st.session_state["better"] = "larger" if d["larger_is_better"] else "smaller"
    st.session_state["design"] = d["randomization"]
    for name in names + [outcome]:
        entry = _dictionary_column(source, name) or {}
        lo, hi = entry.get("bounds", (None, None))
        st.session_state[key(source, f"lo:{name}")] = lo
        st.session_state[key(source, f"hi:{name}")] = hi
    st.session_state[key(source, "from_data")] = False


def fill_from_data(source, trial):
    """Button callback: the data's own range (voids the guarantee; the page says so)."""
    ranges = {**compute.data_ranges(trial), trial.outcome: compute.outcome_range(trial)}
    for name, (lo, hi) in ranges.items():
        st.session_state[key(source, f"lo:{name}")] = lo
        st.session_state[key(source, f"hi:{name}")] = hi if hi > lo else lo + 1.0
    st.session_state[key(source, "from_data")] = True


def clear_bounds(source, names):
    for name in names:
        st.session_state[key(source, f"lo:{name}")] = None
        st.session_state[key(source, f"hi:{name}")] = None
    st.session_state[key(source, "from_data")] = False


def bound_inputs(source, name, unit=""):
    """Lower and upper public bound for one column; (lo, hi) or None while incomplete/invalid."""
    a, b = st.columns(2)
    label = plain(name) + (f" ({plain(unit)})" if unit and unit != "none" else "")
    lo = a.number_input(f"{label}: lower", value=None, key=key(source, f"lo:{name}"),
                        placeholder="public lower bound", format="%g")
    hi = b.number_input(f"{label}: upper", value=None, key=key(source, f"hi:{name}"),
                        placeholder="public upper bound", format="%g")
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    if hi <= lo:
        st.warning(plain(f"{name}: the upper bound must be above the lower bound."),
                   icon=":material/rule:")
        return None
    return float(lo), float(hi)


def bounds(source, trial):
    """Every public bound: ({covariate: (lo, hi)}, outcome (lo, hi), read_from_data) or Nones."""
    names = numeric_covariates(trial)
    a, b, c = st.columns(3)
    if source.demo:
        a.button("Fill in from the data dictionary", on_click=fill_from_dictionary,
                 args=(source, names, trial.outcome), key="fill_dictionary", type="primary",
                 help="The demo file's dictionary gives bounds, the outcome's direction and the "
                      "randomization from its design, not from its data.")
    b.button("Use the data's range", on_click=fill_from_data, args=(source, trial),
             key="fill_data", help="Reads the bounds off the data: the guarantee is then void.")
    c.button("Clear the bounds", on_click=clear_bounds, args=(source, names + [trial.outcome]),
             key="clear_bounds")
    from_data = st.session_state.get(key(source, "from_data"), False)
    if from_data:
        st.warning("These bounds were read from the data. That voids the privacy guarantee: the "
                   "release will be titled NOT PRIVATE. Enter bounds known before seeing the "
                   "data (a measuring range, an inclusion criterion) to keep it.",
                   icon=":material/gpp_bad:")
    got = {n: bound_inputs(source, n, (_dictionary_column(source, n) or {}).get("unit", ""))
           for n in names}
    if trial.categories:
        st.caption("One-hot columns need no bounds: they are 0 or 1.")
    st.markdown("**Outcome**")
    out = bound_inputs(source, trial.outcome,
                       (_dictionary_column(source, trial.outcome) or {}).get("unit", ""))
    if out is None or any(v is None for v in got.values()):
        return None, None, from_data
    return got, out, from_data
