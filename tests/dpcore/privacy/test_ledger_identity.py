"""The ledger's dataset identity (issues 30 and 37) and totals that never understate.

A trial re-saved in any of the ways a spreadsheet or a script re-saves it, or re-coded in the
ways an analyst re-codes it (label case, yes/no for 1/0, renamed columns), is one dataset; a
file sharing rows with an earlier dataset is charged to both; a release without a guarantee
makes the total infinite; old (version 1 and ds2) ledgers keep working; the file is private.
The tests taking ``new_ledger`` run on an SQLite file and on a PostgreSQL database.
"""

import os
import sqlite3
import stat
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore import read_trial
from dpcore.privacy.accounting import BudgetExceededError, PrivacyLedger, dataset_key
from dpcore.privacy.identity import (
    dataset_identity,
    normalise_cell,
    normalise_cells,
    row_cell,
)
from dpcore.privacy.identity_legacy import legacy_identity
from dpcore.privacy.ledger.schema import SCHEMA_VERSION
from tests.dpcore.privacy.ledger_schema import SQLITE_VERSION_1

ROWS = [
    (f"P{i:03d}", i % 2, round(1.5 + 0.37 * i, 2), 30 + i, "ABC"[i % 3], f"note {i} café")
    for i in range(24)
]
HEADER = ["patient_id", "arm", "y", "age", "site", "note"]


def csv_text(rows=ROWS, header=HEADER, sep=",", end="\n", quote=False):
    def cell(v):
        return f'"{v}"' if quote else str(v)

    lines = [sep.join(cell(h) for h in header)]
    lines += [sep.join(cell(v) for v in row) for row in rows]
    return end.join(lines) + end


ORIGINAL = csv_text().encode()
RESAVED = {
    "no trailing newline": csv_text().rstrip("\n").encode(),
    "CRLF": csv_text(end="\r\n").encode(),
    "reordered rows": csv_text(rows=ROWS[::-1]).encode(),
    "BOM": b"\xef\xbb\xbf" + ORIGINAL,
    "quoted": csv_text(quote=True).encode(),
    "semicolons": csv_text(sep=";").encode(),
    "latin-1": csv_text().encode("latin-1"),
    "reordered columns": csv_text(rows=[r[::-1] for r in ROWS], header=HEADER[::-1]).encode(),
    "1.0 for 1": csv_text(rows=[r[:1] + (float(r[1]),) + r[2:] for r in ROWS]).encode(),
    # Re-coded, renamed: the honest edits of issue 37.
    "renamed columns": csv_text(
        header=["pid", "treatment", "outcome", "age_years", "centre", "comment"]
    ).encode(),
    "lower-case levels": csv_text(rows=[r[:4] + (r[4].lower(),) + r[5:] for r in ROWS]).encode(),
    "upper-case text": csv_text(rows=[tuple(str(v).upper() for v in r) for r in ROWS]).encode(),
    "yes/no for 1/0": csv_text(
        rows=[r[:1] + (("no", "yes")[r[1]],) + r[2:] for r in ROWS]
    ).encode(),
    "TRUE/FALSE for 1/0": csv_text(
        rows=[r[:1] + (("FALSE", "TRUE")[r[1]],) + r[2:] for r in ROWS]
    ).encode(),
}


@pytest.mark.parametrize("how", sorted(RESAVED))
def test_a_trial_re_saved_is_one_dataset_with_one_total(tmp_path, how):
    path = tmp_path / "l.sqlite"
    first = PrivacyLedger.for_file(ORIGINAL, path=path)
    first.record("DP-OWL rule", 0.5)
    again = PrivacyLedger.for_file(
        RESAVED[how], path=path, encoding="latin-1" if how == "latin-1" else "utf-8"
    )
    assert again.dataset == first.dataset
    assert again.total() == (0.5, 0.0)


