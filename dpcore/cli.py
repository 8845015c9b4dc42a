"""The ``dpcore`` command line: batch use of the science core (``dpcore --help``).

Every subcommand documents itself with ``--help``. Errors are one line on standard error
with an exit code: 1 for bad input, 2 for bad arguments (argparse), 3 when a needed part of
dpcore or an optional extra is missing. Private releases made here are recorded in the
same durable ledger as the dashboard's, so the budget of a dataset counts both.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ._extras import install_hint

EXIT_INPUT, EXIT_MISSING = 1, 3


class CliError(Exception):
    """A one-line message for the user and the exit code to end with."""

    def __init__(self, message: str, code: int = EXIT_INPUT) -> None:
        super().__init__(message)
        self.code = code


def _need(module: str, names: Sequence[str], what: str) -> list[Any]:
    """Names from a part of dpcore that may not be in this version, or a clear error."""
    import importlib

    try:
        mod = importlib.import_module(module)
        return [getattr(mod, n) for n in names]
    except (ImportError, AttributeError):
        raise CliError(
            f"{what} needs {module}.{'/'.join(names)}, which this version of dpcore does not have",
            EXIT_MISSING,
        ) from None


def _ledger(path: str | None, data: bytes, name: str) -> Any:
    """The dataset's durable ledger (SQLite or PostgreSQL), keyed by the file's rows over all
    its columns, like the app's: whatever columns or dictionary a release uses.

    ``name`` is the label stored with the dataset, not part of the key, and ``path`` the
    keeper's ledger (a file or a ``postgresql://`` URL): neither makes a fresh budget for data
    the ledger has seen.
    """
    PrivacyLedger, default_path = _need(
        "dpcore.privacy.accounting",
        ("PrivacyLedger", "default_ledger_path"),
        "the durable privacy ledger",
    )
    if not hasattr(PrivacyLedger, "for_file"):
        raise CliError(
            "the durable privacy ledger (PrivacyLedger.for_file) is not in this version "
            "of dpcore; refusing to release without recording it",
            EXIT_MISSING,
        )
    where = path or default_path()
    with _ledger_errors(where):
        return PrivacyLedger.for_file(data, path=where, name=name)


@contextlib.contextmanager
def _ledger_errors(where: Any) -> Iterator[None]:
    """The ledger's storage failures as one line naming ``where`` (its password hidden)."""
    from .privacy.ledger_store import LedgerUnavailableError, shown_location

    try:
        yield
    except ImportError as exc:  # a postgresql:// ledger without the server extra
        raise CliError(f"{exc} (--ledger, or $DPCORE_LEDGER)", EXIT_MISSING) from None
    except LedgerUnavailableError as exc:  # its message names the server already
        raise CliError(f"{exc} (--ledger, or $DPCORE_LEDGER)") from None
    except OSError as exc:
        raise CliError(
            f"cannot open the ledger {shown_location(where)} (--ledger, or "
            f"$DPCORE_LEDGER): {exc.strerror or exc}"
        ) from None


def _read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None


def _dataset_name(args: argparse.Namespace) -> str:
    """The name stored with the dataset: --name, else the data file's name."""
    return args.name or Path(args.data).name


def _ignored_key_options(args: argparse.Namespace) -> None:
    if getattr(args, "dictionary", None) or getattr(args, "columns", None):
        print(
            "dpcore ledger: --dictionary and --columns no longer change the dataset: a file "
            "is keyed by all its rows, whatever columns a release uses",
            file=sys.stderr,
        )


def _total_text(eps: float) -> str:
    return "no guarantee (inf)" if eps == float("inf") else f"{eps:g}"


# --------------------------------------------------------------------------------------------
# Subcommands


