"""The "Your data" page's panels of the public data dictionary: uploading one (kept in this
session while the analyst visits other pages), downloading the one the page's settings make, the
0/1 columns it and the one-hot coding name, and the check, before the release button, that the
public bounds fit the data's units. A dictionary holds public metadata only; the one fact about
the sensitive data here (which columns fall outside their bounds) is shown, never downloaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import streamlit as st

from dpcore import read_dictionary
from dpcore._estimator import CLIPPED_SHARE_WARNING
from dpcore.data.dictionary import DictionaryError
from dpcore_app.ui.common.safety import plain
from dpcore_app.ui.upload import analyst_explain as explain

if TYPE_CHECKING:
    from dpcore.data.dictionary import Dictionary
    from dpcore.data.trial import Trial


#: The uploaded dictionary, kept in this session while the analyst visits other pages.
DICTIONARY = "your_data_dictionary"


def _forget_dictionary() -> None:
    st.session_state.pop(DICTIONARY, None)


def dictionary_uploader(key: str = "dictionary_upload") -> Dictionary | None:
    """An optional public data dictionary (JSON or CSV); returns a Dictionary or None.

    It is kept in this session's state (as the trial's CSV is), so returning to the page
    from another one finds it again, said as such, with a button to forget it."""
    up = st.file_uploader(
        "Public data dictionary (optional: JSON or CSV with column, role, type, "
        "lower, upper, levels, unit)",
        type=["json", "csv"],
        key=key,
        on_change=_forget_dictionary,
    )
    st.caption(
        "A dictionary fills the roles, types, levels, bounds and design from the protocol. "
        "It holds public metadata only; nothing in it is read from your data."
    )
    kept = st.session_state.get(DICTIONARY)
    if up is not None and (kept is None or kept[0] != up.file_id):
        try:
            d = read_dictionary(up.getvalue(), strict=False)
        except DictionaryError as exc:  # nothing of it could be read (not JSON, no header row)
            st.error(plain(exc), icon=":material/error:")
            return None
        kept = (up.file_id, up.name, d)
        st.session_state[DICTIONARY] = kept
    if kept is None:
        return None
    if up is None:
        st.caption(
            plain(
                f"Using the dictionary {kept[1]}, uploaded earlier in this session; upload "
                "another to replace it."
            )
        )
        st.button("Forget this dictionary", on_click=_forget_dictionary, key="forget_dictionary")
    d = kept[2]
    if d.problems:
        # the valid entries are used; each invalid one is listed with its fix and left empty
        # in the table below, which then asks for it
        lines = "\n".join(f"- {plain(str(p))}" for p in d.problems)
        st.warning(
            f"{len(d.problems)} entries of the dictionary were left out; the rest is "
            f"used. Fix these and upload it again:\n{lines}",
            icon=":material/warning:",
        )
    return d


def dictionary_downloads(dictionary: Dictionary, stem: str = "trial") -> None:
    """'Download this dictionary' as JSON and as CSV, so the next release starts filled."""
    a, b = st.columns(2)
    a.download_button(
        "Download this dictionary (JSON)",
        dictionary.to_json(),
        f"{stem}_dictionary.json",
        "application/json",
        key="dl_dict_json",
        on_click="ignore",
        width="stretch",
    )
    b.download_button(
        "Download this dictionary (CSV)",
        dictionary.to_csv(),
        f"{stem}_dictionary.csv",
        "text/csv",
        key="dl_dict_csv",
        on_click="ignore",
        width="stretch",
    )


def binary_flags(
    names: Iterable[str],
    categories: Mapping[str, Sequence[Any]],
    dictionary: Dictionary | None = None,
) -> tuple[bool, ...]:
    """Which covariate columns are 0/1: one-hot columns, and the dictionary's binary columns."""
    dummies = {f"{c}={lev}" for c, levels in categories.items() for lev in levels[1:]}
    binary: set[str] = set()
    if dictionary is not None:
        binary = {c.name for c in dictionary.columns if c.type == "binary"}
    return tuple(n in dummies or n in binary for n in names)


def units_check(trial: Trial, settings: Mapping[str, Any]) -> tuple[bool, tuple[str, ...]]:
    """Analyst only, before the release button: the columns with more than
    ``CLIPPED_SHARE_WARNING`` of their values outside the public bounds (bounds in other units
    than the data, or too narrow), and the analyst's confirmation that they are right.

    Returns
    -------
    (ready, columns): whether the release may go ahead, and the columns confirmed (empty
    when nothing needed confirming). A fact about the sensitive data: shown here, never in a
    download.
    """
    shares = trial.outside_bounds(settings["bounds"], settings["outcome_bounds"])
    wide = {c: s for c, s in shares.items() if s > CLIPPED_SHARE_WARNING}
    if not wide:
        return True, ()
    st.warning(
        plain(explain.outside_bounds(wide, CLIPPED_SHARE_WARNING)), icon=":material/straighten:"
    )
    # confirmed for these bounds: new bounds (or other columns outside them) ask again
    seen = (sorted(settings["bounds"].items()), settings["outcome_bounds"], sorted(wide))
    digest = hashlib.sha256(repr(seen).encode()).hexdigest()[:12]
    confirmed = st.checkbox(
        "The bounds are right: release with these values clipped to them",
        key=f"units_confirmed_{digest}",
    )
    return confirmed, tuple(wide) if confirmed else ()
