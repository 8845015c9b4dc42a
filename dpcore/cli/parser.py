"""The argument parser of ``dpcore`` (its ``--help`` texts are the documentation)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .apply import cmd_apply
from .common import epsilon_arg
from .dictionary import cmd_dictionary_check
from .fit import cmd_fit
from .ledger import (
    cmd_ledger_cap,
    cmd_ledger_default_cap,
    cmd_ledger_grant,
    cmd_ledger_list,
    cmd_ledger_show,
)
from .serve import cmd_app, cmd_serve, cmd_warm
from .sweep import cmd_sweep


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``dpcore`` (its ``--help`` texts are the documentation)."""
    from .._version import __version__

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
        "--epsilon", type=epsilon_arg, required=True, help="privacy budget of the release"
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
        "--perturbation",
        choices=("output", "objective"),
        default="output",
        help="how DP-OWL's release is noised: 'output' (default, the paper's Algorithm 1) or "
        "'objective' (objective perturbation of the weighted ERM: more accurate per epsilon "
        "on the paper's trial; known randomization only; docs/objective.md)",
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
        type=epsilon_arg,
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
    cap.add_argument("cap", type=epsilon_arg, nargs="?", help="largest total epsilon")
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
    default.add_argument("cap", type=epsilon_arg, nargs="?", help="the default cap (none: show it)")
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
        type=epsilon_arg,
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