def cmd_fit(args: argparse.Namespace) -> None:
    """Fit a private treatment rule (:func:`dpcore.release.release`), write the rule file, then
    record it in the ledger."""
    (read_dictionary,) = _need("dpcore.data.dictionary_read", ("read_dictionary",), "fit")
    from .release import ReleaseError, ReleasePlan, release

    if args.seed is not None and not args.not_private:
        raise CliError(
            "--seed makes the noise reproducible, so the release has no privacy "
            "guarantee: add --not-private (the rule is then titled NOT PRIVATE, the "
            "seed is recorded in it and this dataset's total becomes inf), or drop --seed"
        )
    if args.evaluation != "ipw" and not args.evaluate:
        raise CliError(
            f"--evaluation {args.evaluation} chooses how --evaluate evaluates the rule: "
            "add --evaluate EPS_EVAL"
        )
    if args.model_covariates and args.evaluation != "aipw" and args.learner != "plug-in":
        raise CliError(
            "--model-covariates chooses the covariates of an outcome model: add "
            "--evaluation aipw (the evaluation's) or --learner plug-in (the rule's)"
        )
    if args.evaluate and not 0.0 < args.fit_share < 1.0:
        raise CliError(
            f"--fit-share must be between 0 and 1 (the share of patients the rule is "
            f"fitted on), got {args.fit_share:g}"
        )
    data = _read_bytes(args.data)
    d = read_dictionary(Path(args.dictionary))
    if d.larger_is_better is None:
        raise CliError(
            f"the dictionary {args.dictionary} does not say which outcome is better: "
            'add the field "larger_is_better": true (or false) to it'
        )
    arms = None
    if args.arms:
        arms = _arms(args.arms)
        if not d.arms:
            raise CliError("--arms needs the dictionary to list the treatment's arms (its levels)")
    names = tuple(c.strip() for c in (args.model_covariates or "").split(",") if c.strip())
    if args.learner == "plug-in":
        given = [
            flag
            for flag, hit in (
                ("--gamma", args.gamma is not None),
                ("--weight-bound", args.weight_bound is not None),
                ("--C", args.C != 0.0),
                ("--evaluation aipw", args.evaluation != "ipw"),
            )
            if hit
        ]
        if given:
            raise CliError(
                f"{', '.join(given)}: DP-OWL's settings; --learner plug-in has none (drop them)"
            )
    plan = ReleasePlan(
        epsilon=args.epsilon,
        learner=args.learner,
        epsilon_eval=args.evaluate,
        fit_share=args.fit_share,
        evaluation=args.evaluation,
        gamma=args.gamma,
        weight_bound=args.weight_bound,
        C=args.C,
        model_covariates=names,
        arms=arms,
        reference=args.reference,
        seed=args.seed,
        not_private=("released with --not-private",) if args.not_private else (),
    )
    try:
        made = release(data, d, plan)
    except ReleaseError as exc:
        flag = {
            "arms": "--arms",
            "weight_bound": "--weight-bound",
            "model_covariates": "--model-covariates",
            "reference": "--reference",
        }.get(exc.setting or "")
        raise CliError(f"{flag}: {exc}" if flag else str(exc)) from None
    _write_and_record(args, data, made)


def _write_and_record(args: argparse.Namespace, data: bytes, made: Any) -> None:
    """Write the rule file beside --out, record the release in the ledger, then put the file
    in place with the ledger's record in it (the dataset is charged the plan's cost)."""
    import os
    import tempfile

    (write_rule,) = _need("dpcore.owl.release", ("write_rule",), "fit")
    out = Path(args.out)
    if out.is_dir():  # os.replace would fail only after the ledger was charged
        raise CliError(
            f"--out {args.out} is a directory: give the rule file's name (e.g. "
            f"{out / 'rule.json'}); nothing was released or recorded"
        )
    ledger = _ledger(args.ledger, data, _dataset_name(args))
    _check_room(ledger, made.plan.cost, not made.private)
    # The file is written first (to a temporary name beside it), then the ledger charged,
    # then the file put in place: a fit whose --out cannot be written spends nothing.
    try:
        fd, tmp = tempfile.mkstemp(
            dir=out.parent if str(out.parent) else ".", prefix=".dpcore-", suffix=".json"
        )
        os.close(fd)
        write_rule(made.to_dict(), tmp)
    except OSError as exc:
        raise CliError(
            f"cannot write --out {args.out}: {exc.strerror or exc}; nothing was "
            "released or recorded"
        ) from None
    try:
        made = made.record(ledger, "dpcore fit")
        write_rule(made.to_dict(), tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # a rule file is for sharing: the usual mode, not mkstemp's
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)
    if made.evaluation is not None:  # the first answer, then the rule's verdict
        print(made.evaluation.summary())
    print(
        f"wrote {args.out}: epsilon={_total_text(made.entry.epsilon)} spent; this dataset's "
        f"total is {_total_text(made.totals[0])}"
    )


def _arms(arms: str) -> tuple[str, str]:
    """The two arms of ``--arms TREATED,CONTROL``."""
    labels = [a.strip() for a in arms.split(",") if a.strip()]
    if len(labels) != 2:
        raise CliError(
            f"--arms takes two arms separated by a comma (the treated one first), got {arms!r}"
        )
    return labels[0], labels[1]


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _check_room(ledger: Any, cost: float, no_guarantee: bool) -> None:
    """Refuse before anything is written when the cap cannot take the release (the record
    itself checks again, in its transaction)."""
    from .privacy.composition import within_cap

    cap, spent = ledger.budget, ledger.total()[0]
    if not within_cap(spent, math.inf if no_guarantee else cost, cap):
        asked = "a release without a guarantee (total inf)" if no_guarantee else f"epsilon={cost:g}"
        raise CliError(
            f"privacy budget epsilon={cap:g} exceeded: {_total_text(spent)} already "
            f"spent on this dataset, {asked} requested; nothing was written. Release "
            "with a smaller --epsilon, or raise the cap as the ledger's keeper: dpcore "
            "ledger cap DATA EPSILON --allow-raise"
        )


