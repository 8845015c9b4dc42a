"""Server time of a page rerun (AppTest) on a warm results store: first views and main moves.

Run it twice with the same ``DPCORE_STORE``: the first process fills the store, the second
measures what every later process sees (the store warm, its own in-process caches cold).

    DPCORE_STORE=/tmp/warm python benchmarks/rerun_cost.py            # twice
    python benchmarks/rerun_cost.py --profile dpcore_app/app_pages/dp_owl.py    # pyinstrument, one page

AppTest reruns the whole page on each move (a browser reruns only the fragment), so these are
upper bounds. Prints, per page, the first view (in this process, then in a later session of it)
and the median and max of its main moves.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from apptest_timing import APP, AppTest, timed  # noqa: E402

# page: [(widget kind, key, values)] of its main controls
MOVES = {
    "dpcore_app/app_pages/overview.py": [],
    "dpcore_app/app_pages/dp_owl.py": [
        ("select_slider", "eps", [0.5, 2.0, 10.0, 0.1, 1.0]),
        ("select_slider", "n", [500, 1000]),
    ],
    "dpcore_app/app_pages/cvar.py": [
        ("select_slider", "eps", [0.5, 2.0, 10.0]),
        ("select_slider", "n", [1000, 2000]),
        ("select_slider", "tau", [0.1, 0.05]),
    ],
    "dpcore_app/app_pages/bounds.py": [
        ("select_slider", "eps", [0.5, 2.0, 1.0]),
        ("select_slider", "n", [500, 1000]),
    ],
    "dpcore_app/app_pages/your_data.py": [],
    "dpcore_app/app_pages/lessons.py": [],
    "dpcore_app/app_pages/glossary.py": [],
    "dpcore_app/app_pages/limitations.py": [],
}


def measure(page):
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    first = timed(lambda: at.switch_page(page).run())
    assert not at.exception, [e.value for e in at.exception]
    again = timed(lambda: at.run())
    moves = []
    for kind, key, values in MOVES[page]:
        try:
            widget = getattr(at, kind)(key=key)
        except KeyError:
            print(f"  ({page}: no {kind} {key!r})")
            continue
        for v in values:
            moves.append(timed(lambda w=widget, v=v: w.set_value(v).run()))
            assert not at.exception, [e.value for e in at.exception]
    return first, again, moves


def profile(page):
    """pyinstrument inside the script thread (AppTest runs the page off the main thread)."""
    from pyinstrument import Profiler
    from streamlit.runtime.scriptrunner import script_runner

    measure(page)  # fills the store and this process's caches
    prof = Profiler(interval=0.001)
    real = script_runner.ScriptRunner._run_script

    def run(self, *a, **k):
        prof.start() if not prof.is_running else None
        try:
            return real(self, *a, **k)
        finally:
            prof.stop()

    script_runner.ScriptRunner._run_script = run
    measure(page)
    print(prof.output_text(unicode=True, color=False, show_all=False))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--profile", help="profile one page's first view and moves with pyinstrument"
    )
    parser.add_argument("--pages", nargs="*", default=list(MOVES))
    args = parser.parse_args()
    if args.profile:
        profile(args.profile)
        return
    for page in args.pages:
        first, again, moves = measure(page)
        later = measure(page)[0]  # a new session of the same server: its in-process caches warm
        text = (
            f"{page}: first view {first:.3f} s (a later session's {later:.3f} s), "
            f"rerun {again:.3f} s"
        )
        if moves:
            text += f", moves median {statistics.median(moves):.3f} s, max {max(moves):.3f} s ({len(moves)})"
        print(text, flush=True)


if __name__ == "__main__":
    main()
