"""What a browser sees when the app process behind its session dies: ``dpcore serve
--replicas 2``, one Chromium tab on each replica, a private release recorded from the first,
then SIGKILL of the first tab's replica.

Reports, from the kill on: when the first tab shows Streamlit's connection notice, when it
is running a page again (now on the other replica, through the proxy), what its page and its
sidebar's ledger total then read, the ledger total after a reload (a new session), and how
long a slider move takes on the second tab before and after.

    python benchmarks/replica_kill.py [--shots DIR]

Needs nginx, Debian's Chromium and the playwright package. Traffic stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import CHROMIUM, CHROMIUM_ARGS, READY, SETTLED, start_serve  # noqa: E402

SIDEBAR = "[data-testid='stSidebar']"
STATUS = "[data-testid='stStatusWidget']"


def settle(page, timeout=120_000):
    page.wait_for_timeout(300)
    page.wait_for_selector(READY, timeout=timeout)
    page.wait_for_function(SETTLED, polling=100, timeout=timeout)


def tab_on(browser, base, path, replica, tries=12):
    """A fresh tab (its own route cookie) whose session landed on ``replica``."""
    for _ in range(tries):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        response = page.goto(base + path)
        if response.headers.get("x-dpcore-replica") == str(replica):
            settle(page)
            return page
        context.close()
    raise RuntimeError(f"no tab landed on replica {replica} in {tries} tries")


def open_demo(page):
    page.get_by_text("demo: paper's trial (1:1)").click()
    settle(page)
    page.get_by_role("button", name="Fill in from the data dictionary").click()
    settle(page)


def sidebar_total(page):
    text = page.locator(SIDEBAR).inner_text()
    return next((line for line in text.splitlines() if line.startswith("ε = ")), text[:120])


def move(page, label="Privacy budget ε"):
    thumb = (
        page.locator("[data-testid='stSlider']")
        .filter(has=page.get_by_text(label, exact=True))
        .get_by_role("slider")
    )
    thumb.focus()
    start = time.perf_counter()
    page.keyboard.press("ArrowLeft")
    settle(page)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shots", type=Path, help="save screenshots here")
    args = parser.parse_args()
    os.environ.setdefault("DPCORE_LEDGER", str(Path(tempfile.mkdtemp()) / "ledger.sqlite"))
    serve, port, pids, _ = start_serve(2)
    base = f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            first = tab_on(browser, base, "/your-data", 1)
            other = tab_on(browser, base, "/dp-owl", 2)
            open_demo(first)
            first.get_by_role("button", name="Release private rule at ε = 1").click()
            settle(first)
            print(f"before the kill, tab 1 (replica 1) sidebar: {sidebar_total(first)!r}")
            before = [move(other) for _ in range(3)]
            print(f"tab 2 (replica 2) ε moves before: {', '.join(f'{s:.2f}' for s in before)} s")

            os.kill(pids["replica 1"], signal.SIGKILL)
            killed = time.perf_counter()
            notice = None
            while time.perf_counter() - killed < 60:
                shown = first.locator(STATUS).all_inner_texts()
                if notice is None and shown:
                    notice = (time.perf_counter() - killed, " ".join(shown).strip())
                if notice and not first.locator(STATUS).count() and first.locator(READY).count():
                    break
                first.wait_for_timeout(100)
            back = time.perf_counter() - killed
            if args.shots:
                args.shots.mkdir(parents=True, exist_ok=True)
                first.screenshot(path=str(args.shots / "replica_kill_tab1_after.png"))
            print(
                f"tab 1: notice {notice[1]!r} after {notice[0]:.2f} s"
                if notice
                else "tab 1: no connection notice seen"
            )
            print(f"tab 1: running again (no notice, script idle) {back:.2f} s after the kill")
            settle(first)
            if args.shots:
                first.screenshot(path=str(args.shots / "replica_kill_tab1_settled.png"))
            released = first.get_by_role("heading", name="Private treatment rule (ε = 1)").count()
            print(
                f"tab 1 after reconnecting, settled: sidebar {sidebar_total(first)!r}; the demo "
                f"{'still' if first.get_by_text('demo: paper' + chr(39) + 's trial (1:1)').count() else 'no longer'} "
                f"chosen; the released rule {'still' if released else 'no longer'} shown"
            )
            # The next interaction on tab 1 runs the page on its new replica: what is left?
            seconds = move(first, "ε_eval (evaluation)")
            if args.shots:
                first.screenshot(path=str(args.shots / "replica_kill_tab1_next_move.png"))
            released = first.get_by_role("heading", name="Private treatment rule (ε = 1)").count()
            print(
                f"tab 1, its next move ({seconds:.2f} s): sidebar {sidebar_total(first)!r}; the "
                f"released rule {'still' if released else 'no longer'} shown"
            )
            # A whole run of the page in the session on its new replica: away and back.
            first.locator(SIDEBAR).get_by_role("link", name="Overview").click()
            settle(first)
            first.locator(SIDEBAR).get_by_role("link", name="Your data").click()
            settle(first)
            if args.shots:
                first.screenshot(path=str(args.shots / "replica_kill_tab1_back.png"))
            released = first.get_by_role("heading", name="Private treatment rule (ε = 1)").count()
            print(
                f"tab 1, to Overview and back to Your data: sidebar {sidebar_total(first)!r}; "
                f"the released rule {'still' if released else 'no longer'} shown; the demo "
                f"{'still' if first.get_by_role('button', name='Fill in from the data dictionary').count() else 'no longer'} "
                "read in"
            )
            after = [move(other) for _ in range(3)]
            print(f"tab 2 (replica 2) ε moves after: {', '.join(f'{s:.2f}' for s in after)} s")

            first.reload()
            settle(first)
            open_demo(first)
            print(f"tab 1 reloaded (a new session on replica 2): sidebar {sidebar_total(first)!r}")
            browser.close()
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=30)


if __name__ == "__main__":
    main()
