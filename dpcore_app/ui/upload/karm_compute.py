"""Computations for a trial with more than two arms on the "Your data" page.

Two arms compared: the dictionary of those two (:meth:`dpcore.data.Dictionary.for_arms`), the
other arms' rows at weight 0 and n the file's row count; the page's two-arm steps do the rest.
A rule over all K arms: :class:`dpcore.owl.karm.KArmOWL` (``docs/k_arm.md``), with the private
evaluation on held-out patients of :mod:`dpcore.owl.evaluation_arms`. Uploaded bytes stay in
this session (session-scoped caches keyed by the digest, as in :mod:`dpcore_app.ui.upload.compute`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import streamlit as st

from dpcore.data import read_dictionary
from dpcore.data.dictionary_check import release_problems
from dpcore.data.trial import read_arms_trial


def arms_of(dictionary):
    """The dictionary's arms when it lists more than two, else None (a dict or None in)."""
    if not dictionary:
        return None
    arms = read_dictionary(dictionary, strict=False).arms
    return arms if arms is not None and len(arms) > 2 else None


def two_arm_dictionary(dictionary, treated, control):
    """The dictionary (a dict) of the comparison ``treated`` against ``control``."""
    return read_dictionary(dictionary, strict=False).for_arms(treated, control).to_dict()


def missing(dictionary):
    """What a K-arm release still needs from the dictionary, as sentences (public)."""
    return [str(p) for p in release_problems(read_dictionary(dictionary, strict=False))]


@st.cache_data(scope="session", max_entries=4, show_spinner="Reading the trial…")
def load_arms_trial(digest, _data, dictionary_json):
    """read_arms_trial on the session's bytes (every row kept, n the file's row count)."""
    return read_arms_trial(_data, dictionary=json.loads(dictionary_json), unknown_levels="baseline")


@dataclass
class ArmsReleased:
    """A K-arm release kept in the session: the rule file's dict, and the key it was made for."""

    key: str
    rule: dict
    title: str
    epsilon: float
    evaluation: object
    receipt: object


def fit_arms_release(trial, dictionary, eps, evaluate):
    """The K-arm rule (and its evaluation when ``evaluate``): (rule dict, title, evaluation).

    Called after the ledger recorded the spend. Fresh noise every call (no seed, never cached).
    """
    from dpcore.owl.evaluation_arms import fit_and_evaluate_arms
    from dpcore.owl.karm import KArmOWL
    from dpcore.owl.release import rule_from_karm

    d = read_dictionary(dictionary, strict=False)
    kw = dict(
        outcome_bounds=d.outcome_bounds,
        larger_is_better=bool(d.larger_is_better),
        feature_bounds=trial.feature_bounds(d.bounds),
        reference=d.extra.get("reference"),
    )
    rng = np.random.default_rng()
    evaluation, n = None, trial.n
    if evaluate:
        # OpenDP's floating-point-safe Laplace sampler on uploaded data, as for two arms
        model, evaluation, (fit_rows, _) = fit_and_evaluate_arms(
            trial, epsilon_fit=eps, epsilon_eval=eps, rng=rng, sampler=_sampler(), **kw
        )
        n = len(fit_rows)
    else:
        model = KArmOWL(epsilon=eps, rng=rng, **kw).fit_trial(trial)
    released = rule_from_karm(model, trial, n=n, gamma_source="the paper's table scaled by W")
    rule = released.to_dict()
    if evaluation is not None:
        rule["evaluation"] = evaluation.to_dict()
    return rule, released.settings["title"], evaluation


def _sampler():
    import importlib.util

    return "opendp" if importlib.util.find_spec("opendp") is not None else "numpy"
