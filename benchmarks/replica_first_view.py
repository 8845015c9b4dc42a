"""A department's first minutes: the first view of each replica right after ``dpcore serve``
reports ready, with and without the replicas' warm-up.

Starts ``dpcore serve --replicas R`` (on the results store named by ``DPCORE_STORE``: warm it
first with ``dpcore warm --only dp_owl``), waits for it to report ready, then opens the DP-OWL
page's default link once on each replica (its own port, no other session before) in a fresh
Chromium context and times from navigation to the first drawn chart; then the same with
``--no-warm-up``. Prints the seconds to ready, each replica's first view, and a second
student's (the same link again, fresh context: the browser's own cost, the floor).

    DPCORE_STORE=/path/to/warm/store python benchmarks/replica_first_view.py [--replicas 2]

Needs nginx, Chromium ($DPCORE_CHROMIUM, else chromium on PATH) and the playwright package.
A measurement, never pass/fail.

    DPCORE_STORE=... python benchmarks/replica_first_view.py --script-runs 3

instead times the server side alone: in fresh processes, alternately with and without the
replica's warm-up, the script runs of a first session opening the DP-OWL link (AppTest).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.async_api import async_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from first_chart import first_chart  # noqa: E402
from load import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: E402  (puts ROOT on sys.path)

from tests.e2e.servers import wait_until_serving  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHART = "[data-testid='stPlotlyChart'] .main-svg"
READY_TIMEOUT_S = 600  # longer than the --timeout 300 that bounds each replica's start


def start_serve(replicas, warm_up, log):
    command = [sys.executable, "-m", "dpcore", "serve", "--replicas", str(replicas)]
    command += ["--port", str(free_port()), "--timeout", "300"]
    command += [] if warm_up else ["--no-warm-up"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    path = Path(log.name)
    wait_until_serving(proc, path, READY_TIMEOUT_S)
    ready = time.perf_counter() - start
    ports = [int(p) for p in re.findall(r"replica \d+: 127\.0\.0\.1:(\d+)", path.read_text())]
    return proc, ready, ports


async def measure(replicas, warm_up):
    with tempfile.NamedTemporaryFile("wb", suffix=".log") as log:
        proc, ready, ports = start_serve(replicas, warm_up, log)
        try:
            async with async_playwright() as p:
                browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                urls = [f"http://127.0.0.1:{q}/dp-owl" for q in ports]
                views = [await first_chart(browser, url, CHART, 1440, 180_000) for url in urls]
                again = [
                    await first_chart(browser, url, CHART, 1440, 180_000) for url in urls
                ]  # a second student
                await browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    return ready, views, again


def script_run(warm_up):
    """In this fresh process: the replica's warm-up (or none), then the server time of a first
    session opening the DP-OWL link (AppTest: the entry script, then the page's script)."""
    from apptest_timing import APP, AppTest

    if warm_up:
        from dpcore_app import replica

        with tempfile.TemporaryDirectory() as tmp:
            replica.warm_up(Path(tmp) / "done", wait=0)
    at = AppTest.from_file(APP, default_timeout=600)
    start = time.perf_counter()
    at.run()
    at.switch_page("dpcore_app/app_pages/dp_owl.py").run()
    assert not at.exception and at.get("plotly_chart"), [e.value for e in at.exception]
    return time.perf_counter() - start


def script_runs(rounds):
    """Each in a fresh process, alternating; {warm_up: [seconds]}."""
    out = {True: [], False: []}
    for _ in range(rounds):
        for warm_up in (True, False):
            flag = "--one-script-run-warm" if warm_up else "--one-script-run-cold"
            done = subprocess.run(
                [sys.executable, __file__, flag], capture_output=True, text=True, check=True
            )
            out[warm_up].append(float(done.stdout.strip().splitlines()[-1]))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument(
        "--script-runs", type=int, metavar="K", help="instead: K rounds of the script-run timing"
    )
    parser.add_argument("--one-script-run-warm", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--one-script-run-cold", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_script_run_warm or args.one_script_run_cold:
        print(script_run(args.one_script_run_warm))
        return
    if args.script_runs:
        runs = script_runs(args.script_runs)
        print("server time of a fresh process's first session on the DP-OWL link (AppTest):")
        for warm_up, values in runs.items():
            name = "after the warm-up" if warm_up else "without warm-up  "
            print(f"  {name}: " + ", ".join(f"{v:.2f} s" for v in values))
        return
    print(f"dpcore serve --replicas {args.replicas}, store {os.environ.get('DPCORE_STORE')}")
    for warm_up in (True, False):
        ready, views, again = asyncio.run(measure(args.replicas, warm_up))
        name = "with the warm-up   " if warm_up else "with --no-warm-up  "
        firsts = ", ".join(f"{v:.2f} s" for v in views)
        seconds = ", ".join(f"{v:.2f} s" for v in again)
        print(
            f"  {name} ready after {ready:5.1f} s; first DP-OWL chart per replica: {firsts}; "
            f"a second student's: {seconds}"
        )


if __name__ == "__main__":
    main()
