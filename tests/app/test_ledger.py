"""AppTest: the durable ledger outlives the session; the sidebar's cap goes only down."""

import re

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dpcore.privacy.accounting import PrivacyLedger, dataset_key, default_ledger_path
from dpcore_app.ui.common import ledger, ledger_sidebar
from tests.app.conftest import APP
from tests.app.your_data_page import (
    PAGE,
    demo_release,
    headline,
    ledger_entries,
    release,
    set_cap,
    upload_release,
    words,
)
from tests.releases import recorded_release


def session():
    """A new browser session (its own id and state), opened on the Your data page."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def sidebar_text(at):
    return words(at.sidebar.markdown) + " " + words(at.sidebar.caption)


def test_two_sessions_on_the_same_demo_file_share_its_total(own_session_ids):
    first = demo_release(session())
    assert "ε = 1 over 1 release" in sidebar_text(first)
    second = session()
    assert ledger.IN_USE not in second.session_state  # no dataset chosen yet in this session
    second.radio(key="file").set_value("paper_trial").run()
    second.button(key="fill_dictionary").click().run()
    assert second.session_state[ledger.IN_USE] == first.session_state[ledger.IN_USE]
    assert "ε = 1 over 1 release" in sidebar_text(second)  # the first session's release
    release(second)
    assert "ε = 2 over 2 releases" in sidebar_text(second)
    assert "Release no. 2 on this dataset" in headline(second)
    assert "has spent ε = 2 in total, over every session" in headline(second)
    assert [e.index for e in ledger_entries(first)] == [1, 2]
    first.run()  # a reload of the first tab sees the second's release
    assert "ε = 2 over 2 releases" in sidebar_text(first)


def test_the_session_keeps_the_key_not_the_data(own_session_ids):
    at = demo_release(session())
    key = at.session_state[ledger.IN_USE]
    assert re.fullmatch(r"ds3-[0-9a-f]{64}", key)
    data = open("dpcore_app/demo_data/paper_trial.csv", "rb").read()
    assert key == PrivacyLedger.for_file(data, path=default_ledger_path()).dataset
    assert dataset_key(data, path=default_ledger_path()) != key  # not the bytes any more
    memo = at.session_state["ledger_key_memo"]
    flat = [v for m in memo for v in (m if isinstance(m, tuple) else (m,))]
    assert all(isinstance(v, str) for v in flat) and data.decode()[:40] not in "".join(flat)
    assert isinstance(at.session_state["your_data_release"].receipt, ledger.Receipt)


def test_the_sidebar_sets_and_lowers_a_cap_but_never_raises_it(own_session_ids):
    at = upload_release(session(), eps="0.5")
    assert "`dpcore ledger cap …`" in words(at.sidebar.caption)
    set_cap(at, 2.0)
    assert "(cap ε = 2)" in sidebar_text(at)
    set_cap(at, 5.0)
    assert "(cap ε = 2)" in sidebar_text(at) and "can only be lowered" in sidebar_text(at)
    set_cap(at, 0.6)
    assert "(cap ε = 0.6)" in sidebar_text(at)
    assert not at.sidebar.toggle  # no switch that turns the cap off
    other = session()  # the cap belongs to the dataset: another session is refused too
    other.query_params["eps"] = "0.2"
    upload_release(other)
    assert "Refused" in words(other.error) and "dpcore ledger cap" in words(other.error)
    assert [e.epsilon for e in ledger_entries(other)] == [0.5]


def test_record_release_gives_a_receipt_or_a_refusal(tmp_path, monkeypatch):
    monkeypatch.setenv("DPCORE_LEDGER", str(tmp_path / "l.sqlite"))
    k = PrivacyLedger.for_cells({"id": ["k"]}, path=tmp_path / "l.sqlite", budget=2.0).dataset
    made, first = ledger.record(k, recorded_release(1.0), "Your data")
    assert first == ledger.Receipt(1, 1.0, 0.0, 1.0, 0.0, k)
    assert made.entry.mechanism == "DP-OWL rule (Your data)" and made.totals == (1.0, 0.0)
    _, both = ledger.record(k, recorded_release(1.0, epsilon_eval=0.5))
    assert (both.index, both.epsilon, both.epsilon_total) == (2, 1.0, 2.0)
    refused = ledger.record(k, recorded_release(0.5))
    assert (
        isinstance(refused, str)
        and "cap is ε = 2" in refused
        and "ε = 2 is already spent" in refused
    )
    assert "Release no. 2" in ledger.receipt_sentence(both)
    assert "ε = 2" in ledger.receipt_sentence(both)
    with pytest.raises(AttributeError):
        first.index = 3


def test_a_not_private_release_makes_the_total_infinite_and_is_refused_under_a_cap(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("DPCORE_LEDGER", str(tmp_path / "l.sqlite"))
    keyed = PrivacyLedger.for_cells({"id": ["free"]}, path=tmp_path / "l.sqlite")
    st.session_state[ledger._KEYED] = keyed  # as the page keys an upload: nothing stored yet
    k = keyed.dataset
    made, got = ledger.record(k, recorded_release(reasons=("bounds from data",)))
    assert got.epsilon_total == float("inf") and "NOT PRIVATE" in made.entry.mechanism
    assert "∞ (no guarantee)" in ledger.receipt_sentence(got)
    capped = PrivacyLedger.for_cells(
        {"id": ["capped"]}, path=tmp_path / "l.sqlite", budget=2.0
    ).dataset
    refused = ledger.record(capped, recorded_release(reasons=("bounds",)))
    assert isinstance(refused, str) and "NOT PRIVATE" in refused and "dpcore ledger cap" in refused
    assert ledger.dataset_ledger(capped).entries == ()


def test_two_sessions_share_the_total_on_a_postgresql_ledger(
    own_session_ids, postgres_server, monkeypatch
):
    """The app on a PostgreSQL ledger ($DPCORE_LEDGER a URL), as several app processes share
    it: a second session sees the first one's release and adds its own. About 5 s, over 10 s
    on a loaded machine: two AppTest sessions, each keying the 1000-row demo trial."""
    monkeypatch.setenv("DPCORE_LEDGER", postgres_server.new_ledger())
    first = demo_release(session())
    assert "ε = 1 over 1 release" in sidebar_text(first)
    second = session()
    second.radio(key="file").set_value("paper_trial").run()
    second.button(key="fill_dictionary").click().run()
    assert "ε = 1 over 1 release" in sidebar_text(second)
    release(second)
    assert "ε = 2 over 2 releases" in sidebar_text(second)
    key = second.session_state[ledger.IN_USE]
    assert PrivacyLedger.open(default_ledger_path(), key).total()[0] == 2.0


def test_choosing_a_file_stores_nothing_in_the_ledger_until_a_release(
    own_session_ids, tmp_path, monkeypatch
):
    """The page keys the file as soon as it is chosen (the sidebar shows its total), but
    nothing of it enters the ledger, not even its rows' salted digests, until it is released
    on (privacy rule 12). The dataset is stored under the file's name."""
    import sqlite3

    where = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPCORE_LEDGER", str(where))

    def stored():
        with sqlite3.connect(where) as con:
            got = [con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES]
        con.close()
        return got

    TABLES = ("datasets", "row_hashes", "releases")
    at = session()
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    assert at.session_state[ledger.IN_USE].startswith("ds3-")
    assert "ε = 0: no private release on this dataset yet" in sidebar_text(at)
    assert "Nothing about this file is stored until its first release" in sidebar_text(at)
    assert stored() == [0, 0, 0]
    release(at)
    assert "ε = 1 over 1 release" in sidebar_text(at)
    assert stored() == [1, 1000, 1]
    (listed,) = PrivacyLedger.list_datasets(where)
    assert listed.name == "paper_trial.csv" and listed.epsilon == 1.0


def test_the_releases_table_says_who_released_each_on_a_server(tmp_path):
    server = PrivacyLedger.for_cells({"id": ["x"]}, path=tmp_path / "l.sqlite", user="ann")
    server.record("DP-OWL rule", 0.5)
    assert list(ledger_sidebar.entries_table(server)["by"]) == ["ann"]
    local = PrivacyLedger.for_cells({"id": ["y"]}, path=tmp_path / "l.sqlite")
    local.record("DP-OWL rule", 0.5)
    assert "by" not in ledger_sidebar.entries_table(local).columns  # one machine: no one to name
