"""Who may see what in the privacy ledger (issue 37, items 1 and 2; privacy rule 12).

The ledger protects patients against the honest mistakes of people allowed to release on
them, and tells nobody anything about a dataset they may not see: what it shows, links and
enforces for a user depends only on the datasets that user registered or was granted (every
dataset for the local single user and for a keeper). Keying a file stores nothing; its first
release or cap does. The tests taking ``new_ledger`` run on SQLite and on PostgreSQL.
"""

import sqlite3

import pytest

from dpcore.privacy.accounting import BudgetExceededError, PrivacyLedger

HEADER = "id,arm,outcome,age\n"
ANNS = [f"A{i},{('Control', 'Treated')[i % 2]},{i * 0.5},{40 + i}\n" for i in range(30)]
MADE_UP = [f"M{i},{('Control', 'Treated')[i % 2]},{100 + i},{20 + i % 7}\n" for i in range(30)]


def csv(rows):
    return (HEADER + "".join(rows)).encode()


def stored_rows(where, table):
    """The rows of ``table`` in the ledger at ``where`` (SQLite file or PostgreSQL URL)."""
    if isinstance(where, str):
        import psycopg

        with psycopg.connect(where) as con:
            return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    with sqlite3.connect(where) as con:
        count = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    con.close()
    return count


def outcome(act):
    """What a call shows its caller: its result's fields, or its exception's type and text."""
    try:
        entry = act()
    except Exception as exc:  # noqa: BLE001 -- the exception is what is compared
        return type(exc).__name__, str(exc)
    if entry is None:
        return None
    return entry.index, entry.epsilon, entry.mechanism, entry.who


def everything_shown(ledger):
    """Everything the ledger shows its user about a dataset: before, through and after a
    release, a cap and an over-cap release (the spend, the entries, the links, the cap, the
    receipts, the refusals and the list of datasets)."""

    def state():
        return (
            ledger.total(),
            [(e.index, e.mechanism, e.epsilon, e.delta, e.parts, e.who) for e in ledger.entries],
            ledger.linked(),
            ledger.budget,
            ledger.registered,
        )

    def listed():
        found = PrivacyLedger.list_datasets(ledger.path, user=ledger.user)
        return [(d.owner, d.name, d.releases, d.epsilon, d.cap) for d in found]

    shown = [state(), listed()]
    shown.append(outcome(lambda: ledger.record("DP-OWL rule", 0.5)))
    shown.append(state())
    shown.append(outcome(lambda: ledger.set_budget(0.75)))
    shown.append(outcome(lambda: ledger.record("DP-OWL rule", 0.5)))  # refused by its own cap
    shown.append(outcome(lambda: ledger.record_no_guarantee("rule", "seeded")))
    shown += [state(), listed()]
    return shown


def ann_s_trial(where):
    """Ann's trial, registered with a cap and spent to it: a link would show as a spend and
    as a refusal."""
    ann = PrivacyLedger.for_file(csv(ANNS), path=where, user="ann", name="ann.csv", budget=1.0)
    ann.record("DP-OWL rule", 1.0)
    return ann


def test_a_file_sharing_a_row_with_another_user_s_dataset_tells_its_uploader_nothing(new_ledger):
    """Bob's made-up rows plus one row of Ann's trial: everything Bob is shown is what he is
    shown for the made-up rows alone (in a ledger holding the same dataset of Ann's), and
    Ann's dataset is neither charged nor linked by Bob's releases."""
    with_ann_s_row, alone = new_ledger(), new_ledger()
    ann = ann_s_trial(with_ann_s_row)
    ann_s_twin = ann_s_trial(alone)
    bob = PrivacyLedger.for_file(csv(MADE_UP + ANNS[3:4]), path=with_ann_s_row, user="bob")
    control = PrivacyLedger.for_file(csv(MADE_UP), path=alone, user="bob")
    seen, expected = everything_shown(bob), everything_shown(control)
    assert seen == expected
    assert seen[0] == ((0.0, 0.0), [], (), None, False)  # nothing of Ann's
    assert seen[2] == (1, 0.5, "DP-OWL rule", "bob")
    for ledger in (ann, ann_s_twin):  # not charged, not linked
        assert ledger.total() == (1.0, 0.0) and ledger.linked() == ()
        assert [e.who for e in ledger.entries] == ["ann"]


def test_another_user_s_key_is_refused_as_an_unknown_one(new_ledger):
    where = new_ledger()
    ann = ann_s_trial(where)
    unknown = "ds3-" + "0" * 64
    refusals = []
    for key in (ann.dataset, unknown):
        with pytest.raises(ValueError) as err:
            PrivacyLedger.open(where, key, user="bob")
        refusals.append(str(err.value).replace(key[:16], "KEY"))
    assert refusals[0] == refusals[1] and "that you may see" in refusals[0]
    assert PrivacyLedger.open(where, ann.dataset, user="ann").total() == (1.0, 0.0)
    assert PrivacyLedger.open(where, ann.dataset).total() == (1.0, 0.0)  # the local user


