"""Server time of the private CVaR page, measured with Streamlit's AppTest.

    python benchmarks/cvar_latency.py

Targets (README): first load at the defaults under 1.5 s, a redraw after a slider move under
0.5 s. AppTest reruns the whole page on each move, so the figures are an upper bound for the
fragment reruns a browser triggers. The machine is shared: figures are medians.
"""

from __future__ import annotations

from apptest_timing import moves, open_page, report, timed  # benchmarks/ is on the path


def main():
    at, cold = open_page("dpcore_app/app_pages/cvar.py")
    print(f"first load of the CVaR page at its defaults (cold caches): {cold:.2f} s")
    report("ε slider move (cached)", moves(at, "eps", (0.5, 2.0, 5.0, 0.1, 1.0, 10.0, 0.2, 1.0)))
    report("n slider move (cached)", moves(at, "n", (500, 5000, 100, 2000)))
    report("τ slider move", moves(at, "tau", (0.01, 0.2, 1.0, 0.05)))
    report("x-axis switch", moves(at, "x", ("n", "tau", "eps_n_tau", "epsilon"), "button_group"))
    report("M change (new exponential-mechanism study)", moves(at, "M", (101, 301, 31)))
    for kind in ("beta", "two-point", "heavy-tailed"):
        fresh = timed(lambda k=kind: at.selectbox(key="loss").set_value(k).run())
        print(f"loss law {kind} (one fresh sweep): {fresh:.2f} s")
    convex = timed(lambda: at.button(key="run_convex").click().run())
    print(f"convex study on request (d = 2, 10, 50): {convex:.2f} s")
    assert not at.exception, [e.value for e in at.exception]


if __name__ == "__main__":
    main()
