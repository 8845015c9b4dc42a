"""End-to-end: every page is readable and operable by everyone, in the light and the dark theme.

- axe-core (the engine browsers' accessibility tools use; axe-playwright-python ships it as one
  file, nothing fetched) on every page in both themes: WCAG 2.x A and AA (contrast, names of
  buttons, links, inputs and images, ARIA) and axe's best practices, less two named below.
- What axe does not look at: the contrast of chart text (axe skips SVG text; a chart's ticks
  were 3.7:1 on white), a name for each chart that says what it shows rather than its tick
  labels, the chart's numbers as a download, and icon names read aloud ("compare_arrows icon").
- The keyboard: from a page's load, its presets and (DP-OWL) its target are a few Tab presses
  away, a popover takes the focus when it opens, and a preset closes it and gives the focus back.

Both themes on one loaded page: Streamlit follows the browser's colour scheme live, so the test
switches the emulated scheme instead of loading the page twice.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

axe = pytest.importorskip("axe_playwright_python.base", reason="axe-playwright-python (test extra)")

PAGES = [  # path, and the preset the keyboard chooses (from a custom view to the default one,
    # which the other tests simulate anyway)
    pytest.param("/", None, id="overview"),
    pytest.param("/dp-owl?reps=40&compare=200", "Moderate (ε = 1)", id="dp-owl"),
    pytest.param("/cvar?eps=2", "Clinical tail: 2000 patients, worst 5%, ε = 1", id="cvar"),
    pytest.param("/bounds", None, id="bounds"),
    pytest.param("/your-data", None, id="your-data"),
    pytest.param("/lessons", None, id="lessons"),
    pytest.param("/glossary", None, id="glossary"),
    pytest.param("/limitations", None, id="limitations"),
]

#: axe's rules, by tag: WCAG 2.0-2.2 levels A and AA, and axe's best practices.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
#: Rules left out, each for a reason that is not the app's to fix:
AXE_OFF = {
    # A best practice, not a WCAG criterion: the pages put st.subheader (h3) under st.title (h1)
    # by design (the h2 size is too large beside the controls); the outline still nests.
    "heading-order",
    # Streamlit's own file uploader: its drop zone is a <section role="presentation"
    # tabindex="-1" aria-label=...>, which no public option changes; the uploader's button
    # inside it is named and reachable (button-name and label still run on it).
    "presentation-role-conflict",
}

#: Colour helpers in the page: parse a CSS colour, WCAG relative luminance and contrast ratio.
_COLOUR = """
const parse = (c) => {
  const m = String(c).match(/rgba?\\(([^)]+)\\)/);
  if (!m) return null;
  const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
  return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
};
const over = (top, under) => ({
  r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a),
  b: top.b * top.a + under.b * (1 - top.a), a: 1});
