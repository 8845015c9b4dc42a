"""Where the privacy ledger (:class:`dpcore.PrivacyLedger`) keeps its rows: in memory, in one
SQLite file, or in PostgreSQL.

A row is ``(dataset key, release index, mechanism, epsilon, delta, part, time, who)``; nothing
of the data itself is ever stored. Every store exposes the same transaction, so the ledger's cap
check and its insert run in one transaction whatever the storage: a lock in memory,
``BEGIN IMMEDIATE`` in SQLite (the write lock is taken before the check reads anything, so
two processes can never both pass the check on the same total), and in PostgreSQL a row lock
on each dataset the release is charged to.

- :mod:`~dpcore.privacy.ledger.location`: where a ledger is (``$DPCORE_LEDGER``, a file path
  or a ``postgresql://`` URL; any other URL is refused, never taken for a file name) and the
  keeper's default cap from the environment.
- :mod:`~dpcore.privacy.ledger.stores`: the store a location names, and the memory store.
- :mod:`~dpcore.privacy.ledger.sqlite`, :mod:`~dpcore.privacy.ledger.postgres`: the two
  durable stores; :mod:`~dpcore.privacy.ledger.sql` the statements they write alike.
- :mod:`~dpcore.privacy.ledger.schema`: the tables, the schema version and the migrations of
  both backends.
- :mod:`~dpcore.privacy.ledger.records`: a release and a dataset as the ledger reports them.
- :mod:`~dpcore.privacy.ledger.keeper`: the keeper's acts on the ledger as a whole (the default
  cap, grants, the list of datasets) and who its users are.

A dataset is keyed by its rows (:mod:`dpcore.privacy.identity`), with a random salt created
once per ledger and stored in it. A dataset enters the ledger (its ``datasets`` row, its owner
and one keyed digest per row) with its first release or cap, never when a file is merely
keyed; a new dataset sharing rows with an earlier one its user may see is then linked to it:
every release on it is recorded against both and checked against both caps. ``grants`` lets a
user see a dataset someone else registered.

The file is private to its keeper: created 0600 (its WAL files follow), in a directory
created 0700; an older ledger is narrowed to 0600 when opened. With the salt and the row
digests, a guessed row can be tested for membership, so nobody else may read it (in
PostgreSQL: nobody but the ledger's role may read its tables).
"""
