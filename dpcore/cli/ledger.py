"""``dpcore ledger``: the durable privacy ledger's releases, caps and grants."""

from __future__ import annotations

import argparse

from .common import (
    CliError,
    dataset_name,
    ignored_key_options,
    ledger_errors,
    ledger_location,
    need,
    new_ledger_file,
    open_ledger,
    read_bytes,
    total_text,
)


def cmd_ledger_show(args: argparse.Namespace) -> None:
    """Print a dataset's recorded releases and total, naming the ledger read."""
    from ..privacy.ledger.location import shown_location

    ignored_key_options(args)
    data = read_bytes(args.data)
    where = ledger_location(args.ledger)
    print(f"ledger {shown_location(where)}")
    if new_ledger_file(where):
        print(
            "this ledger does not exist yet: it is new and empty (no release recorded, no cap "
            "set); the first release or cap creates it"
        )
        return
    ledger = open_ledger(args.ledger, data, dataset_name(args))
    with ledger_errors(where):
        if not ledger.registered:
            print(
                "this file is not in the ledger yet (nothing released on it or capped); what "
                "it would start with:"
            )
        for e in ledger.entries:
            who = f"  by {e.who}" if e.who else ""
            print(
                f"{e.timestamp:%Y-%m-%d %H:%M:%S}Z  epsilon={total_text(e.epsilon)}  "
                f"delta={e.delta:g}  {e.mechanism}{who}"
            )
        eps, delta = ledger.total()
        cap = "none" if ledger.budget is None else f"{ledger.budget:g}"
        print(
            f"total epsilon={total_text(eps)} delta={delta:g} over {len(ledger.entries)} "
            f"release(s); cap {cap}"
        )
        linked = ledger.linked()
    if linked:
        print(
            f"shares rows with {len(linked)} other dataset(s) in this ledger: every release on "
            "this one is recorded against them too and checked against their caps"
        )


def cmd_ledger_cap(args: argparse.Namespace) -> None:
    """Set, lower or (with --allow-raise) raise or remove a dataset's cap."""
    if (args.cap is None) == (not args.remove):
        raise CliError("give the cap EPSILON, or --remove (with --allow-raise) to remove it")
    ignored_key_options(args)
    ledger = open_ledger(args.ledger, read_bytes(args.data), dataset_name(args))
    try:
        ledger.set_budget(None if args.remove else args.cap, allow_raise=args.allow_raise)
    except ValueError as exc:
        raise CliError(str(exc).replace(" (allow_raise=True)", "")) from None
    what = "removed" if args.remove else f"set to epsilon={args.cap:g}"
    print(f"cap {what}; {total_text(ledger.total()[0])} spent")


def cmd_ledger_list(args: argparse.Namespace) -> None:
    """Print every dataset of the ledger: its name, who registered it, its spend and cap."""
    (PrivacyLedger,) = need("dpcore.privacy.accounting", ("PrivacyLedger",), "the ledger")
    from ..privacy.ledger.location import shown_location

    where = ledger_location(args.ledger)
    if new_ledger_file(where):
        print(f"ledger {shown_location(where)} does not exist yet: no dataset")
        return
    with ledger_errors(where):
        found = PrivacyLedger.list_datasets(where)
    print(f"ledger {shown_location(where)}: {len(found)} dataset(s)")
    for d in found:
        cap = "none" if d.cap is None else f"{d.cap:g}"
        print(
            f"{d.dataset[:14]}  {d.name or '(no name)'}  registered by "
            f"{d.owner or 'the local user'} {d.registered:%Y-%m-%d %H:%M}Z  "
            f"epsilon={total_text(d.epsilon)} delta={d.delta:g} over {d.releases} "
            f"release(s); cap {cap}"
        )


def cmd_ledger_grant(args: argparse.Namespace) -> None:
    """Let a user see a dataset (the keeper's, on a department server)."""
    (PrivacyLedger,) = need("dpcore.privacy.accounting", ("PrivacyLedger",), "the ledger")
    from ..privacy.ledger.location import shown_location

    where = ledger_location(args.ledger)
    if new_ledger_file(where):
        raise CliError(f"the ledger {shown_location(where)} does not exist yet: no dataset")
    with ledger_errors(where):
        keys = [d.dataset for d in PrivacyLedger.list_datasets(where)]
    found = [k for k in keys if k.startswith(args.dataset)] if len(args.dataset) >= 8 else []
    if len(found) != 1:
        raise CliError(
            f"{args.dataset!r} names {'no' if not found else 'more than one'} dataset of the "
            f"ledger {shown_location(where)}: give a key (8 characters at least) as "
            "dpcore ledger list shows it"
        )
    with ledger_errors(where):
        PrivacyLedger.grant(where, found[0], args.user)
    print(f"{args.user} may now see dataset {found[0][:14]} (and release on it)")


def cmd_ledger_default_cap(args: argparse.Namespace) -> None:
    """Set the cap every new dataset of the ledger gets (the keeper's)."""
    PrivacyLedger, default_path = need(
        "dpcore.privacy.accounting", ("PrivacyLedger", "default_ledger_path"), "the ledger"
    )
    from ..privacy.ledger.location import shown_location

    path = args.ledger or default_path()
    if args.cap is None and not args.remove:
        with ledger_errors(path):
            current = PrivacyLedger.default_cap(path)
        print("no default cap" if current is None else f"default cap epsilon={current:g}")
        return
    try:
        with ledger_errors(path):
            PrivacyLedger.set_default_cap(
                path, None if args.remove else args.cap, allow_raise=args.allow_raise
            )
    except ValueError as exc:
        raise CliError(str(exc)) from None
    print(
        "default cap removed"
        if args.remove
        else f"every new dataset in {shown_location(path)} gets the cap epsilon={args.cap:g}"
    )