const lum = (c) => {
  const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
};
const ratio = (a, b) => {
  const x = lum(a), y = lum(b);
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
};
const backdrop = (el) => {  // the opaque colour behind el: its ancestors' backgrounds, stacked
  const layers = [];
  for (let e = el; e; e = e.parentElement) {
    const c = parse(getComputedStyle(e).backgroundColor);
    if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
  }
  return layers.reverse().reduce((under, top) => over(top, under), {r: 255, g: 255, b: 255, a: 1});
};
"""

#: Waits until the app and every chart wear the theme the browser asks for.
THEMED = (
    "(dark) => {"
    + _COLOUR
    + """
  const app = document.querySelector("[data-testid='stApp']");
  const bg = getComputedStyle(app).backgroundColor;
  if ((lum(parse(bg)) < 0.5) !== dark) return false;
  return [...document.querySelectorAll("[data-testid='stPlotlyChart'] .svg-container > svg:first-child")]
    .every((s) => getComputedStyle(s).backgroundColor === bg);
}"""
)

#: Every chart's text against what is behind it: the plot area where the text sits inside it,
#: else the chart's paper, else the page. WCAG's large text (24 px, or 18.66 px bold) needs 3:1.
CHART_TEXT = (
    "() => {"
    + _COLOUR
    + """
  const found = [];
  for (const chart of document.querySelectorAll("[data-testid='stPlotlyChart']")) {
    if (!chart.getClientRects().length) continue;  // in a closed expander
    const paper = chart.querySelector(".svg-container > svg");
    const area = chart.querySelector("rect.bg");
    for (const t of chart.querySelectorAll("svg text")) {
      if (t.closest(".hoverlayer") || !t.textContent.trim()) continue;
      const box = t.getBoundingClientRect();
      if (!box.width || !box.height) continue;
      const s = getComputedStyle(t);
      if (s.display === "none" || s.visibility === "hidden") continue;
      let bg = backdrop(paper);
      const fill = area && parse(getComputedStyle(area).fill);
      if (fill && area) {
        const a = area.getBoundingClientRect(), x = box.x + box.width / 2, y = box.y + box.height / 2;
        const alpha = fill.a * Number(getComputedStyle(area).fillOpacity);
        if (alpha > 0 && x > a.left && x < a.right && y > a.top && y < a.bottom)
          bg = over({...fill, a: alpha}, bg);
      }
      const fg = parse(s.fill);
      if (!fg) continue;
      const own = fg.a * Number(s.fillOpacity) * Number(s.opacity);
      const r = ratio(over({...fg, a: own}, bg), bg);
      const px = parseFloat(s.fontSize), bold = Number(s.fontWeight) >= 700;
      const needed = px >= 24 || (bold && px >= 18.66) ? 3 : 4.5;
      if (r < needed)
        found.push(`${t.textContent.trim().slice(0, 40)}: ${r.toFixed(2)}:1 (${s.fill})`);
    }
  }
  return found;
}"""
)

#: What each chart is to assistive technology, and what follows it.
CHARTS = """() => {
  const downloads = [...document.querySelectorAll("[data-testid='stDownloadButton']")];
  return [...document.querySelectorAll("[data-testid='stPlotlyChart']")].map((c) => ({
    role: c.getAttribute("role"),
    name: c.getAttribute("aria-label") || "",
    hidden: c.querySelector(".js-plotly-plot")?.getAttribute("aria-hidden") === "true",
    download: downloads.some((d) => c.compareDocumentPosition(d) & Node.DOCUMENT_POSITION_FOLLOWING),
  }));
}"""

#: Material icons whose name a screen reader speaks: a glyph outside anything aria-hidden.
SPOKEN_ICONS = """() => [...document.querySelectorAll("span, i")]
  .filter((e) => !e.children.length && e.textContent.trim()
    && getComputedStyle(e).fontFamily.includes("Material Symbols")
    && !e.closest("[aria-hidden='true']"))
  .map((e) => `${e.textContent} (${e.getAttribute("aria-label") || "no label"}) in `
    + (e.closest("[data-testid]")?.getAttribute("data-testid") || "?"))"""


#: What changes with the theme: the rules about colour, all that runs again in the second theme.
AXE_COLOUR = ["color-contrast", "link-in-text-block"]


def axe_violations(page, context="document", rules=None):
    """axe-core's violations on the page (or inside the element ``context`` selects), as lines:
    of the rules tagged :data:`AXE_TAGS` less :data:`AXE_OFF`, or of ``rules`` only."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(axe.AXE_SCRIPT)
    result = page.evaluate(
        """([context, tags, off, rules]) => axe.run(
            context === "document" ? document : document.querySelector(context),
            {runOnly: rules ? {type: "rule", values: rules} : {type: "tag", values: tags},
             rules: Object.fromEntries(off.map((r) => [r, {enabled: false}])),
             resultTypes: ["violations"]})""",
        [context, AXE_TAGS, sorted(AXE_OFF), rules],
    )
    lines = []
    for rule in result["violations"]:
        for node in rule["nodes"]:
            checks = node.get("any") or node.get("all") or node.get("none") or [{}]
            lines.append(
                f"{rule['id']}: {node['html'][:100]} | {checks[0].get('message', '')[:160]}"
            )
    return lines


def in_scheme(app, scheme):
    """Switch the browser's colour scheme and wait until the app and its charts follow it."""
    app.page.emulate_media(color_scheme=scheme)
    app.page.wait_for_function(THEMED, arg=scheme == "dark", polling=50, timeout=10_000)


