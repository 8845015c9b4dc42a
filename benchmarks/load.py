"""Many users at once: N browser sessions against a fresh server, moving sliders.

Each session opens the DP-OWL page with its own seed (so its sweeps are not cached by
anyone else), then every few seconds moves ε with the keyboard and now and then picks
another n (a new, uncached sweep). Reports the errors seen, the time each move takes to
settle, and the server's peak memory (resident set, sampled every 0.2 s).

    python benchmarks/load.py [--sessions 8] [--seconds 60] [--page /dp-owl]

Needs Chromium ($DPCORE_CHROMIUM, else chromium on PATH) and the playwright package. Traffic
stays on 127.0.0.1; the loop ends by itself after --seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.async_api import async_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's packages, and the browser tests' servers
from tests.e2e.servers import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    free_port,
    serve_command,
    streamlit_command,
    wait_until_healthy,
    wait_until_serving,
)

READY = "[data-testid='stApp'][data-test-script-state='notRunning']"
SETTLED = """() => {
    const app = document.querySelector("[data-testid='stApp']");
    const shown = (s) => [...document.querySelectorAll(s)].some((e) => e.getClientRects().length);
    return app && app.getAttribute("data-test-script-state") === "notRunning"
        && !document.querySelector("[data-stale='true']") && !shown("[data-testid='stProgress']");
}"""
ERRORS = "[data-testid='stException'], [data-testid='stAlertContentError']"
FIRST_VIEW = "[data-testid='stPlotlyChart'] .main-svg"  # the first chart drawn


def start_server(port, script="app.py"):
    """``streamlit run script`` on ``port``, once it answers its health check."""
    proc = subprocess.Popen(
        streamlit_command(port, script),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until_healthy(proc, f"http://127.0.0.1:{port}", 60)
    except RuntimeError:
        proc.kill()
        raise
    return proc


def start_serve(replicas):
    """``dpcore serve --replicas N`` on a free port; (process, proxy port, {name: pid}, the
    replicas' own ports)."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="dpcore-serve-", suffix=".log", delete=False)
    atexit.register(os.unlink, log.name)  # dpcore serve's own lines; its children log elsewhere
    proc = subprocess.Popen(
        serve_command(port, replicas),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    wait_until_serving(proc, Path(log.name), 180)
    text = Path(log.name).read_text()
    found = re.findall(r"replica (\d+): 127.0.0.1:(\d+) \(pid (\d+)\)", text)
    pids = {f"replica {k}": int(pid) for k, _, pid in found}
    ports = [int(p) for _, p, _ in found]
    for child in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split():
        if Path(f"/proc/{child}/comm").read_text().strip() == "nginx":
            pids["nginx"] = int(child)
    return proc, port, pids, ports


def rss_mb(pid):
    """Resident memory of the server process and its children, in MB."""
    total = 0
    for p in [pid] + [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total / 1024


def cpu_seconds(pid):
    """CPU time (user + system) the server process has used so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def watch_memory(pid, stop, peak):
    while not stop.is_set():
        peak[0] = max(peak[0], rss_mb(pid))
        await asyncio.sleep(0.2)


async def session(browser, base, k, seconds, page_path, stats):
    rng = random.Random(k)
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(180_000)
    start = time.perf_counter()
    await page.goto(f"{base}{page_path}?seed={100 + k}")
    await page.locator(FIRST_VIEW).first.wait_for()
    stats["first_view"].append(time.perf_counter() - start)
    await page.wait_for_selector(READY)
    await page.wait_for_function(SETTLED, polling=100)
    stats["first_load"].append(time.perf_counter() - start)
    slider = (
        page.locator("[data-testid='stSlider']")
        .filter(has=page.get_by_text("Privacy budget ε", exact=True))
        .get_by_role("slider")
    )
    n_slider = (
        page.locator("[data-testid='stSlider']")
        .filter(has=page.get_by_text("Patients in the trial (n)", exact=True))
        .get_by_role("slider")
    )
    end = start + seconds
    while time.perf_counter() < end:
        await asyncio.sleep(rng.uniform(1.0, 4.0))
        uncached = rng.random() < 0.2
        target = n_slider if uncached else slider
        await target.focus()
        t0 = time.perf_counter()
        await page.keyboard.press(rng.choice(["ArrowLeft", "ArrowRight"]))
        await page.wait_for_timeout(150)
        await page.wait_for_function(SETTLED, polling=100)
        stats["uncached" if uncached else "moves"].append(time.perf_counter() - t0)
        if await page.locator(ERRORS).count():
            stats["errors"].append((k, await page.locator(ERRORS).first.inner_text()))
    await context.close()


async def run(sessions, seconds, page_path):
    port = free_port()
    server = start_server(port)
    stats = {"first_view": [], "first_load": [], "moves": [], "uncached": [], "errors": []}
    peak, stop = [rss_mb(server.pid)], asyncio.Event()
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            monitor = asyncio.create_task(watch_memory(server.pid, stop, peak))
            results = await asyncio.gather(
                *(
                    session(browser, f"http://127.0.0.1:{port}", k, seconds, page_path, stats)
                    for k in range(sessions)
                ),
                return_exceptions=True,
            )
            stop.set()
            await monitor
            await browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    failed = [r for r in results if isinstance(r, Exception)]
    return stats, peak[0], failed


def describe(name, values):
    if not values:
        return f"{name}: none"
    q = statistics.quantiles(values, n=20, method="inclusive") if len(values) > 1 else values
    return (
        f"{name}: {len(values)}, median {statistics.median(values):.2f} s, "
        f"95th percentile {q[-1]:.2f} s, max {max(values):.2f} s"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--page", default="/dp-owl")
    args = parser.parse_args()
    stats, peak, failed = asyncio.run(run(args.sessions, args.seconds, args.page))
    print(f"{args.sessions} sessions for {args.seconds:g} s on {args.page}")
    print(describe("first view (a first estimate, charts drawn)", stats["first_view"]))
    print(describe("first load, settled (refined)", stats["first_load"]))
    print(describe("ε moves (cached)", stats["moves"]))
    print(describe("n moves (uncached sweep)", stats["uncached"]))
    print(f"errors shown: {len(stats['errors'])} {stats['errors'][:3]}")
    print(f"sessions that failed: {len(failed)} {[repr(f)[:200] for f in failed[:3]]}")
    print(f"peak server memory: {peak:.0f} MB")


if __name__ == "__main__":
    main()
