"""Server time of the Theory bounds page, measured with Streamlit's AppTest.

    python benchmarks/bounds_latency.py

First load of the page at its defaults (n = 500, ε = 1, paper-tuned γ: the Monte-Carlo
releases, the CVaR errors and every formula), then redraws: a display control (the stacked
bound form), moves back to cached settings, and moves to new settings (a fresh measurement).
AppTest reruns the whole page on each move, so these are upper bounds for the fragment reruns
a browser triggers. Goals: first load < 1.5 s, redraw < 0.5 s.
"""

from __future__ import annotations

import statistics

from apptest_timing import open_page, timed  # benchmarks/ is on the path


def main():
    at, cold = open_page("dpcore_app/app_pages/bounds.py")
    print(f"first load of the Theory bounds page (cold caches): {cold:.2f} s")
    form = [
        timed(lambda v=v: at.segmented_control(key="form").set_value(v).run())
        for v in ("printed", "re-derived") * 3
    ]
    print(
        f"redraw, switching the stacked form: median {statistics.median(form):.3f} s, "
        f"max {max(form):.3f} s over {len(form)}"
    )
    eps = at.select_slider(key="eps")
    new = [timed(lambda v=v: eps.set_value(v).run()) for v in (2.0, 5.0, 0.5)]
    print(
        f"ε to a new value (fresh measurement): median {statistics.median(new):.3f} s, "
        f"max {max(new):.3f} s"
    )
    back = [timed(lambda v=v: eps.set_value(v).run()) for v in (1.0, 2.0, 5.0, 0.5, 1.0)]
    print(
        f"ε back to a cached value: median {statistics.median(back):.3f} s, max {max(back):.3f} s"
    )
    alpha = [
        timed(lambda v=v: at.select_slider(key="alpha").set_value(v).run()) for v in (0.5, 2.0, 1.0)
    ]
    print(f"redraw, target α (formulas only): median {statistics.median(alpha):.3f} s")


if __name__ == "__main__":
    main()
