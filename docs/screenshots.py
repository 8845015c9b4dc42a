"""Screenshots of the dashboard's main views and of each lesson's view, at 1440 px and on a
phone (390 px, touch), in the light and the dark theme, into ``screenshots/``.

    python docs/screenshots.py [--only dp-owl cvar] [--widths 1440 390] [--schemes light dark]
    python docs/screenshots.py --readme     # README.md's picture, docs/images/dp-owl.png

Starts ``streamlit run app.py`` on a free port (on the results store ``DPCORE_STORE`` names:
warm it first, or the first visit of each view simulates) and Chromium ($DPCORE_CHROMIUM, else
chromium on PATH). Streamlit scrolls inside its own container, so each shot is one tall
viewport, not a full-page capture.
Prints for each shot the smallest chart text and the shortest plot area, in CSS px.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
from load import CHROMIUM, CHROMIUM_ARGS, free_port, start_server  # noqa: E402

from dpcore_app.ui.lessons.catalog import LESSONS  # noqa: E402

READY = "[data-testid='stApp'][data-test-script-state='notRunning']"
HEIGHT = {1440: 3000, 390: 4000}  # CSS px: the phone's single column runs longer
VIEWS = {"dp-owl": "dp-owl", "cvar": "cvar", "bounds": "bounds"} | {
    f"lesson-{k}-{lesson.key}": lesson.link("").lstrip("/")
    for k, lesson in enumerate(LESSONS, start=1)
}
DRAWN = """() => !document.querySelector("[data-testid='stSkeleton']")
    && [...document.querySelectorAll("[data-testid='stPlotlyChart']")].every((c) => {
        const plot = c.querySelector('.nsewdrag');
        return plot && plot.getBoundingClientRect().height > 0 && c.querySelector('.gtitle'); })"""
MEASURE = """() => {
    const sizes = [...document.querySelectorAll("[data-testid='stPlotlyChart'] svg text")]
        .filter((t) => t.textContent.trim() && t.getClientRects().length)
        .map((t) => parseFloat(getComputedStyle(t).fontSize));
    const plots = [...document.querySelectorAll("[data-testid='stPlotlyChart'] .nsewdrag")]
        .map((r) => r.getBoundingClientRect().height);
    return {text: sizes.length ? Math.min(...sizes) : null, plot: plots.length ? Math.min(...plots) : null,
            charts: plots.length};
}"""


def settle(page, timeout=180_000):
    """Until the script has finished and stayed finished (a first estimate reruns once)."""
    deadline = time.monotonic() + timeout / 1000
    while time.monotonic() < deadline:
        page.locator(READY).wait_for(timeout=timeout)
        page.wait_for_timeout(1500)
        if page.locator(READY).count() and not page.get_by_text("First estimate").count():
            return
    raise TimeoutError("the page did not settle")


def small(file):
    """256 colours: a page of flat colours loses nothing visible and a PNG a third the size."""
    from PIL import Image

    with Image.open(file) as image:
        image.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(
            file, optimize=True
        )


def shoot(browser, base, name, path, width, scheme, out):
    phone = width < 800
    context = browser.new_context(
        viewport={"width": width, "height": HEIGHT[width]},
        color_scheme=scheme,
        has_touch=phone,
        is_mobile=phone,
        device_scale_factor=1,
    )
    try:
        page = context.new_page()
        page.goto(f"{base}/{path}")
        settle(page)
        file = out / f"{name}-{width}-{scheme}.png"
        for _ in range(4):  # a chart still loading shows a skeleton box: wait it out and retake
            page.wait_for_function(DRAWN, timeout=60_000)
            page.wait_for_timeout(2000)  # plotly's last relayout
            page.screenshot(path=str(file))
            if page.evaluate(DRAWN):
                break
        small(file)
        return file, page.evaluate(MEASURE)
    finally:
        context.close()


#: README.md's picture: the DP-OWL page's first 1500 CSS px at 1440 px, light, scaled to 1080 px
#: wide; the PNG says what made it (tests/test_docs.py checks the README's picture says so).
README_IMAGE = ROOT / "docs" / "images" / "dp-owl.png"
README_TAG = "docs/screenshots.py --readme"


def readme_image(browser, base):
    """Write :data:`README_IMAGE` from the running app's DP-OWL page at its default view."""
    from PIL import Image, PngImagePlugin

    context = browser.new_context(viewport={"width": 1440, "height": 1500}, device_scale_factor=1)
    try:
        page = context.new_page()
        page.goto(f"{base}/dp-owl")
        settle(page)
        page.wait_for_function(DRAWN, timeout=60_000)
        page.wait_for_timeout(2000)
        page.screenshot(path=str(README_IMAGE))
    finally:
        context.close()
    with Image.open(README_IMAGE) as image:
        small = image.convert("RGB").resize((1080, 1125), Image.Resampling.LANCZOS)
    info = PngImagePlugin.PngInfo()
    info.add_text("Software", README_TAG)
    small.quantize(256, method=Image.Quantize.MEDIANCUT).save(
        README_IMAGE, optimize=True, pnginfo=info
    )
    return README_IMAGE


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--widths", nargs="*", type=int, default=[1440, 390])
    parser.add_argument("--schemes", nargs="*", default=["light", "dark"])
    parser.add_argument("--readme", action="store_true", help="write README.md's picture only")
    args = parser.parse_args()
    out = ROOT / "screenshots"
    out.mkdir(exist_ok=True)
    port = free_port()
    server = start_server(port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            if args.readme:
                print(readme_image(browser, f"http://127.0.0.1:{port}"))
                return
            for name, path in VIEWS.items():
                if args.only and not any(o in name for o in args.only):
                    continue
                for width in args.widths:
                    for scheme in args.schemes:
                        file, m = shoot(
                            browser, f"http://127.0.0.1:{port}", name, path, width, scheme, out
                        )
                        print(
                            f"{file.name:44s} charts {m['charts']:2d}  smallest text {m['text']} px  "
                            f"shortest plot {m['plot'] and round(m['plot'])} px",
                            flush=True,
                        )
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
