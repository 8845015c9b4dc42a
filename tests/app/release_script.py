"""The Your data page's Python script download, run as the analyst runs it."""

import os
import subprocess
import sys
from pathlib import Path

from dpcore import load_rule

ROOT = Path(__file__).resolve().parents[2]


def run_script(folder, script, timeout=120):
    """Run the page's script download in a subprocess (the ledger file is the test's own,
    through DPCORE_LEDGER); returns the rule it wrote."""
    (folder / "release_again.py").write_text(script)
    done = subprocess.run(
        [sys.executable, "release_again.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    return load_rule(folder / "rule.json")
