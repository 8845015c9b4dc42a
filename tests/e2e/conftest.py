"""Real-browser end-to-end tests: a fresh `streamlit run app.py` driven by Chromium.

Fixtures:
    streamlit_server  session: base URL of a Streamlit server started from the repo root
    browser           session: headless Chromium ($DPCORE_CHROMIUM, else chromium on PATH)
    browser_context   session: the context the tests' pages open in (viewport 1400x1000)
    page              per test: a new page (tab) in that context
    app               per test: an `AppDriver` on that page (goto, wait_idle, screenshot, ...)
    screenshot_dir    session: $SCREENSHOT_DIR, or None: then the tests take no screenshots

Every test collected under tests/e2e is marked `e2e`; run the rest with `-m "not e2e"`.
If no Chromium is found or the playwright package is missing, the e2e tests are skipped.
"""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path

import pytest

from tests.e2e.servers import CHROMIUM, CHROMIUM_ARGS, running_streamlit

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # pragma: no cover - depends on the environment
    sync_playwright = expect = None
    PlaywrightTimeoutError = TimeoutError

E2E_DIR = Path(__file__).resolve().parent
VIEWPORT = {"width": 1400, "height": 1000}
SERVER_START_TIMEOUT_S = 60
# The first visit to /dp-owl runs the Monte-Carlo sweeps (several seconds on 2 cores).
FIRST_LOAD_TIMEOUT_MS = 90_000
RERUN_TIMEOUT_MS = 60_000

APP_READY = "[data-testid='stApp'][data-test-script-state='notRunning']"
EXCEPTION = "[data-testid='stException']"


def _skip_reason():
    if sync_playwright is None:
        return "the playwright Python package is not installed"
    if not CHROMIUM.exists():
        return (
            f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium) or set "
            "DPCORE_CHROMIUM to a Chromium binary to run the browser tests"
        )
    return None


def pytest_collection_modifyitems(config, items):
    """Mark every test under tests/e2e as `e2e`, and skip them when no browser is available."""
    reason = _skip_reason()
    for item in items:
        if E2E_DIR not in Path(str(item.path)).resolve().parents:
            continue
        item.add_marker(pytest.mark.e2e)
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


def listening(pids):
    """The (address, port) pairs on which the processes ``pids`` accept TCP connections, read
    from /proc (their sockets' inodes, then /proc/net/tcp and tcp6 in their network space)."""
    found = set()
    for pid in pids:
        inodes = set()
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:  # closed meanwhile
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
        for table, size in (("tcp", 4), ("tcp6", 16)):
            try:
                lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                    continue
                hexaddr, hexport = fields[1].split(":")
                raw = bytes.fromhex(hexaddr)
                # /proc writes each 32-bit word in the host's (little-endian) order
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, size, 4))
                found.add((str(ipaddress.ip_address(words)), int(hexport, 16)))
    return found


