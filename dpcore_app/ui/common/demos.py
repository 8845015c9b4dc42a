"""The shipped demo trials (practice data, public): each CSV with its data dictionary, held
in memory as a :class:`Source`, the form an uploaded file takes too."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import streamlit as st

from dpcore_app import APP_DIR

DEMO_DIR = APP_DIR / "demo_data"
DEMOS = ("paper_trial", "hospital_trial", "actg175_trial", "actg175_four_arms")


@dataclass(frozen=True, eq=False)
class Source:
    """A CSV held in memory: its name as given, bytes, digest and its public dictionary, if any.

    ``shipped`` marks the demo files that come with the app (public practice data); an
    uploaded file is never a demo, with or without a dictionary.
    """

    name: str
    data: bytes = field(repr=False)
    digest: str
    dictionary: dict | None = None
    #: The uploaded dictionary's invalid entries, ``(where, sentence)``: left out of it, marked
    #: in the metadata table's "problem" column.
    dictionary_problems: tuple = ()
    shipped: bool = False

    @property
    def demo(self) -> bool:
        """A file shipped with the app, by its identity (never an upload)."""
        return self.shipped


def file_digest(data: bytes) -> str:
    """A file's identity in the session's caches: the SHA-256 of its bytes, in hex."""
    return hashlib.sha256(data).hexdigest()


@st.cache_data(show_spinner=False)
def _demo_bytes(name):
    """A demo file and its data dictionary (public, so a global cache is fine)."""
    data = (DEMO_DIR / f"{name}.csv").read_bytes()
    return data, file_digest(data), json.loads((DEMO_DIR / f"{name}.json").read_text())


def demo_source(name: str) -> Source:
    data, digest, dictionary = _demo_bytes(name)
    return Source(f"{name}.csv", data, digest, dictionary, shipped=True)