LABELLED = "id,arm,outcome,smoker,site\n" + "".join(
    f"P{i},{('Control', 'Treated')[i % 2]},{i * 0.25},{i % 3 % 2},{('North', 'South')[i % 4 // 2]}\n"
    for i in range(24)
)
EDITS = {
    "upper-case arm labels": LABELLED.replace("Treated", "TREATED").replace("Control", "CONTROL"),
    "lower-case levels": LABELLED.replace("North", "north").replace("South", "south"),
    "yes/no for 1/0": "\n".join(
        ",".join(
            (c if j != 3 or i == 0 else ("no", "yes")[int(c)])
            for j, c in enumerate(line.split(","))
        )
        for i, line in enumerate(LABELLED.split("\n"))
    ),
    "a renamed column": LABELLED.replace("smoker,", "current_smoker,", 1),
    "reordered rows": LABELLED.split("\n", 1)[0]
    + "\n"
    + "\n".join(LABELLED.strip().split("\n")[1:][::-1])
    + "\n",
}


@pytest.mark.parametrize("how", sorted(EDITS))
def test_each_trivial_edit_shares_one_budget_and_one_cap_with_the_original(new_ledger, how):
    """Issue 37: each honest edit of a trial file is the same dataset (the same key, total
    and cap), never a fresh budget for the same patients."""
    path = new_ledger()
    first = PrivacyLedger.for_file(LABELLED.encode(), path=path, budget=1.0)
    first.record("DP-OWL rule", 0.75)
    edited = PrivacyLedger.for_file(EDITS[how].encode(), path=path)
    assert edited.dataset == first.dataset
    assert edited.total() == (0.75, 0.0) and edited.budget == 1.0
    with pytest.raises(BudgetExceededError):
        edited.record("DP-OWL rule", 0.5)


def test_a_row_subset_is_charged_to_the_dataset_it_came_from(new_ledger):
    path = new_ledger()
    first = PrivacyLedger.for_file(LABELLED.encode(), path=path, budget=1.0)
    first.record("DP-OWL rule", 0.75)
    lines = LABELLED.strip().split("\n")
    subset = "\n".join([lines[0], *lines[1:10:2]]) + "\n"
    part = PrivacyLedger.for_file(subset.encode(), path=path)
    assert part.dataset != first.dataset and part.linked() == (first.dataset,)
    assert part.total() == (0.75, 0.0)  # what its patients already had
    with pytest.raises(BudgetExceededError, match="shares rows"):
        part.record("DP-OWL rule", 0.5)  # the whole trial's cap holds for its part
    part.record("DP-OWL rule", 0.25)
    assert first.total() == (1.0, 0.0)


def test_a_cap_on_the_file_binds_every_release_from_it_whatever_its_columns(new_ledger):
    """The cap set on a file without a dictionary (all its columns) is the cap of a release
    that uses some of them: both key the file by all its rows. The columns argument is
    deprecated and ignored."""
    path = new_ledger()
    PrivacyLedger.for_file(LABELLED.encode(), path=path, budget=1.0)
    with pytest.warns(DeprecationWarning, match="columns is ignored"):
        release = PrivacyLedger.for_file(LABELLED.encode(), ["arm", "outcome"], path=path)
    assert release.budget == 1.0
    release.record("DP-OWL rule", 1.0)
    with pytest.raises(BudgetExceededError):
        release.record("DP-OWL rule", 0.1)


def test_a_changed_cell_is_another_dataset_but_charged_with_the_rows_it_shares(new_ledger):
    path = new_ledger()
    first = PrivacyLedger.for_file(ORIGINAL, path=path, budget=1.0)
    first.record("DP-OWL rule", 0.5)
    rows = [ROWS[0][:3] + (99,) + ROWS[0][4:]] + ROWS[1:]  # one patient's age changed
    second = PrivacyLedger.for_file(csv_text(rows=rows).encode(), path=path)
    assert second.dataset != first.dataset
    assert second.linked() == (first.dataset,) and first.linked() == ()  # nothing stored yet
    assert second.total() == (0.5, 0.0)  # the shared patients' earlier release
    second.record("DP-OWL rule", 0.25)
    assert first.linked() == (second.dataset,)
    assert first.total() == (0.75, 0.0)  # recorded against both
    with pytest.raises(BudgetExceededError, match="shares rows"):
        second.record("DP-OWL rule", 0.5)  # the first dataset's cap holds for the second
    assert second.total() == (0.75, 0.0) and first.total() == (0.75, 0.0)


