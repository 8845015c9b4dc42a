"""``dpcore dictionary check``: what a data dictionary says, and what a release still needs."""

from __future__ import annotations

import argparse


def cmd_dictionary_check(args: argparse.Namespace) -> int:
    """Print every problem of a data dictionary (and of its trial file); exit 1 if any."""
    from ..data.dictionary.check import main as check

    return check(args.dictionary, args.data, encoding=args.encoding)
