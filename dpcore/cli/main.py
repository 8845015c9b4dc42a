"""Running ``dpcore``: parse, dispatch to a command, turn its errors into one line and an exit code."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Sequence

from .common import EXIT_INPUT, CliError
from .parser import build_parser
from .serve import cmd_app, cmd_warm


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
