"""Input to redraw in Chromium when ε is dragged on a chart's own slider (no server round trip).

Starts the dashboard (on the results store named by ``DPCORE_STORE``: warm it first with
``dpcore warm``, or the first visit to each page simulates), opens each page's chart that
carries every ε of its grid as a slider step (``dpcore_app.ui.common.frames``), presses the
slider's handle and drags it one step at a time from one end of the grid to the other and back,
``--passes`` times. Each step is timed in the page, from the mouse move's event time to the first
animation frame after the chart's ``plotly_afterplot`` (the redraw that frame paints); the next
step waits until the chart is quiet. Counts the websocket frames the page sent while dragging
(there should be none: the server hears of the drag only when it ends), and times the one run
that follows the drag's end, from releasing the handle to the page drawn again at the chosen ε
(the server round trip that every ε step cost before).

    python benchmarks/client_redraw.py [--passes 1] [--width 1440]

Prints per page the median and the 95th percentile in milliseconds (goal: under 100 ms).
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
from load import CHROMIUM, CHROMIUM_ARGS, READY, free_port, start_server  # noqa: E402

RUNNING = "[data-testid='stApp']:not([data-test-script-state='notRunning'])"

#: page name -> (path, the key of the chart with its own ε slider)
PAGES = {
    "overview": ("", "noisy_count"),
    "dp-owl": ("dp-owl", "vs_n"),
    "cvar (against ε)": ("cvar", "errors"),
    "cvar (against n)": ("cvar?x=n", "errors"),
    "theory": ("bounds", "rates"),
}
#: Installed in the page: times each step from the input event to the frame after the redraw.
TIMER = """(key) => {
    const plot = document.querySelector(`.st-key-${key} .js-plotly-plot`);
    window.__redraws = [];
    window.__armed = false;
    window.addEventListener("mousemove", (event) => {
        if (window.__armed) { window.__armed = false; window.__input = event.timeStamp; }
    }, true);
    plot.on("plotly_afterplot", () => {
        if (window.__input === undefined) return;
        const input = window.__input;
        window.__input = undefined;
        requestAnimationFrame(() => window.__redraws.push(performance.now() - input));
    });
}"""


async def drag(page, key, passes):
    """Drag the chart's slider step by step; returns each step's milliseconds and the frames
    the page sent meanwhile."""
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
    chart = page.locator(f".st-key-{key}")
    await chart.scroll_into_view_if_needed()
    await page.evaluate(TIMER, key)
    ticks = [await t.bounding_box() for t in await chart.locator(".slider-tick-rect").all()]
    grip = await chart.locator(".slider-grip-rect").bounding_box()
    y = grip["y"] + grip["height"] / 2
    centre = lambda box: box["x"] + box["width"] / 2  # noqa: E731
    start = min(range(len(ticks)), key=lambda i: abs(centre(ticks[i]) - centre(grip)))
    order = list(range(start, -1, -1))
    for _ in range(passes):
        order += list(range(1, len(ticks))) + list(range(len(ticks) - 2, -1, -1))
    before = len(sent)
    await page.mouse.move(centre(grip), y)
    await page.mouse.down()
    for i in order[1:]:
        done = await page.evaluate("() => window.__redraws.length")
        await page.evaluate("() => { window.__armed = true; }")
        await page.mouse.move(centre(ticks[i]), y)
        await page.wait_for_function(f"() => window.__redraws.length > {done}", timeout=10_000)
        await page.wait_for_timeout(150)  # the chart settles (Streamlit keeps its new state)
    during = len(sent) - before
    start = time.perf_counter()
    await page.mouse.up()  # the page follows: one run on the server, then every chart redrawn
    await page.wait_for_selector(RUNNING, timeout=10_000)
    await page.wait_for_selector(READY, timeout=120_000)
    await page.locator(f".st-key-{key} .slider-grip-rect").wait_for()
    follows = time.perf_counter() - start
    return await page.evaluate("() => window.__redraws"), during, follows


async def run(args):
    port = free_port()
    server = start_server(port)
    results = {}
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for name, (path, key) in PAGES.items():
                context = await browser.new_context(viewport={"width": args.width, "height": 1000})
                page = await context.new_page()
                await page.goto(f"http://127.0.0.1:{port}/{path}")
                await page.wait_for_selector(READY, timeout=600_000)
                await page.locator(f".st-key-{key} .slider-grip-rect").wait_for(timeout=600_000)
                await page.wait_for_selector(READY, timeout=600_000)
                await page.wait_for_timeout(1000)
                results[name] = await drag(page, key, args.passes)
                await context.close()
            await browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=1)
    parser.add_argument("--width", type=int, default=1440)
    args = parser.parse_args()
    results = asyncio.run(run(args))
    print(
        f"Chromium at {args.width} px: input (a slider step while dragging) to the painted "
        "redraw, in the browser"
    )
    for name, (times, sent, follows) in results.items():
        p95 = statistics.quantiles(times, n=20)[-1]
        print(
            f"  {name:18s} median {statistics.median(times):5.0f} ms  p95 {p95:5.0f} ms  "
            f"({len(times)} steps; {sent} frames sent to the server while dragging); "
            f"the page followed the drag's end in {follows:.2f} s"
        )


if __name__ == "__main__":
    main()
