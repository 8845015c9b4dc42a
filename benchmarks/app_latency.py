"""Server time of the dashboard's interactions, measured with Streamlit's AppTest.

    python benchmarks/app_latency.py

Loads the DP-OWL page at its default view (n = 1000, 200 repetitions, the full ε grid, plus
the comparison sizes), then times moves of the ε slider and other controls. AppTest reruns the
whole page on each move, so the figures are an upper bound for the fragment reruns a browser
triggers.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest


def timed(action):
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main():
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=600)
    at.run()
    cold = timed(lambda: at.switch_page("app_pages/dp_owl.py").run())
    print(f"first load of the DP-OWL page (cold caches): {cold:.2f} s")
    eps = at.select_slider(key="eps")
    moves = []
    for value in (0.5, 2.0, 5.0, 0.1, 1.0, 10.0, 100.0, 0.2):
        moves.append(timed(lambda v=value: eps.set_value(v).run()))
    print(f"ε slider move (cached): median {statistics.median(moves):.3f} s, "
          f"max {max(moves):.3f} s over {len(moves)} moves")
    n_new = timed(lambda: at.select_slider(key="n").set_value(800).run())
    n_back = timed(lambda: at.select_slider(key="n").set_value(1000).run())
    print(f"n slider to a new n (one fresh sweep): {n_new:.2f} s; back to a cached n: {n_back:.3f} s")
    scale = timed(lambda: at.radio(key="scale").set_value("paper").run())
    print(f"switching the outcome scale: {scale:.3f} s")


if __name__ == "__main__":
    main()
