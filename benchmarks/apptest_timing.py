"""What the page benchmarks share: open a page in AppTest, time moves, print medians.

AppTest reruns the whole page on each move, so its figures are an upper bound for the fragment
reruns a browser triggers. The machine may be shared: the figures are medians.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
sys.path.insert(0, str(ROOT))  # the app's own packages (ui), as `streamlit run app.py` sees them


def timed(action):
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def open_page(page):
    """(AppTest on ``page``, seconds of its first load with cold caches)."""
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    cold = timed(lambda: at.switch_page(page).run())
    assert not at.exception, [e.value for e in at.exception]
    return at, cold


def moves(at, key, values, kind="select_slider"):
    widget = getattr(at, kind)(key=key)
    return [timed(lambda v=v: widget.set_value(v).run()) for v in values]


def report(name, times):
    print(
        f"{name}: median {statistics.median(times):.3f} s, max {max(times):.3f} s "
        f"over {len(times)} moves"
    )
