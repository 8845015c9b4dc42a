"""The ``dpcore`` command line: batch use of the science core (``dpcore --help``).

Every subcommand documents itself with ``--help``. Errors are one line on standard error
with an exit code: 1 for bad input, 2 for bad arguments (argparse), 3 when a needed part of
dpcore or an optional extra is missing. Private releases made here are recorded in the
same durable ledger as the dashboard's, so the budget of a dataset counts both.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
        raise CliError(f"{what} needs {module}.{'/'.join(names)}, which this version of dpcore "
                       "does not have", EXIT_MISSING) from None


def _ledger(path: str | None, data: bytes, name: str, budget: float | None = None) -> Any:
    """The dataset's durable ledger (SQLite), keyed like the app's."""
    PrivacyLedger, dataset_key, default_path = _need(
        "dpcore.privacy.accounting", ("PrivacyLedger", "dataset_key", "default_ledger_path"),
        "the durable privacy ledger")
    if not hasattr(PrivacyLedger, "open"):
        raise CliError("the durable privacy ledger (PrivacyLedger.open) is not in this version "
                       "of dpcore; refusing to release without recording it", EXIT_MISSING)
    path = path or default_path()
    # the key is salted by the ledger file, so a key made for one file never matches another
    return PrivacyLedger.open(path, dataset_key(data, name, path=path), budget=budget)


def _read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------------------------
# Subcommands


def cmd_fit(args: argparse.Namespace) -> None:
    """Fit a private DP-OWL rule, record it in the ledger, write the rule file."""
    import warnings

    import numpy as np

    from . import DPOWL, read_trial
    from .owl.owl import default_weight_bound
    from .owl.paper import PAPER_W, paper_gamma

    (read_dictionary,) = _need("dpcore.data.dictionary", ("read_dictionary",), "fit")
    rule_from_dpowl, write_rule = _need("dpcore.owl.release", ("rule_from_dpowl", "write_rule"),
                                        "fit")
    data = _read_bytes(args.data)
    d = read_dictionary(Path(args.dictionary))
    # Every row kept, as the app does: n is the file's row count and an incomplete row gets
    # weight 0; a level outside the dictionary's public list reads as the baseline.
    trial = read_trial(data, **{**d.read_trial_kwargs(), "incomplete": "keep",
                                "unknown_levels": "baseline"})
    propensity = d.propensity if trial.propensity is None else trial.propensity
    if propensity is None:
        raise CliError("the dictionary gives no randomization probability (propensity) and the "
                       "file has no propensity column")
    if d.outcome_bounds is None:
        raise CliError("the dictionary gives no public bounds for the outcome")
    W = args.weight_bound
    if W is None:
        p_min = propensity if np.ndim(propensity) == 0 else d.min_propensity
        if p_min is None:
            raise CliError("give --weight-bound (or min_propensity in the dictionary): the "
                           "propensity is per row")
        W = default_weight_bound(d.outcome_bounds, p_min)
    # n is public: the file's row count, never the count after incomplete rows are dropped.
    n = trial.n + trial.n_dropped
    # The paper's tuned gamma is for W = 30; scaling W, the weights and gamma together
    # leaves the release's distribution unchanged.
    gamma = args.gamma if args.gamma is not None else paper_gamma(args.epsilon, n) * W / PAPER_W
    rule = DPOWL(epsilon=args.epsilon, gamma=gamma, weight_bound=W, C=args.C,
                 feature_bounds=trial.feature_bounds(d.bounds), outcome_bounds=d.outcome_bounds,
                 larger_is_better=bool(d.larger_is_better is not False), rng=args.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # clipping diagnostics are about the data: not shown
        rule.fit_trial(trial, propensity)
    ledger = _ledger(args.ledger, data, args.name)
    ledger.record("DP-OWL rule (dpcore fit)", args.epsilon)  # raises past the cap: no file
    released = rule_from_dpowl(rule, trial, n=n, gamma_source="dpcore fit",
                               propensity=propensity if np.ndim(propensity) == 0 else "per row")
    write_rule(released, args.out)
    eps, _ = ledger.total()
    print(f"wrote {args.out}: epsilon={args.epsilon:g} spent; this dataset's total is {eps:g}")


def cmd_apply(args: argparse.Namespace) -> None:
    """Recommendations of a rule file for the rows of a CSV file."""
    from .data.csv_io import read_table

    (load_rule,) = _need("dpcore.owl.release", ("load_rule",), "apply")
    rule = load_rule(Path(args.rule))
    table = read_table(_read_bytes(args.data))
    out = table.copy()
    out["recommendation"] = rule.recommend(table)
    text = io.StringIO()
    out.to_csv(text, index=False)
    if args.out in (None, "-"):
        sys.stdout.write(text.getvalue())
    else:
        Path(args.out).write_text(text.getvalue(), encoding="utf-8")


def cmd_ledger_show(args: argparse.Namespace) -> None:
    """Print a dataset's recorded releases and total."""
    ledger = _ledger(args.ledger, _read_bytes(args.data), args.name)
    for e in ledger.entries:
        print(f"{e.timestamp:%Y-%m-%d %H:%M:%S}Z  epsilon={e.epsilon:g}  delta={e.delta:g}  "
              f"{e.mechanism}")
    eps, delta = ledger.total()
    cap = "none" if ledger.budget is None else f"{ledger.budget:g}"
    print(f"total epsilon={eps:g} delta={delta:g} over {len(ledger.entries)} release(s); cap {cap}")