def cmd_apply(args: argparse.Namespace) -> None:
    """Recommendations of a rule file for the rows of a CSV file."""
    import numpy as np

    from .data.csv_io import read_table
    from .data.csv_safe import write_csv

    (load_rule,) = _need("dpcore.owl.release", ("load_rule",), "apply")
    rule = load_rule(Path(args.rule))
    out = rule.recommendations(read_table(_read_bytes(args.data)))
    for c in out.columns:  # whole numbers go out as they came in: an id 10056, not 10056.0
        x = out[c].to_numpy()
        if x.dtype.kind == "f" and np.all(np.isnan(x) | ((x == np.round(x)) & (np.abs(x) < 2**53))):
            out[c] = out[c].astype("Int64")
    unscored = int((out["not_scored"] != "").sum())
    if unscored:  # the rows are still written: each one says why it has no recommendation
        print(
            f"dpcore apply: {unscored} of {len(out)} row(s) could not be scored (a covariate "
            "missing, not a number or outside the rule's levels): see the column not_scored",
            file=sys.stderr,
        )
    text = write_csv(out)
    assert text is not None
    if args.out in (None, "-"):
        sys.stdout.write(text)
    else:
        try:
            Path(args.out).write_text(text, encoding="utf-8", newline="")
        except OSError as exc:
            raise CliError(f"cannot write --out {args.out}: {exc.strerror or exc}") from None


def _new_ledger_file(where: Any) -> bool:
    """Whether ``where`` is an SQLite ledger that does not exist yet (reading it would make it)."""
    from .privacy.ledger_store import server_url

    return server_url(where) is None and not Path(where).expanduser().exists()


def _ledger_location(path: str | None) -> Any:
    (default_path,) = _need(
        "dpcore.privacy.accounting", ("default_ledger_path",), "the durable privacy ledger"
    )
    return path or default_path()


