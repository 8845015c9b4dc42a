"""Computations for a trial with more than two arms on the "Your data" page.

Two arms compared: the dictionary of those two (:meth:`dpcore.data.Dictionary.for_arms`), the
other arms' rows at weight 0 and n the file's row count; the page's two-arm steps do the rest.
A rule over all K arms: :func:`dpcore.release.release` makes it as the library and ``dpcore fit``
do (``docs/k_arm.md``), with the private evaluation on held-out patients. Uploaded bytes stay in
this session (session-scoped caches keyed by the digest, as in :mod:`dpcore_app.ui.upload.compute`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import streamlit as st

from dpcore.data import read_dictionary
from dpcore.data.dictionary.check import release_problems
from dpcore.data.trial import read_arms_trial

if TYPE_CHECKING:
    from dpcore.data.dictionary import Dictionary
    from dpcore.data.trial import Trial
    from dpcore.release import Release, ReleasePlan


def arms_of(dictionary: Mapping[str, Any] | None) -> tuple[Any, ...] | None:
    """The dictionary's arms when it lists more than two, else None (a dict or None in)."""
    if not dictionary:
        return None
    arms = read_dictionary(dictionary, strict=False).arms
    return arms if arms is not None and len(arms) > 2 else None


def two_arm_dictionary(
    dictionary: Mapping[str, Any], treated: object, control: object
) -> dict[str, Any]:
    """The dictionary (a dict) of the comparison ``treated`` against ``control``."""
    return read_dictionary(dictionary, strict=False).for_arms(treated, control).to_dict()


def missing(dictionary: Mapping[str, Any]) -> list[str]:
    """What a K-arm release still needs from the dictionary, as sentences (public)."""
    return [str(p) for p in release_problems(read_dictionary(dictionary, strict=False))]


@st.cache_data(scope="session", max_entries=4, show_spinner="Reading the trial…")
def load_arms_trial(digest: str, _data: bytes, dictionary_json: str) -> Trial:
    """read_arms_trial on the session's bytes (every row kept, n the file's row count)."""
    return read_arms_trial(_data, dictionary=json.loads(dictionary_json), unknown_levels="baseline")


def make_arms_release(data: bytes, dictionary: Dictionary, plan: ReleasePlan) -> Release:
    """The K-arm release (:func:`dpcore.release.release`, the library's and ``dpcore fit``'s)
    of ``plan`` from the dictionary, not yet recorded. Fresh noise every call (never cached)."""
    from dpcore.release import release

    return release(data, dictionary, plan)