@pytest.mark.parametrize(("path", "preset"), PAGES)
def test_every_page_is_readable_and_operable_in_both_themes(app, path, preset):
    """axe-core's WCAG A/AA rules and best practices, chart text contrast, chart names and
    numbers, and no icon name read aloud, on each page in the light and the dark theme; then,
    on a page with presets, the keyboard (:func:`keyboard_reaches_the_presets`)."""
    app.goto(path)
    app.expect_no_exception()
    problems = []
    for scheme, rules in (("light", None), ("dark", AXE_COLOUR)):
        in_scheme(app, scheme)
        problems += [f"{scheme}: axe {v}" for v in axe_violations(app.page, rules=rules)]
        problems += [f"{scheme}: chart text {t}" for t in app.page.evaluate(CHART_TEXT)]
    for i, chart in enumerate(app.page.evaluate(CHARTS)):
        name = chart["name"]
        if chart["role"] != "figure" or not re.match(r"Chart: \S.*\. ", name):
            problems.append(f"chart #{i} is not a figure named by a sentence: {name!r}")
        if not chart["hidden"]:
            problems.append(f"chart #{i}: its drawing is read out as well as its name")
        if "Its numbers: the CSV download below the chart." in name and not chart["download"]:
            problems.append(f"chart #{i} promises a download of its numbers and has none")
    problems += [f"icon read aloud: {icon}" for icon in app.page.evaluate(SPOKEN_ICONS)]
    assert not problems, "\n".join(problems)
    if preset:  # nothing has had the focus yet: the keyboard starts from the page's load
        keyboard_reaches_the_presets(app, preset, target=path.startswith("/dp-owl"))


def focused(page):
    """What has the keyboard focus: its test id (or tag) and its text."""
    return page.evaluate(
        """() => { const e = document.activeElement;
            const id = e.closest("[data-testid]")?.getAttribute("data-testid") || e.tagName;
            return `${id}: ${(e.innerText || e.getAttribute("aria-label") || "").trim()}`; }"""
    )


def press_until(page, key, wanted, most):
    """Press ``key`` until the focused element's description (:func:`focused`) matches the
    regular expression ``wanted``; returns the presses and the stops on the way."""
    stops = []
    for presses in range(1, most + 1):
        page.keyboard.press(key)
        stops.append(focused(page))
        if re.search(wanted, stops[-1]):
            return presses, stops
    raise AssertionError(f"{wanted} not reached in {most} presses of {key}: {stops}")


PRESETS = r"(?s)^stPopoverButton: .*Preset"


def keyboard_reaches_the_presets(app, preset, target):
    """From the page's load: Tab to "Skip to main content", Enter, Tab to the presets (at most
    10 Tab presses in all; 2 here), Enter opens them with the focus on the first preset, and
    choosing ``preset`` closes the popover with the focus back on its button. Without the skip
    link, the presets are the page's first stop after Streamlit's own (skip link, one link per
    page, the menu, the main region): 12 Tab presses. With ``target`` (DP-OWL), the target's
    popover is the next stop and takes the focus the same way."""
    page = app.page
    page.keyboard.press("Tab")
    assert focused(page).startswith("stSkipToContent"), focused(page)
    page.keyboard.press("Enter")
    tabs, _ = press_until(page, "Tab", PRESETS, 9)
    assert 1 + tabs <= 10
    # Back to the top with Shift+Tab: every stop before the presets is Streamlit's own.
    back, stops = press_until(page, "Shift+Tab", "^stSkipToContent", 20)
    chrome = ("stSkipToContent", "stSidebarNavLink", "stMainMenuButton", "stMain", "stSidebar")
    assert all(s.startswith(chrome) for s in stops), stops
    press_until(page, "Tab", PRESETS, back)  # the same stops, forwards: Tab alone
    page.keyboard.press("Enter")
    dialog = page.locator("[data-testid='stPopoverBody']")
    expect(dialog).to_be_visible()
    assert dialog.evaluate("(d) => d.contains(document.activeElement)"), focused(page)
    assert not axe_violations(page, "[data-testid='stPopoverBody']")
    while preset not in focused(page):
        page.keyboard.press("Tab")
        assert dialog.evaluate("(d) => d.contains(document.activeElement)"), focused(page)
    page.keyboard.press("Enter")
    app.wait_rerun()
    expect(dialog).to_have_count(0)  # closed: the answer it changed is in view
    assert re.search(PRESETS + ": " + re.escape(preset), focused(page)), focused(page)
    if target:
        page.keyboard.press("Tab")
        assert re.search(r"(?s)^stPopoverButton: .*Target:", focused(page)), focused(page)
        page.keyboard.press("Enter")
        expect(dialog).to_be_visible()
        assert dialog.evaluate("(d) => d.contains(document.activeElement)"), focused(page)
        page.keyboard.press("Escape")
        expect(dialog).to_have_count(0)
        assert re.search(r"(?s)^stPopoverButton: .*Target:", focused(page)), focused(page)
    app.expect_no_exception()