def cmd_ledger_show(args: argparse.Namespace) -> None:
    """Print a dataset's recorded releases and total, naming the ledger read."""
    from .privacy.ledger_store import shown_location

    _ignored_key_options(args)
    data = _read_bytes(args.data)
    where = _ledger_location(args.ledger)
    print(f"ledger {shown_location(where)}")
    if _new_ledger_file(where):
        print(
            "this ledger does not exist yet: it is new and empty (no release recorded, no cap "
            "set); the first release or cap creates it"
        )
        return
    ledger = _ledger(args.ledger, data, _dataset_name(args))
    with _ledger_errors(where):
        if not ledger.registered:
            print(
                "this file is not in the ledger yet (nothing released on it or capped); what "
                "it would start with:"
            )
        for e in ledger.entries:
            who = f"  by {e.who}" if e.who else ""
            print(
                f"{e.timestamp:%Y-%m-%d %H:%M:%S}Z  epsilon={_total_text(e.epsilon)}  "
                f"delta={e.delta:g}  {e.mechanism}{who}"
            )
        eps, delta = ledger.total()
        cap = "none" if ledger.budget is None else f"{ledger.budget:g}"
        print(
            f"total epsilon={_total_text(eps)} delta={delta:g} over {len(ledger.entries)} "
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
    _ignored_key_options(args)
    ledger = _ledger(args.ledger, _read_bytes(args.data), _dataset_name(args))
    try:
        ledger.set_budget(None if args.remove else args.cap, allow_raise=args.allow_raise)
    except ValueError as exc:
        raise CliError(str(exc).replace(" (allow_raise=True)", "")) from None
    what = "removed" if args.remove else f"set to epsilon={args.cap:g}"
    print(f"cap {what}; {_total_text(ledger.total()[0])} spent")


def cmd_ledger_list(args: argparse.Namespace) -> None:
    """Print every dataset of the ledger: its name, who registered it, its spend and cap."""
    (PrivacyLedger,) = _need("dpcore.privacy.accounting", ("PrivacyLedger",), "the ledger")
    from .privacy.ledger_store import shown_location

    where = _ledger_location(args.ledger)
    if _new_ledger_file(where):
        print(f"ledger {shown_location(where)} does not exist yet: no dataset")
        return
    with _ledger_errors(where):
        found = PrivacyLedger.list_datasets(where)
    print(f"ledger {shown_location(where)}: {len(found)} dataset(s)")
    for d in found:
        cap = "none" if d.cap is None else f"{d.cap:g}"
        print(
            f"{d.dataset[:14]}  {d.name or '(no name)'}  registered by "
            f"{d.owner or 'the local user'} {d.registered:%Y-%m-%d %H:%M}Z  "
            f"epsilon={_total_text(d.epsilon)} delta={d.delta:g} over {d.releases} "
            f"release(s); cap {cap}"
        )


def cmd_ledger_grant(args: argparse.Namespace) -> None:
    """Let a user see a dataset (the keeper's, on a department server)."""
    (PrivacyLedger,) = _need("dpcore.privacy.accounting", ("PrivacyLedger",), "the ledger")
    from .privacy.ledger_store import shown_location

    where = _ledger_location(args.ledger)
    if _new_ledger_file(where):
        raise CliError(f"the ledger {shown_location(where)} does not exist yet: no dataset")
    with _ledger_errors(where):
        keys = [d.dataset for d in PrivacyLedger.list_datasets(where)]
    found = [k for k in keys if k.startswith(args.dataset)] if len(args.dataset) >= 8 else []
    if len(found) != 1:
        raise CliError(
            f"{args.dataset!r} names {'no' if not found else 'more than one'} dataset of the "
            f"ledger {shown_location(where)}: give a key (8 characters at least) as "
            "dpcore ledger list shows it"
        )
    with _ledger_errors(where):
        PrivacyLedger.grant(where, found[0], args.user)
    print(f"{args.user} may now see dataset {found[0][:14]} (and release on it)")


def cmd_ledger_default_cap(args: argparse.Namespace) -> None:
    """Set the cap every new dataset of the ledger gets (the keeper's)."""
    PrivacyLedger, default_path = _need(
        "dpcore.privacy.accounting", ("PrivacyLedger", "default_ledger_path"), "the ledger"
    )
    from .privacy.ledger_store import shown_location

    path = args.ledger or default_path()
    if args.cap is None and not args.remove:
        with _ledger_errors(path):
            current = PrivacyLedger.default_cap(path)
        print("no default cap" if current is None else f"default cap epsilon={current:g}")
        return
    try:
        with _ledger_errors(path):
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


def cmd_dictionary_check(args: argparse.Namespace) -> int:
    """Print every problem of a data dictionary (and of its trial file); exit 1 if any."""
    from .data.dictionary_check import main as check

    return check(args.dictionary, args.data, encoding=args.encoding)


def cmd_sweep(args: argparse.Namespace) -> None:
    """A DP-OWL Monte-Carlo sweep on the paper's synthetic trial, summarised to CSV."""
    from .owl.experiments import owl_monte_carlo

    gamma: Any = "paper" if args.gamma is None else args.gamma
    with contextlib.ExitStack() as stack:
        executor = None
        if args.scheduler:  # the cells run on a dask cluster; the same table as the local pool
            from .montecarlo import cluster_client

            executor = stack.enter_context(cluster_client(args.scheduler)).get_executor()
        result = owl_monte_carlo(
            args.n,
            args.epsilon,
            gamma=gamma,
            reps=args.reps,
            test_size=args.test_size,
            seed=args.seed,
            executor=executor,
        )
    from .data.csv_safe import write_csv

    table = result.runs if args.runs else result.summary
    write_csv(table, args.out if args.out not in (None, "-") else sys.stdout)


def _app_files() -> tuple[Path, list[str]]:
    """app.py and Streamlit's flags from the app's .streamlit/config.toml beside it.

    The files are found with importlib.resources in the ``dpcore_app`` package (any install
    scheme: a venv, ``pip install --user``, ``--target``, a system install) or, in a source
    checkout, at the repository's root. The config's options are passed as flags too, so they
    hold whatever directory Streamlit is started from.
    """
    try:
        import dpcore_app
    except ImportError:
        raise CliError(
            "the dashboard's files are not installed (no dpcore_app package)", EXIT_MISSING
        ) from None
    root = dpcore_app.root()
    app, config = root / "app.py", root / ".streamlit" / "config.toml"
    if not app.is_file():
        raise CliError(f"the dashboard's app.py is missing from {root}", EXIT_MISSING)
    flags: list[str] = []
    if config.is_file():
        import tomllib

        for section, options in tomllib.loads(config.read_text(encoding="utf-8")).items():
            flags += [f"--{section}.{k}={v}" for k, v in options.items()]
    return app, flags


def cmd_app(args: argparse.Namespace) -> int:
    """Start the dashboard with Streamlit (the ``app`` extra)."""
    import importlib.util

    if importlib.util.find_spec("streamlit") is None:
        raise CliError("the dashboard needs the app extra: " + install_hint("app"), EXIT_MISSING)
    from ._serve import run_app

    app, flags = _app_files()
    command = [sys.executable, "-m", "streamlit", "run", str(app), *flags, *args.streamlit_args]
    return run_app(command, cwd=app.parent)  # SIGTERM and Ctrl-C stop the server, then us


def cmd_serve(args: argparse.Namespace) -> int:
    """Several app processes behind nginx, optionally with a Dask cluster (the ``app`` extra)."""
    import importlib.util

    from ._serve import NO_NGINX, ServeError, ServeOptions, check_exposure, find_nginx, serve

    auth, htpasswd = _auth_option(args.auth)
    options = ServeOptions(
        replicas=args.replicas,
        port=args.port,
        address=args.address,
        auth=auth,
        htpasswd=htpasswd,
        keepers=tuple(dict.fromkeys(k.strip() for k in args.keeper)),
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        insecure_no_auth=args.insecure_no_auth,
        dask_workers=args.dask_workers,
        scheduler=args.scheduler,
        nginx=args.nginx,
        template=args.template,
        log_dir=args.log_dir,
        timeout=args.timeout,
        warm_up=not args.no_warm_up,
    )
    if any(not k or "," in k for k in options.keepers):
        raise CliError(f"--keeper takes one user name, got {args.keeper}")
    try:
        check_exposure(options)  # a server others could reach unprotected never starts
    except ServeError as exc:
        raise CliError(str(exc)) from None
    if importlib.util.find_spec("streamlit") is None:
        raise CliError(
            "serving the dashboard needs the app extra: " + install_hint("app"), EXIT_MISSING
        )
    if args.dask_workers and importlib.util.find_spec("distributed") is None:
        raise CliError("--dask-workers needs the dask extra: " + install_hint("dask"), EXIT_MISSING)
    if args.replicas < 1 or args.dask_workers < 0:
        raise CliError(
            f"--replicas must be at least 1 and --dask-workers at least 0, got "
            f"{args.replicas} and {args.dask_workers}"
        )
    if find_nginx(args.nginx) is None:
        raise CliError(NO_NGINX, EXIT_MISSING)
    if args.scheduler and args.dask_workers:
        raise CliError(
            "give --dask-workers (a cluster started here) or --scheduler (one "
            "running elsewhere), not both"
        )
    app, flags = _app_files()
    return serve(app, flags, options)


def _auth_option(given: list[str] | None) -> tuple[str | None, Path | None]:
    """``--auth htpasswd FILE`` or ``--auth header`` as (mode, users file)."""
    if not given:
        return None, None
    if given[0] == "htpasswd" and len(given) == 2:
        return "htpasswd", Path(given[1])
    if given == ["header"]:
        return "header", None
    raise CliError(f"--auth takes 'htpasswd FILE' or 'header', got {' '.join(given)!r}")


def cmd_warm(args: argparse.Namespace) -> int:
    """Precompute the dashboard's views into the shared results store (the ``app`` extra)."""
    import importlib.util

    if importlib.util.find_spec("streamlit") is None:
        raise CliError(
            "warming the dashboard's views needs the app extra: " + install_hint("app"),
            EXIT_MISSING,
        )
    app, _ = _app_files()
    command = [sys.executable, "-m", "dpcore_app.warm", *args.warm_args]  # runs dpcore_app.warm
    return subprocess.call(command, cwd=app.parent)


# --------------------------------------------------------------------------------------------
# Parser


def _epsilon(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"epsilon must be > 0 (or inf), got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dpcore`` (its ``--help`` texts are the documentation)."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="dpcore",
        description="Private treatment rules and their privacy ledger, from the "
        "command line. Each command has its own --help.",
    )
    parser.add_argument("--version", action="version", version=f"dpcore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ledger_opts = argparse.ArgumentParser(add_help=False)
    ledger_opts.add_argument(
        "--ledger",
        metavar="PATH",
        help="the ledger: an SQLite file, or a postgresql://user@host/database URL (default: "
        "the app's, $DPCORE_LEDGER). The keeper's choice: another ledger is another "
        "keeper's record, not a fresh budget for the same patients",
    )
    ledger_opts.add_argument(
        "--name",
        default="",
        help="a name for the dataset, stored in the ledger (default: the data file's name). "
        "The dataset is keyed by its rows, so a new name is the same dataset, with the same cap",
    )
    key_opts = argparse.ArgumentParser(add_help=False)
    key_opts.add_argument(
        "--dictionary",
        help="ignored (kept for older scripts): a file is keyed by all its rows",
    )
    key_opts.add_argument(
        "--columns",
        help="ignored (kept for older scripts): a file is keyed by all its rows",
    )

    fit = sub.add_parser(
        "fit",
        parents=[ledger_opts],
        help="fit a private treatment rule to a rule JSON",
        description="Fit a private treatment rule (DP-OWL, or the private plug-in rule) on a trial CSV with its public data dictionary "
        "(bounds, levels, design), write the rule file, then record the release in "
        "the dataset's ledger. Each run is a new release: it spends epsilon again. "
        "The dataset is keyed by its rows over all its columns, so a re-saved file, "
        "renamed columns, re-cased labels, another --name or reordered rows spend the "
        "same budget, and a file sharing rows with an earlier one is charged to both.",
    )
    fit.add_argument("data", help="the trial's CSV file")
    fit.add_argument("--dictionary", required=True, help="its public data dictionary (JSON or CSV)")
    fit.add_argument(
        "--epsilon", type=_epsilon, required=True, help="privacy budget of the release"
    )
    fit.add_argument(
        "--learner",
        choices=("dp-owl", "plug-in"),
        default="dp-owl",
        help="'dp-owl' (default: the paper's output perturbation of a weighted "
        "Huber-hinge ERM) or 'plug-in' (per-arm linear outcome models from noisy "
        "sufficient statistics: often more accurate per epsilon when the effect is "
        "linear in the covariates; no gamma, W or C; --model-covariates chooses its "
        "models' covariates)",
    )
    fit.add_argument(
        "--gamma",
        type=float,
        help="regularization (default: the paper's tuned "
        "gamma at this n and epsilon, scaled to W, as in the app and the library)",
    )
    fit.add_argument(
        "--weight-bound",
        type=float,
        help="public weight bound W (default (hi - lo) / min propensity)",
    )
    fit.add_argument(
        "--C",
        type=float,
        default=0.0,
        help="the paper's constant C (default 0: known propensities)",
    )
    fit.add_argument(
        "--evaluate",
        type=_epsilon,
        metavar="EPS_EVAL",
        help="also evaluate the rule privately at EPS_EVAL on held-out patients (a "
        "public seeded split, as the app does); the two parts are disjoint, so "
        "the dataset is charged max(epsilon, EPS_EVAL)",
    )
    fit.add_argument(
        "--evaluation",
        choices=("ipw", "aipw"),
        default="ipw",
        help="with --evaluate: 'ipw' (default) or 'aipw', doubly robust with a "
        "private per-arm outcome model fitted on the fit part at a quarter of "
        "--epsilon (the rule gets the rest; the cost is unchanged); narrower "
        "only when covariates predict the outcome and m x EPS_EVAL is large "
        "(docs/evaluation.md)",
    )
    fit.add_argument(
        "--model-covariates",
        metavar="NAMES",
        help="with --evaluation aipw or --learner plug-in: the covariates of the outcome "
        "model, comma-separated (default every covariate; fewer give less noise)",
    )
    fit.add_argument(
        "--fit-share",
        type=float,
        default=0.8,
        help="share of patients the rule is fitted on with --evaluate (default 0.8)",
    )
    fit.add_argument(
        "--seed",
        type=int,
        help="noise seed (only to reproduce a test; needs "
        "--not-private: anyone with the seed can remove the noise)",
    )
    fit.add_argument(
        "--not-private",
        action="store_true",
        help="title the rule NOT PRIVATE and record the release without a guarantee "
        "(the dataset's total becomes inf); needed for --seed",
    )
    fit.add_argument(
        "--arms",
        metavar="TREATED,CONTROL",
        help="a trial with more than two arms: compare these two (the first is the "
        "treated one); the other arms' rows stay at weight 0, so n is the "
        "file's row count. Default: a rule over every arm the dictionary lists",
    )
    fit.add_argument(
        "--reference",
        help="a rule over more than two arms: the arm every other "
        "arm is compared against (default: the dictionary's 'reference', else its "
        "first arm)",
    )
    fit.add_argument("--out", default="rule.json", help="rule file to write (default rule.json)")
    fit.set_defaults(run=cmd_fit)

    apply = sub.add_parser(
        "apply",
        help="recommend arms for new patients with a rule JSON",
        description="Apply a rule file to a CSV of new patients (the columns the rule names, in "
        "original units); write the rows with a 'recommendation' column. A row the "
        "rule cannot score (a covariate missing, not a number or outside the rule's "
        "levels) gets an empty recommendation and its reason in a 'not_scored' "
        "column. Text cells that a spreadsheet would run as a formula are prefixed "
        "with '.",
    )
    apply.add_argument("rule", help="the rule JSON written by 'dpcore fit' or the app")
    apply.add_argument("data", help="CSV of patients")
    apply.add_argument("--out", help="CSV to write (default: standard output)")
    apply.set_defaults(run=cmd_apply)

    ledger = sub.add_parser(
        "ledger",
        help="show a dataset's ledger, set its cap, list the datasets",
        description="The durable privacy ledger, where a dataset is keyed by its file's rows "
        "over all its columns (whatever columns a release uses). Its file is private "
        "to its keeper (0600).",
    )
    lsub = ledger.add_subparsers(dest="ledger_command", required=True, metavar="ACTION")
    show = lsub.add_parser(
        "show", parents=[ledger_opts, key_opts], help="the releases and their total"
    )
    show.add_argument("data", help="the dataset's CSV file")
    show.set_defaults(run=cmd_ledger_show)
    cap = lsub.add_parser(
        "cap", parents=[ledger_opts, key_opts], help="set or lower the cap on epsilon"
    )
    cap.add_argument("data", help="the dataset's CSV file")
    cap.add_argument("cap", type=_epsilon, nargs="?", help="largest total epsilon")
    cap.add_argument("--remove", action="store_true", help="remove the cap (needs --allow-raise)")
    cap.add_argument(
        "--allow-raise",
        action="store_true",
        help="allow raising (or removing) an existing cap: the keeper's decision",
    )
    cap.set_defaults(run=cmd_ledger_cap)
    listing = lsub.add_parser(
        "list",
        parents=[ledger_opts],
        help="every dataset: its name, who registered it, its spend and cap",
        description="List every dataset of the ledger (the keeper's view): its key, name, who "
        "registered it and when, the privacy spent on it and its cap.",
    )
    listing.set_defaults(run=cmd_ledger_list)
    grant = lsub.add_parser(
        "grant",
        parents=[ledger_opts],
        help="let a user see a dataset (the keeper's)",
        description="On a department server, let USER see the dataset DATASET (its key, or the "
        "start of it that dpcore ledger list shows): its releases count in the total of USER's "
        "files that share rows with it, its cap binds them, and USER may release on it.",
    )
    grant.add_argument("dataset", help="the dataset's key (8 characters of it at least)")
    grant.add_argument("user", help="the user name")
    grant.set_defaults(run=cmd_ledger_grant)
    default = lsub.add_parser(
        "default-cap",
        parents=[ledger_opts],
        help="the cap every new dataset gets (the keeper's)",
        description="Show or set the cap on epsilon that every dataset the ledger sees from now "
        "on starts with ($DPCORE_LEDGER_DEFAULT_CAP also sets one; the lower applies).",
    )
    default.add_argument("cap", type=_epsilon, nargs="?", help="the default cap (none: show it)")
    default.add_argument("--remove", action="store_true", help="remove it (needs --allow-raise)")
    default.add_argument("--allow-raise", action="store_true", help="allow raising or removing it")
    default.set_defaults(run=cmd_ledger_default_cap)

    dictionary = sub.add_parser(
        "dictionary",
        help="check a data dictionary",
        description="The public data dictionary (docs/dictionary.md).",
    )
    dsub = dictionary.add_subparsers(dest="dictionary_command", required=True, metavar="ACTION")
    check = dsub.add_parser(
        "check",
        help="list every problem of a dictionary (and of its trial file)",
        description="Read a data dictionary (JSON, CSV table or Frictionless Table Schema) and "
        "print every problem with where it is and its fix, what a private release "
        "still needs, and with --data how the trial file's columns and cells fit "
        "it. Exit 1 if there is any problem. Nothing is released or recorded.",
    )
    check.add_argument("dictionary", help="the data dictionary (JSON or CSV)")
    check.add_argument("--data", help="the trial's CSV file, to check against the dictionary")
    check.add_argument(
        "--encoding", default="utf-8", help="the CSV file's encoding (default utf-8)"
    )
    check.set_defaults(run=cmd_dictionary_check)

    sweep = sub.add_parser(
        "sweep",
        help="a DP-OWL Monte-Carlo sweep to CSV",
        description="Monte-Carlo study of DP-OWL on the paper's synthetic trial (no real data, "
        "no privacy spent): accuracy and value per (n, epsilon), mean and 95% CI.",
    )
    sweep.add_argument("--n", type=int, nargs="+", required=True, help="training sizes")
    sweep.add_argument(
        "--epsilon",
        type=_epsilon,
        nargs="+",
        required=True,
        help="privacy budgets ('inf' for non-private)",
    )
    sweep.add_argument("--gamma", type=float, help="fixed gamma (default: the paper's table)")
    sweep.add_argument("--reps", type=int, default=50, help="repetitions (default 50)")
    sweep.add_argument("--test-size", type=int, default=5000, help="test rows per repetition")
    sweep.add_argument("--seed", type=int, default=0)
    sweep.add_argument("--runs", action="store_true", help="one row per repetition, not summary")
    sweep.add_argument(
        "--scheduler",
        help="run on the dask.distributed cluster at this address "
        "(the dask extra); the table is the same",
    )
    sweep.add_argument("--out", help="CSV to write (default: standard output)")
    sweep.set_defaults(run=cmd_sweep)

    app = sub.add_parser(
        "app",
        help="start the dashboard (needs dpcore[app])",
        description="Start the Streamlit dashboard; extra arguments go to "
        "'streamlit run' (e.g. --server.port 8502).",
    )
    app.add_argument(
        "streamlit_args",
        nargs="*",
        metavar="STREAMLIT_ARG",
        help="passed to 'streamlit run' unchanged",
    )
    app.set_defaults(run=cmd_app)

    serve = sub.add_parser(
        "serve",
        help="several dashboard processes behind nginx (needs dpcore[app] and nginx)",
        description="Start --replicas Streamlit processes of the dashboard on free local ports, "
        "nginx in front of them on --port (sticky sessions by a route cookie, "
        "websockets passed through), and with --dask-workers a local Dask cluster "
        "for their uncached sweeps. The replicas share the results store "
        "($DPCORE_STORE) and the privacy ledger ($DPCORE_LEDGER) of this "
        "environment. Runs in the foreground; SIGTERM or Ctrl-C stops everything. "
        "docs/deploy.md says how to size it.",
    )
    serve.add_argument(
        "--replicas", type=int, default=2, help="app processes (default 2; about one per core)"
    )
    serve.add_argument("--port", type=int, default=8501, help="nginx's port (default 8501)")
    serve.add_argument(
        "--address",
        default="127.0.0.1",
        help="nginx's address (default 127.0.0.1: this machine only); any other address "
        "needs --auth (and, for htpasswd, --tls-cert and --tls-key), or --insecure-no-auth",
    )
    serve.add_argument(
        "--auth",
        nargs="+",
        metavar=("MODE", "FILE"),
        help="who is signed in: 'htpasswd FILE' (nginx's basic authentication against an "
        "htpasswd users file; every user in it is an analyst) or 'header' (a proxy on the "
        "loopback in front, such as oauth2-proxy, sets X-Dpcore-User). Each user then sees "
        "and releases on the datasets they registered or were granted",
    )
    serve.add_argument(
        "--keeper",
        action="append",
        default=[],
        metavar="NAME",
        help="a signed-in user who sees every dataset (the ledger's keeper); repeatable",
    )
    serve.add_argument(
        "--tls-cert", type=Path, help="TLS certificate (PEM): nginx listens with ssl"
    )
    serve.add_argument("--tls-key", type=Path, help="the certificate's private key (PEM)")
    serve.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="start on a non-loopback --address without authentication (or basic "
        "authentication without TLS) anyway, with a warning",
    )
    serve.add_argument(
        "--dask-workers",
        type=int,
        default=0,
        metavar="K",
        help="start a Dask scheduler and K one-thread workers on this machine "
        "for the sweeps (the dask extra; default 0: each replica's own pool)",
    )
    serve.add_argument(
        "--scheduler",
        help="send the sweeps to this running Dask scheduler instead (tcp://host:8786)",
    )
    serve.add_argument(
        "--nginx", help="the nginx program (default: nginx on PATH, or /usr/sbin/nginx)"
    )
    serve.add_argument(
        "--template", type=Path, help="nginx config template (default: deploy/nginx.conf.template)"
    )
    serve.add_argument(
        "--log-dir",
        type=Path,
        help="keep each process's log here (default: a temporary directory, removed at exit)",
    )
    serve.add_argument(
        "--timeout",
        type=float,
        default=90.0,
        help="seconds each process has to answer at start (default 90)",
    )
    serve.add_argument(
        "--no-warm-up",
        action="store_true",
        help="report ready without having each replica build the class's first view "
        "(the DP-OWL page's default link) first",
    )
    serve.set_defaults(run=cmd_serve)

    warm = sub.add_parser(
        "warm",
        help="precompute the dashboard's views into the results store (needs dpcore[app])",
        description="Compute every view the dashboard's main controls reach, at default secondary "
        "settings, into the shared results store (DPCORE_STORE), so that no user waits "
        "for them; resumable, in parallel, with a progress bar. Options: --only dp_owl "
        "cvar theory, --scheduler tcp://host:8786, --list, --limit K.",
    )
    warm.add_argument(
        "warm_args", nargs="*", metavar="OPTION", help="passed to python -m dpcore_app.warm"
    )
    warm.set_defaults(run=cmd_warm)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dpcore``; returns the exit code."""
    from dpcore._threads import limit_blas_threads

    limit_blas_threads()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["app"] and not {"-h", "--help"} & set(argv[1:2]):
        # Streamlit's own options (--server.port 8502) are not dpcore's: pass them unparsed.
        args = argparse.Namespace(command="app", run=cmd_app, streamlit_args=argv[1:])
    elif argv[:1] == ["warm"] and not {"-h", "--help"} & set(argv[1:2]):
        args = argparse.Namespace(command="warm", run=cmd_warm, warm_args=argv[1:])
    else:
        args = build_parser().parse_args(argv)
    try:
        code = args.run(args)
    except CliError as exc:
        print(f"dpcore: error: {exc}", file=sys.stderr)
        return exc.code
    except (
        ValueError,
        TypeError,
        KeyError,
        OSError,
        RuntimeError,
        sqlite3.Error,
        json.JSONDecodeError,
    ) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"dpcore {args.command}: error: {message}", file=sys.stderr)
        return EXIT_INPUT
    return int(code or 0)


def app_main() -> int:
    """The ``dpcore-app`` console script: ``dpcore app`` with Streamlit's arguments."""
    return main(["app", *sys.argv[1:]])


if __name__ == "__main__":
    raise SystemExit(main())