def test_a_file_sharing_no_row_is_independent(new_ledger):
    path = new_ledger()
    first = PrivacyLedger.for_file(ORIGINAL, path=path)
    first.record("rule", 1.0)
    other = [(r[0], r[1], r[2] + 100, r[3], r[4], r[5]) for r in ROWS]
    second = PrivacyLedger.for_file(csv_text(rows=other).encode(), path=path)
    assert second.linked() == () and second.total() == (0.0, 0.0)


def test_the_name_is_a_label_not_a_way_around_the_cap(new_ledger):
    path = new_ledger()
    first = PrivacyLedger.for_file(ORIGINAL, path=path, budget=1.0)
    first.record("rule", 1.0)
    renamed = PrivacyLedger.for_file(ORIGINAL, path=path, name="another name")
    assert renamed.dataset == first.dataset and renamed.budget == 1.0
    with pytest.raises(BudgetExceededError, match="--allow-raise"):
        renamed.record("rule", 0.1)


def test_for_trial_gives_the_dataset_of_a_file_of_its_columns(tmp_path):
    """A library call on a Trial keys the columns it holds, read as the file's cells are; it
    is the file's dataset when the file has no other column."""
    path = tmp_path / "l.sqlite"
    used_only = csv_text(rows=[r[1:5] for r in ROWS], header=HEADER[1:5]).encode()
    trial = read_trial(
        used_only,
        treatment="arm",
        outcome="y",
        covariates=["age", "site"],
        categorical={"site": ["A", "B", "C"]},
        treated=1,
        incomplete="keep",
    )
    assert (
        PrivacyLedger.for_trial(trial, path=path).dataset
        == PrivacyLedger.for_file(used_only, path=path).dataset
    )


def test_identity_is_salted_order_free_and_normalises_cells():
    a = dataset_identity({"x": ["1", " b "], "y": ["Cafe\u0301", ""]}, b"s1")
    b = dataset_identity({"y": [None, "Café"], "x": ["b", "1e0"]}, b"s1")
    assert a.key == b.key and sorted(a.row_hashes) == sorted(b.row_hashes)
    assert dataset_identity({"x": ["1", "b"], "y": ["Café", ""]}, b"s2").key != a.key
    # The multiset of rows: a duplicated row is another dataset.
    assert dataset_identity({"x": ["1", "1"]}, b"s").key != dataset_identity({"x": ["1"]}, b"s").key
    assert normalise_cell(np.float64(2)) == normalise_cell("2") == normalise_cell("02") == "2"
    with pytest.raises(ValueError, match="one cell per row"):
        dataset_identity({"x": ["1"], "y": []}, b"s")
    # A row is the multiset of its cells: names and the cells' column do not matter.
    assert (
        dataset_identity({"a": ["1", "x"], "b": ["x", "2"]}, b"s").key
        == dataset_identity({"c": ["x", "2"], "d": ["1", "x"]}, b"s").key
    )
    assert [row_cell(v) for v in ("Yes", "n", "FALSE", "t", True, 0, "1.0", "ARM B")] == [
        "1",
        "0",
        "0",
        "1",
        "1",
        "0",
        "1",
        "arm b",
    ]
    # The key is the user's: two users keying the same rows get two keys, the same row digests.
    ann, bob = (dataset_identity({"x": ["1", "2"]}, b"s", scope=u) for u in ("ann", "bob"))
    assert ann.key != bob.key and ann.row_hashes == bob.row_hashes


AWKWARD_CELLS = [
    "1",
    " 01 ",
    "1.0",
    "1e0",
    "-0",
    "0.0",
    "+3",
    "1_000",
    "1,5",
    "３",
    "１",
    "nan",
    "NaN",
    "NA",
    "inf",
    "-inf",
    "Infinity",
    "1e400",
    "-1e400",
    "9007199254740993",
    "18446744073709551616",
    "123456789012345678901234567890",
    "0x10",
    "1e-400",
    "Cafe\u0301",
    "  ",
    "",
    None,
    "True",
    "yes",
    ".5",
    "5.",
    "1 000",
    "\u22121",
    "2.50",
    "007",
    "1e+20",
    "\u0661\u0662",
    "\u216b",
    "\u00bd",
]


