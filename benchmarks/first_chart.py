"""Time to the first chart of each page in Chromium, against a bare four-chart page.

Starts the dashboard (on the results store named by ``DPCORE_STORE``: warm it first with
``dpcore warm``) and a bare Streamlit page with four Plotly charts (``bare_charts.py``), then
opens each page in a fresh browser context, ``--rounds`` times, alternating the pages, and
times from navigation to the first drawn chart (to the title on pages that have none).

    python benchmarks/first_chart.py [--rounds 5] [--width 1440]

Prints per page the median and the ratio to the bare page's median (goal: at most 1.3).
Needs Chromium ($DPCORE_CHROMIUM, else chromium on PATH) and the playwright package.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from playwright.async_api import async_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import CHROMIUM, CHROMIUM_ARGS, free_port, start_server  # noqa: E402

CHART = "[data-testid='stPlotlyChart'] .main-svg"
TITLE = "[data-testid='stMainBlockContainer'] h1"
PAGES = {
    "overview": ("", CHART),
    "dp-owl": ("dp-owl", CHART),
    "cvar": ("cvar", CHART),
    "theory": ("bounds", CHART),
    "your data": ("your-data", TITLE),
    "lessons": ("lessons", TITLE),
    "limitations": ("limitations", TITLE),
    "glossary": ("glossary", TITLE),
}


async def first_chart(browser, url, selector, width, timeout_ms=120_000):
    """Seconds from opening ``url`` in a fresh context ``width`` pixels wide (a phone's below
    800) until the first element ``selector`` shows."""
    context = await browser.new_context(
        viewport={"width": width, "height": 1600}, has_touch=width < 800, is_mobile=width < 800
    )
    page = await context.new_page()
    start = time.perf_counter()
    await page.goto(url)
    await page.locator(selector).first.wait_for(timeout=timeout_ms)
    seconds = time.perf_counter() - start
    await context.close()
    return seconds


async def run(args):
    app_port, bare_port = free_port(), free_port()
    app, bare = start_server(app_port), start_server(bare_port, "benchmarks/bare_charts.py")
    targets = {"bare page, four charts": (f"http://127.0.0.1:{bare_port}/", CHART)}
    targets |= {
        name: (f"http://127.0.0.1:{app_port}/{path}", sel) for name, (path, sel) in PAGES.items()
    }
    times = {name: [] for name in targets}
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for url, sel in targets.values():  # once each, not timed: server imports, caches
                await first_chart(browser, url, sel, args.width)
            for _ in range(args.rounds):
                for name, (url, sel) in targets.items():
                    times[name].append(await first_chart(browser, url, sel, args.width))
            await browser.close()
    finally:
        for proc in (app, bare):
            proc.terminate()
            proc.wait(timeout=30)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--width", type=int, default=1440)
    args = parser.parse_args()
    times = asyncio.run(run(args))
    floor = statistics.median(times["bare page, four charts"])
    print(
        f"Chromium at {args.width} px, {args.rounds} rounds, median time from navigation to the "
        "first chart (title where a page has none)"
    )
    for name, values in times.items():
        what = "title" if PAGES.get(name, ("", CHART))[1] == TITLE else "chart"
        med = statistics.median(values)
        print(f"  {name:24s} {med:5.2f} s  ({what})  {med / floor:4.2f}x the bare page")


if __name__ == "__main__":
    main()