def test_two_users_keying_the_same_file_get_two_datasets(new_ledger):
    where = new_ledger()
    ann = ann_s_trial(where)
    bob = PrivacyLedger.for_file(csv(ANNS), path=where, user="bob")
    assert bob.dataset != ann.dataset and bob.total() == (0.0, 0.0) and bob.linked() == ()
    bob.record("DP-OWL rule", 2.0)  # Ann's cap is Ann's: no refusal tells Bob of her dataset
    assert ann.total() == (1.0, 0.0)


def test_a_granted_dataset_is_linked_shown_and_enforced(new_ledger):
    """A keeper grants Ann's dataset to Bob: from then on a file of Bob's sharing rows with it
    is charged to it, shows its releases and is held by its cap."""
    where = new_ledger()
    ann = ann_s_trial(where)
    with pytest.raises(ValueError, match="not a dataset of the ledger"):
        PrivacyLedger.grant(where, "ds3-" + "0" * 64, "bob")
    PrivacyLedger.grant(where, ann.dataset, "bob")
    subset = PrivacyLedger.for_file(csv(ANNS[:10]), path=where, user="bob")
    assert subset.linked() == (ann.dataset,) and subset.total() == (1.0, 0.0)
    with pytest.raises(BudgetExceededError, match="shares rows"):
        subset.record("DP-OWL rule", 0.5)
    assert PrivacyLedger.open(where, ann.dataset, user="bob").total() == (1.0, 0.0)
    assert [d.dataset for d in PrivacyLedger.list_datasets(where, user="bob")] == [ann.dataset]
    assert stored_rows(where, "grants") == 1


def test_a_keeper_sees_links_and_lists_every_dataset(new_ledger):
    where = new_ledger()
    ann = ann_s_trial(where)
    bob = PrivacyLedger.for_file(csv(MADE_UP), path=where, user="bob", name="bob.csv")
    bob.record("private CVaR", 0.25)
    kim = PrivacyLedger.for_file(
        csv(ANNS[:5] + MADE_UP[:5]), path=where, user="kim", keepers={"kim"}
    )
    assert kim.linked() == tuple(sorted((ann.dataset, bob.dataset)))
    assert kim.total() == (1.25, 0.0)
    listed = PrivacyLedger.list_datasets(where, user="kim", keepers={"kim"})
    assert [(d.name, d.owner, d.epsilon, d.cap) for d in listed] == [
        ("ann.csv", "ann", 1.0, 1.0),
        ("bob.csv", "bob", 0.25, None),
    ]
    assert [d.owner for d in PrivacyLedger.list_datasets(where)] == ["ann", "bob"]  # local user
    assert [d.owner for d in PrivacyLedger.list_datasets(where, user="bob")] == ["bob"]


def test_keying_a_file_stores_nothing_until_its_first_release(new_ledger):
    """Uploading (keying) a file leaves no trace of it in the ledger: no dataset, no row
    digest; what it shows is what its first release would start from. The release stores
    its digests."""
    where = new_ledger()
    ledger = PrivacyLedger.for_file(csv(MADE_UP), path=where, name="upload.csv")
    assert (ledger.total(), ledger.entries, ledger.linked(), ledger.budget) == (
        (0.0, 0.0),
        (),
        (),
        None,
    )
    refused = PrivacyLedger.for_file(csv(MADE_UP[:20]), path=where)
    PrivacyLedger.set_default_cap(where, 0.5)
    with pytest.raises(BudgetExceededError):  # a refused release stores nothing either
        refused.record("DP-OWL rule", 1.0)
    assert (stored_rows(where, "row_hashes"), stored_rows(where, "datasets")) == (0, 0)
    assert not ledger.registered
    ledger.record("DP-OWL rule", 0.5)
    assert ledger.registered
    assert (stored_rows(where, "row_hashes"), stored_rows(where, "datasets")) == (30, 1)
    (listed,) = PrivacyLedger.list_datasets(where)
    assert (listed.name, listed.owner, listed.rows, listed.epsilon) == ("upload.csv", "", 30, 0.5)


def test_a_cap_registers_the_dataset(new_ledger):
    where = new_ledger()
    PrivacyLedger.for_file(csv(MADE_UP), path=where).set_budget(2.0)
    assert stored_rows(where, "row_hashes") == 30
    assert PrivacyLedger.for_file(csv(MADE_UP[::-1]), path=where).budget == 2.0


def test_who_and_users_are_validated(new_ledger):
    where = new_ledger()
    for bad in ("", "  ", 3):
        with pytest.raises(TypeError, match="user"):
            PrivacyLedger.for_file(csv(MADE_UP), path=where, user=bad)
    with pytest.raises(TypeError, match="keepers"):
        PrivacyLedger.for_file(csv(MADE_UP), path=where, user="kim", keepers="kim")


def test_a_keyed_file_sees_datasets_registered_or_granted_after_it_was_keyed(new_ledger):
    """What a keyed (not yet stored) file shows is read again once a dataset registers or a
    grant is made: the sidebar's answer is never stale."""
    where = new_ledger()
    pending = PrivacyLedger.for_file(csv(ANNS[:10] + MADE_UP[:5]), path=where, user="bob")
    assert pending.linked() == () and pending.total() == (0.0, 0.0)
    ann = ann_s_trial(where)
    assert pending.linked() == ()  # Ann's, which Bob may not see
    PrivacyLedger.grant(where, ann.dataset, "bob")
    assert pending.linked() == (ann.dataset,) and pending.total() == (1.0, 0.0)