@pytest.fixture(scope="session")
def screenshot_dir():
    """Where the tests' screenshots go: ``$SCREENSHOT_DIR``, to look at them; without it the
    tests take none (a full-page picture lays every chart out twice, about 0.8 s each)."""
    folder = os.environ.get("SCREENSHOT_DIR")
    if not folder:
        return None
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def streamlit_server(tmp_path_factory):
    """Start `streamlit run app.py` on a free port; yield its base URL; stop it afterwards."""
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    env = dict(os.environ, STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    try:
        with running_streamlit(log_path, env, SERVER_START_TIMEOUT_S) as base_url:
            yield base_url
    except RuntimeError as exc:  # it did not start: its log says why
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def browser():
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    expect.set_options(timeout=20_000)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def browser_context(browser):
    """One browser context per test process: its cache keeps the app's scripts (about 0.3 s of
    every first page load), while each test's page is a tab of its own, so a session of its own
    on the server. No test changes the context (cookies, storage, routes); one that needs
    another makes its own."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def page(browser_context):
    page = browser_context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        page.close()


#: Counts the app's script runs as they start: each time ``data-test-script-state`` leaves
#: "notRunning", however briefly (a MutationObserver sees every change, where polling can miss
#: a run that starts and ends between two looks). Installed before each document's own scripts.
_RUN_COUNTER = """(() => {
  window.__e2eRuns = 0;
  new MutationObserver((records) => {
    for (const r of records) if (r.oldValue === "notRunning") window.__e2eRuns += 1;
  }).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
                        attributeFilter: ["data-test-script-state"]});
})();"""


class AppDriver:
    """Small helpers for driving a Streamlit page and waiting for its reruns."""

    def __init__(self, page, base_url, shot_dir):
        self.page = page
        self.base_url = base_url
        self.shot_dir = shot_dir
        page.add_init_script(_RUN_COUNTER)

    # -- navigation and waiting ---------------------------------------------------------------
    def goto(self, path, timeout=FIRST_LOAD_TIMEOUT_MS):
        self.page.goto(self.base_url + path)
        self.wait_idle(timeout=timeout)

    def wait_idle(self, timeout=RERUN_TIMEOUT_MS, stable_ms=300):
        """Wait until the script is not running, nothing is stale, no spinner or progress bar
        is shown and every Plotly chart has drawn, and all of that has held for `stable_ms`.

        A run the app starts by itself (a corrected link, a rerun after a new dataset) starts
        within 110 ms of the previous one's end, idle or with both cores busy (measured over
        the whole suite); 300 ms leaves it room three times over."""
        self.page.wait_for_selector(APP_READY, timeout=timeout)
        # Start the stability clock afresh: an earlier wait on this page must not count.
        self.page.evaluate("() => { window.__e2eIdleSince = undefined; }")
        self.page.wait_for_function(
            """(stableMs) => {
                const app = document.querySelector("[data-testid='stApp']");
                const visible = (sel) => [...document.querySelectorAll(sel)]
                    .some((e) => e.offsetParent !== null || e.getClientRects().length > 0);
                const charts = [...document.querySelectorAll("[data-testid='stPlotlyChart']")];
                const idle = app
                    && app.getAttribute("data-test-script-state") === "notRunning"
                    && !document.querySelector("[data-stale='true']")
                    && !visible("[data-testid='stSpinner']")
                    && !visible("[data-testid='stProgress']")
                    && charts.every((c) => c.querySelector(".main-svg"));
                const now = performance.now();
                if (!idle) { window.__e2eIdleSince = undefined; return false; }
                if (window.__e2eIdleSince === undefined) window.__e2eIdleSince = now;
                return now - window.__e2eIdleSince >= stableMs;
            }""",
            arg=stable_ms,
            polling=50,
            timeout=timeout,
        )
        self.page.evaluate("() => { window.__e2eSeen = window.__e2eRuns; }")  # for wait_rerun

    def wait_rerun(self, timeout=RERUN_TIMEOUT_MS, start_timeout_ms=2_000):
        """After an interaction: wait (briefly: an interaction may start none) for a run to
        have started since the last idle moment, then until idle again.

        The run counter (:data:`_RUN_COUNTER`) sees a run however fast; on a document loaded
        before this driver installed it, the script state is polled instead, which can miss a
        run too fast to observe and then waits ``start_timeout_ms`` for nothing.
        """
        counted = self.page.evaluate("() => window.__e2eRuns !== undefined")
        try:
            if counted:
                self.page.wait_for_function(
                    "() => window.__e2eRuns > (window.__e2eSeen ?? 0)",
                    polling=50,
                    timeout=start_timeout_ms,
                )
            else:
                self.page.wait_for_selector(
                    "[data-testid='stApp']:not([data-test-script-state='notRunning'])",
                    timeout=start_timeout_ms,
                )
        except PlaywrightTimeoutError:
            pass
        self.wait_idle(timeout=timeout)

    # -- queries -------------------------------------------------------------------------------
    def slider(self, label):
        """The stSlider container whose label is exactly `label`."""
        return self.page.locator("[data-testid='stSlider']").filter(
            has=self.page.locator("[data-testid='stWidgetLabel']").get_by_text(label, exact=True)
        )

    def slider_value(self, label):
        return self.slider(label).locator("[data-testid='stSliderThumbValue']")

    def slider_thumb(self, label):
        # Streamlit >= 1.5x renders the thumb as a visually hidden <input type="range">, whose
        # slider role is implicit (no role attribute), so match by ARIA role, not by attribute.
        return self.slider(label).get_by_role("slider")

    def warnings(self):
        return self.page.locator("[data-testid='stAlertContentWarning']")

    def link_notices(self):
        """Warnings about the link itself (not a verdict shown as a warning)."""
        return self.warnings().filter(has_text=re.compile("the link's"))

    def expect_no_exception(self):
        expect(self.page.locator(EXCEPTION)).to_have_count(0)

    # -- screenshots ---------------------------------------------------------------------------
    def screenshot(self, name, full=True):
        """Save <shot_dir>/<name> (nothing without a screenshot folder). Streamlit scrolls
        inside stMain, not the document, so for a full-page picture the viewport is made as
        tall as the content first."""
        if self.shot_dir is None:
            return None
        original = self.page.viewport_size
        if full:
            height = self.page.evaluate(
                """() => {
                    const main = document.querySelector("[data-testid='stMain']");
                    const side = document.querySelector("[data-testid='stSidebarContent']");
                    return Math.max(main ? main.scrollHeight : 0, side ? side.scrollHeight : 0,
                                    document.documentElement.scrollHeight);
                }"""
            )
            height = int(min(max(height, original["height"]), 12_000))
            if height != original["height"]:
                self.page.set_viewport_size({"width": original["width"], "height": height})
                self.wait_idle(stable_ms=800)
        path = self.shot_dir / name
        self.page.screenshot(path=str(path), full_page=True)
        if full and self.page.viewport_size != original:
            self.page.set_viewport_size(original)
        return path


@pytest.fixture
def app(page, streamlit_server, screenshot_dir):
    return AppDriver(page, streamlit_server, screenshot_dir)
