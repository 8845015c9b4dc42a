"""``dpcore apply``: a released rule's recommendations for new patients."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import CliError, need, read_bytes


def cmd_apply(args: argparse.Namespace) -> None:
    """Recommendations of a rule file for the rows of a CSV file."""
    import numpy as np

    from ..data.csv_io import read_table
    from ..data.csv_safe import write_csv

    (load_rule,) = need("dpcore.owl.rule_read", ("load_rule",), "apply")
    rule = load_rule(Path(args.rule))
    out = rule.recommendations(read_table(read_bytes(args.data)))
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
