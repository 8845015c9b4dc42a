"""``dpcore sweep``: DP-OWL's Monte-Carlo experiment from the command line."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any


def cmd_sweep(args: argparse.Namespace) -> None:
    """A DP-OWL Monte-Carlo sweep on the paper's synthetic trial, summarised to CSV."""
    from ..owl.experiments import owl_monte_carlo

    gamma: Any = "paper" if args.gamma is None else args.gamma
    with contextlib.ExitStack() as stack:
        executor = None
        if args.scheduler:  # the cells run on a dask cluster; the same table as the local pool
            from ..montecarlo import cluster_client

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
    from ..data.csv_safe import write_csv

    table = result.runs if args.runs else result.summary
    write_csv(table, args.out if args.out not in (None, "-") else sys.stdout)
