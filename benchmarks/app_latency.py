"""Server time of the DP-OWL page, measured with Streamlit's AppTest.

    python benchmarks/app_latency.py

The default view (n = 1000 and the comparison sizes 200, 500, 2500, 200 repetitions, the
full ε grid) first shows an estimate from 40 repetitions and then refines it in place; the
script times both, then moves of the ε slider and other controls. Goals: the first view
under 1.5 s, a redraw under 0.5 s.
"""

from __future__ import annotations

from apptest_timing import moves, open_page, report, timed  # benchmarks/ is on the path


def main():
    from dpcore_app.ui.owl import (
        compute as owl,  # after apptest_timing has put the repository on the path
    )

    sizes, args = (200, 500, 1000, 2500), ("paper", 75, 0.5, "auto")
    first = timed(lambda: owl.sweeps(sizes, *args, owl.QUICK_REPS, 0, "public"))
    print(
        f"first estimate of the default view ({owl.QUICK_REPS} repetitions, cold caches): "
        f"{first:.2f} s of simulation"
    )
    at, cold = open_page("dpcore_app/app_pages/dp_owl.py")
    print(f"first load, refined to 200 repetitions (the estimate was cached): {cold:.2f} s")
    report("ε slider move (cached)", moves(at, "eps", (0.5, 2.0, 5.0, 0.1, 1.0, 10.0, 100.0, 0.2)))
    n_new = timed(lambda: at.select_slider(key="n").set_value(800).run())
    n_back = timed(lambda: at.select_slider(key="n").set_value(1000).run())
    print(
        f"n to a new size (estimate, then refined): {n_new:.2f} s; back to a cached n: {n_back:.3f} s"
    )
    report(
        "metric switch", moves(at, "metric", ("value", "concordance", "accuracy"), "button_group")
    )


if __name__ == "__main__":
    main()