def test_a_dataset_key_is_the_same_in_every_version():
    """A ledger written by an earlier version finds its datasets again: a change to how cells
    are normalised would silently start every dataset's budget afresh (a new identity needs a
    new version, and the old one kept to link to it: ds2 below)."""
    cells = {"c": AWKWARD_CELLS, "d": AWKWARD_CELLS[::-1]}
    key = dataset_identity(cells, b"pinned-salt").key
    assert key == "ds3-ec25992230d1d3863d0ceba685b7894fee9773f45ebbc91be8d2fc0270d95285"
    old = legacy_identity(cells, b"pinned-salt").key
    assert old == "ds2-ac18541c083f5d67559a57cc2ac6c7df055fbe576ef5cfab073a42d72307fc70"


_cell = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.sampled_from(AWKWARD_CELLS),
    st.text(max_size=8),
    st.from_regex(r"\s*[-+]?\d{0,25}([.,]\d{0,5})?(e[-+]?\d{1,4})?\s*", fullmatch=True),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_cell, max_size=30))
def test_cells_normalised_together_are_each_normalised_alone(cells):
    """One call over a column reads each cell on its own: no cell changes another's text."""
    assert normalise_cells(cells) == [normalise_cell(c) for c in cells]


def test_open_refuses_a_string_that_is_not_a_dataset_key(new_ledger):
    path = new_ledger()
    with pytest.raises(ValueError, match="not a dataset key"):
        PrivacyLedger.open(path, "x.csv")
    with pytest.raises(ValueError, match="not a dataset of the ledger"):
        PrivacyLedger.open(path, "a" * 64)  # the form of a key, never computed here
    keyed = PrivacyLedger.for_file(ORIGINAL, path=path)
    with pytest.raises(ValueError, match="not a dataset of the ledger"):
        PrivacyLedger.open(path, keyed.dataset)  # keyed only: nothing stored yet
    keyed.record("rule", 0.5)
    assert PrivacyLedger.open(path, keyed.dataset).total() == (0.5, 0.0)


def test_the_keeper_s_default_cap_applies_to_every_new_dataset(new_ledger, monkeypatch):
    path = new_ledger()
    PrivacyLedger.set_default_cap(path, 2.0)
    assert PrivacyLedger.for_file(ORIGINAL, path=path).budget == 2.0
    with pytest.raises(ValueError, match="allow-raise"):
        PrivacyLedger.set_default_cap(path, 3.0)
    monkeypatch.setenv("DPCORE_LEDGER_DEFAULT_CAP", "0.5")  # the lower one applies
    other = csv_text(rows=[r[:2] + (r[2] + 50,) + r[3:] for r in ROWS]).encode()
    assert PrivacyLedger.for_file(other, path=path).budget == 0.5
    monkeypatch.setenv("DPCORE_LEDGER_DEFAULT_CAP", "zero")
    with pytest.raises(ValueError, match="DPCORE_LEDGER_DEFAULT_CAP"):
        PrivacyLedger.default_cap(path)


def test_a_release_without_a_guarantee_makes_the_total_infinite_for_good(new_ledger):
    path = new_ledger()
    ledger = PrivacyLedger.for_file(ORIGINAL, path=path)
    ledger.record("rule", 1.0)
    entry = ledger.record_no_guarantee("DP-OWL rule (NOT PRIVATE)", "bounds read from the data")
    assert entry.epsilon == np.inf and "no guarantee" in entry.mechanism
    ledger.record("rule", 0.5)
    assert PrivacyLedger.for_file(ORIGINAL, path=path).total()[0] == np.inf
    ledger.set_budget(10.0)
    with pytest.raises(BudgetExceededError, match="no guarantee is left"):
        ledger.record("rule", 0.1)
    capped = PrivacyLedger(budget=5.0)
    with pytest.raises(BudgetExceededError, match="cannot hold a release without a guarantee"):
        capped.record_no_guarantee("rule", "seeded noise")
    assert capped.entries == ()