def cmd_ledger_cap(args: argparse.Namespace) -> None:
    """Set, lower or (with --allow-raise) raise a dataset's cap."""
    ledger = _ledger(args.ledger, _read_bytes(args.data), args.name)
    ledger.set_budget(args.cap, allow_raise=args.allow_raise)
    print(f"cap set to epsilon={args.cap:g}; {ledger.total()[0]:g} spent")


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
        result = owl_monte_carlo(args.n, args.epsilon, gamma=gamma, reps=args.reps,
                                 test_size=args.test_size, seed=args.seed, executor=executor)
    table = result.runs if args.runs else result.summary
    table.to_csv(args.out if args.out not in (None, "-") else sys.stdout, index=False)


def _app_files() -> tuple[Path, list[str]]:
    """app.py and Streamlit's flags from the app's config.toml (source tree or installed)."""
    import importlib.util

    spec = importlib.util.find_spec("app_pages")
    if spec is None or not spec.submodule_search_locations:
        raise CliError("the dashboard's files are not installed (app_pages not found)",
                       EXIT_MISSING)
    root = Path(list(spec.submodule_search_locations)[0]).parent
    config = next((p for p in (root / ".streamlit" / "config.toml",
                               Path(sys.prefix) / "share" / "dpcore" / ".streamlit" / "config.toml")
                   if p.is_file()), None)
    flags: list[str] = []
    if config is not None and not (root / ".streamlit" / "config.toml").is_file():
        import tomllib

        for section, options in tomllib.loads(config.read_text()).items():
            flags += [f"--{section}.{k}={v}" for k, v in options.items()]
    return root / "app.py", flags


def cmd_app(args: argparse.Namespace) -> int:
    """Start the dashboard with Streamlit (the ``app`` extra)."""
    import importlib.util

    if importlib.util.find_spec("streamlit") is None:
        raise CliError("the dashboard needs the app extra: pip install 'dpcore[app]'",
                       EXIT_MISSING)
    app, flags = _app_files()
    command = [sys.executable, "-m", "streamlit", "run", str(app), *flags, *args.streamlit_args]
    return subprocess.call(command, cwd=app.parent)


