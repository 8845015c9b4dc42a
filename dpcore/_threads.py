"""One BLAS thread per process, for the dashboard's server and the command line.

Every computation here is many small matrix products (solving a weighted ERM, Monte-Carlo
repetitions), and the dashboard runs several sessions' scripts at once: OpenBLAS's default of
one thread per core then has each product's threads contend with the other sessions' for the
same cores: two previews at once on a loaded two-core machine took 28-32 s each against
0.8-1.5 s with one thread each (``benchmarks/preview_latency.py --sessions 2``). Parallelism comes from processes and
sessions instead. A limit the user set in the environment is kept.
"""

from __future__ import annotations

import os
import sys

_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def limit_blas_threads(threads: int = 1) -> None:
    """Limit BLAS to ``threads`` per process, unless the environment already sets a limit.

    Effective through the environment while numpy is not yet imported (the variables are
    read when OpenBLAS loads, and child processes inherit them); once it is, through
    threadpoolctl when that is installed (the dashboard's ``app`` extra brings it).
    """
    if any(os.environ.get(v) for v in _VARIABLES):
        return
    for variable in _VARIABLES:
        os.environ[variable] = str(threads)
    if "numpy" in sys.modules:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # the core install: the environment is all we have
            return
        threadpool_limits(threads, user_api="blas")