def test_a_version_1_ledger_keeps_working_and_its_byte_keys_join_the_content_key(tmp_path):
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.executescript(SQLITE_VERSION_1)
    salt = b"\x01" * 32
    con.execute("INSERT INTO settings VALUES ('salt', ?)", (salt,))
    from dpcore.privacy.identity_legacy import byte_key

    old_key = byte_key(salt, ORIGINAL, "")
    con.execute(
        "INSERT INTO releases VALUES (NULL, ?, 1, 'DP-OWL rule', 0.75, 0, '', "
        "'2026-01-01T00:00:00+00:00')",
        (old_key,),
    )
    con.execute("INSERT INTO caps VALUES (?, 1.0, '2026-01-01T00:00:00+00:00')", (old_key,))
    con.commit()
    con.close()
    os.chmod(path, 0o644)
    assert dataset_key(ORIGINAL, path=path) == old_key
    old = PrivacyLedger.open(path, old_key)  # registered by the migration
    assert old.total() == (0.75, 0.0) and old.budget == 1.0
    new = PrivacyLedger.for_file(RESAVED["CRLF"], path=path)
    assert new.total() == (0.0, 0.0)  # other bytes: no byte key to join
    same = PrivacyLedger.for_file(ORIGINAL, path=path)
    assert same.dataset == new.dataset and old_key in same.linked()
    assert same.total() == (0.75, 0.0)
    with pytest.raises(BudgetExceededError):
        same.record("rule", 0.5)  # the old dataset's cap still holds
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT version FROM schema_version").fetchone() == (SCHEMA_VERSION,)
    if sys.platform != "win32":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_ledger_file_is_0600_in_a_0700_directory(tmp_path):
    path = tmp_path / "keeper" / "ledger.sqlite"
    PrivacyLedger.for_file(ORIGINAL, path=path).record("rule", 1.0)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    for f in path.parent.iterdir():  # the WAL and shared-memory files hold rows and the salt
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f.name


def test_one_patients_cell_cannot_rekey_the_other_rows(new_ledger):
    """Site codes 01/02/03 and one row's "x": the file key reads each cell on its own, so the
    other rows keep their digests and the neighbour is linked to (and charged with) the first
    file's release, instead of starting a fresh budget."""
    path = new_ledger()
    rows = "".join(f"{i},0{i % 3 + 1},{i % 2},{i % 7}\n" for i in range(40))
    base = ("id,site,arm,y\n" + rows).encode()
    first = PrivacyLedger.for_file(base, path=path)
    first.record("DP-OWL rule", 0.5)
    changed = base.replace(b"\n5,03,", b"\n5,x,")
    second = PrivacyLedger.for_file(changed, path=path)
    assert second.dataset != first.dataset and second.linked() == (first.dataset,)
    assert second.total() == (0.5, 0.0)


def test_a_file_keyed_by_an_earlier_dpcore_on_its_used_columns_keeps_its_record(new_ledger):
    """A ledger written before this version keyed a release by the columns it used (ds2-):
    keying the whole file now is linked to that record, so its releases and its cap still
    count (an upgrade never starts a budget afresh)."""
    from dpcore.data.csv_io import normalised_cells
    from dpcore.privacy.ledger.stores import open_store

    path = new_ledger()
    salt = open_store(path, "").salt()
    old = legacy_identity(normalised_cells(ORIGINAL, ["arm", "y", "age", "site"]), salt)
    store = open_store(path, old.key)
    with store.transaction() as tx:  # as dpcore 2 registered and charged it
        tx.register(
            old.key, "content", "", old.columns, old.row_hashes, "2026-11-01T00:00:00+00:00"
        )
        tx.insert([(1, "DP-OWL rule", 0.75, 0.0, "", "2026-11-01T00:00:00+00:00", "")])
        tx.set_cap(1.0, "2026-11-01T00:00:00+00:00")
    now = PrivacyLedger.for_file(RESAVED["reordered columns"], path=path)
    assert now.dataset.startswith("ds3-") and now.linked() == (old.key,)
    assert now.total() == (0.75, 0.0)
    with pytest.raises(BudgetExceededError, match="shares rows"):
        now.record("DP-OWL rule", 0.5)
    now.record("DP-OWL rule", 0.25)
    assert PrivacyLedger.open(path, old.key).total() == (1.0, 0.0)
    # The earlier record learnt today's row digests: a subset of the file links to it directly.
    lines = ORIGINAL.decode().splitlines()
    part = PrivacyLedger.for_file(("\n".join(lines[:8]) + "\n").encode(), path=path)
    assert old.key in part.linked()
