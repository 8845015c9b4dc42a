"""One BLAS thread per process for the dashboard and the command line (dpcore._threads).

Several sessions of one server, or several analysts, run their matrix products at once: with
OpenBLAS's default of one thread per core, two previews at once took three times as long
(``benchmarks/preview_latency.py --sessions 2``). Each check runs in a fresh interpreter, where
numpy is not yet loaded, with the thread variables this test process inherited removed.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("threadpoolctl")

ROOT = Path(__file__).resolve().parents[2]
VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
BLAS_THREADS = (
    "from threadpoolctl import threadpool_info; "
    "print([i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'])"
)


def blas_threads(code, **env):
    """The BLAS pools' thread counts after ``code``, in a fresh interpreter."""
    clean = {k: v for k, v in os.environ.items() if k not in VARIABLES}
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport numpy\n{BLAS_THREADS}"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={**clean, "PYTHONPATH": str(ROOT), **env},
    )
    assert done.returncode == 0, done.stderr
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: BLAS uses one thread anyway")
def test_the_default_is_a_thread_per_core_and_the_limit_is_one():
    """The check can fail: without the limit, OpenBLAS takes a thread per core."""
    assert max(blas_threads("pass")) > 1
    assert blas_threads("from dpcore._threads import limit_blas_threads; limit_blas_threads()") == [
        1
    ]


def test_the_limit_holds_when_numpy_is_already_loaded():
    code = "import numpy; from dpcore._threads import limit_blas_threads; limit_blas_threads()"
    assert blas_threads(code) == [1]


def test_a_limit_the_user_set_is_kept():
    code = "from dpcore._threads import limit_blas_threads; limit_blas_threads()"
    assert blas_threads(code, OPENBLAS_NUM_THREADS="2") == [2]


def test_the_command_line_limits_blas_before_numpy_loads():
    code = "from dpcore import cli\ntry:\n    cli.main(['--version'])\nexcept SystemExit:\n    pass"
    assert blas_threads(code) == [1]


def test_the_dashboard_limits_blas_before_anything_loads_numpy():
    """The entry script's first statement after its standard-library imports is the limit: every
    later import (Streamlit, pandas, the pages) may load numpy. The checkout's app.py imports the
    entry script first, and the package it sits in imports the standard library alone."""
    launcher = ast.parse((ROOT / "app.py").read_text()).body
    assert ast.unparse(launcher[1]) == "from dpcore_app.app import main"
    package = ast.parse((ROOT / "dpcore_app" / "__init__.py").read_text()).body
    assert all(
        node.module in ("__future__", "pathlib")
        for node in package
        if isinstance(node, (ast.Import, ast.ImportFrom))
    )
    tree = ast.parse((ROOT / "dpcore_app" / "app.py").read_text())
    body = [
        node
        for node in tree.body
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ]
    stdlib = set(sys.stdlib_module_names)

    def standard(node):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
        return isinstance(node, (ast.Import, ast.ImportFrom)) and all(
            n.split(".")[0] in stdlib for n in names
        )

    first = next(node for node in body if not standard(node))
    assert isinstance(first, ast.ImportFrom) and first.module == "dpcore._threads", ast.dump(first)
    call = body[body.index(first) + 1]
    assert ast.unparse(call) == "limit_blas_threads()"