def cmd_warm(args: argparse.Namespace) -> int:
    """Precompute the dashboard's views into the shared results store (the ``app`` extra)."""
    import importlib.util

    if importlib.util.find_spec("streamlit") is None:
        raise CliError("warming the dashboard's views needs the app extra: pip install 'dpcore[app]'",
                       EXIT_MISSING)
    app, _ = _app_files()
    command = [sys.executable, "-m", "ui.warm", *args.warm_args]
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
        prog="dpcore", description="Private treatment rules and their privacy ledger, from the "
                                   "command line. Each command has its own --help.")
    parser.add_argument("--version", action="version", version=f"dpcore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ledger_opts = argparse.ArgumentParser(add_help=False)
    ledger_opts.add_argument("--ledger", metavar="PATH",
                             help="the ledger's SQLite file (default: the app's)")
    ledger_opts.add_argument("--name", default="", help="the dataset's name in the ledger")

    fit = sub.add_parser(
        "fit", parents=[ledger_opts], help="fit a private treatment rule to a rule JSON",
        description="Fit a private DP-OWL rule on a trial CSV with its public data dictionary "
                    "(bounds, levels, design), record the release in the dataset's ledger and "
                    "write the rule file. Each run is a new release: it spends epsilon again.")
    fit.add_argument("data", help="the trial's CSV file")
    fit.add_argument("--dictionary", required=True, help="its public data dictionary (JSON or CSV)")
    fit.add_argument("--epsilon", type=_epsilon, required=True, help="privacy budget of the release")
    fit.add_argument("--gamma", type=float, help="regularization (default: the paper's tuned "
                     "gamma at this n and epsilon, scaled to W)")
    fit.add_argument("--weight-bound", type=float, help="public weight bound W (default "
                     "(hi - lo) / min propensity)")
    fit.add_argument("--C", type=float, default=0.0, help="the paper's constant C (default 0: "
                     "known propensities)")
    fit.add_argument("--seed", type=int, help="noise seed (only to reproduce a test)")
    fit.add_argument("--out", default="rule.json", help="rule file to write (default rule.json)")
    fit.set_defaults(run=cmd_fit)

    apply = sub.add_parser(
        "apply", help="recommend arms for new patients with a rule JSON",
        description="Apply a rule file to a CSV of new patients (the columns the rule names, in "
                    "original units); write the rows with a 'recommendation' column.")
    apply.add_argument("rule", help="the rule JSON written by 'dpcore fit' or the app")
    apply.add_argument("data", help="CSV of patients")
    apply.add_argument("--out", help="CSV to write (default: standard output)")
    apply.set_defaults(run=cmd_apply)

    ledger = sub.add_parser("ledger", help="show a dataset's ledger or set its cap",
                            description="The durable privacy ledger of one dataset.")
    lsub = ledger.add_subparsers(dest="ledger_command", required=True, metavar="ACTION")
    show = lsub.add_parser("show", parents=[ledger_opts], help="the releases and their total")
    show.add_argument("data", help="the dataset's CSV file (its bytes are the key)")
    show.set_defaults(run=cmd_ledger_show)
    cap = lsub.add_parser("cap", parents=[ledger_opts], help="set or lower the cap on epsilon")
    cap.add_argument("data", help="the dataset's CSV file")
    cap.add_argument("cap", type=_epsilon, help="largest total epsilon")
    cap.add_argument("--allow-raise", action="store_true", help="allow raising an existing cap")
    cap.set_defaults(run=cmd_ledger_cap)

    dictionary = sub.add_parser("dictionary", help="check a data dictionary",
                                description="The public data dictionary (docs/dictionary.md).")
    dsub = dictionary.add_subparsers(dest="dictionary_command", required=True, metavar="ACTION")
    check = dsub.add_parser(
        "check", help="list every problem of a dictionary (and of its trial file)",
        description="Read a data dictionary (JSON, CSV table or Frictionless Table Schema) and "
                    "print every problem with where it is and its fix, what a private release "
                    "still needs, and with --data how the trial file's columns and cells fit "
                    "it. Exit 1 if there is any problem. Nothing is released or recorded.")
    check.add_argument("dictionary", help="the data dictionary (JSON or CSV)")
    check.add_argument("--data", help="the trial's CSV file, to check against the dictionary")
    check.add_argument("--encoding", default="utf-8", help="the CSV file's encoding (default utf-8)")
    check.set_defaults(run=cmd_dictionary_check)

    sweep = sub.add_parser(
        "sweep", help="a DP-OWL Monte-Carlo sweep to CSV",
        description="Monte-Carlo study of DP-OWL on the paper's synthetic trial (no real data, "
                    "no privacy spent): accuracy and value per (n, epsilon), mean and 95%% CI.")
    sweep.add_argument("--n", type=int, nargs="+", required=True, help="training sizes")
    sweep.add_argument("--epsilon", type=_epsilon, nargs="+", required=True,
                       help="privacy budgets ('inf' for non-private)")
    sweep.add_argument("--gamma", type=float, help="fixed gamma (default: the paper's table)")
    sweep.add_argument("--reps", type=int, default=50, help="repetitions (default 50)")
    sweep.add_argument("--test-size", type=int, default=5000, help="test rows per repetition")
    sweep.add_argument("--seed", type=int, default=0)
    sweep.add_argument("--runs", action="store_true", help="one row per repetition, not summary")
    sweep.add_argument("--scheduler", help="run on the dask.distributed cluster at this address "
                                           "(the dask extra); the table is the same")
    sweep.add_argument("--out", help="CSV to write (default: standard output)")
    sweep.set_defaults(run=cmd_sweep)

    app = sub.add_parser("app", help="start the dashboard (needs dpcore[app])",
                         description="Start the Streamlit dashboard; extra arguments go to "
                                     "'streamlit run' (e.g. --server.port 8502).")
    app.add_argument("streamlit_args", nargs="*", metavar="STREAMLIT_ARG",
                     help="passed to 'streamlit run' unchanged")
    app.set_defaults(run=cmd_app)

    warm = sub.add_parser(
        "warm", help="precompute the dashboard's views into the results store (needs dpcore[app])",
        description="Compute every view the dashboard's main controls reach, at default secondary "
                    "settings, into the shared results store (DPCORE_STORE), so that no user waits "
                    "for them; resumable, in parallel, with a progress bar. Options: --only dp_owl "
                    "cvar theory, --scheduler tcp://host:8786, --list, --limit K.")
    warm.add_argument("warm_args", nargs="*", metavar="OPTION", help="passed to python -m ui.warm")
    warm.set_defaults(run=cmd_warm)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dpcore``; returns the exit code."""
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
    except (ValueError, TypeError, KeyError, OSError, json.JSONDecodeError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"dpcore {args.command}: error: {message}", file=sys.stderr)
        return EXIT_INPUT
    return int(code or 0)


def app_main() -> int:
    """The ``dpcore-app`` console script: ``dpcore app`` with Streamlit's arguments."""
    return main(["app", *sys.argv[1:]])


if __name__ == "__main__":
    raise SystemExit(main())
