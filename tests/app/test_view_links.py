"""Every link the app writes (handouts, CSV headers, the lessons worksheet, "link to this view")
is absolute, complete, taken while the view is built, and reopens the same view.

A download's content is produced after the run, outside the script (as Streamlit does when
the button is pressed): these tests call the captured callbacks the same way, so a link read
from the address at that moment would come out empty."""

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
import streamlit
from streamlit.delta_generator import DeltaGenerator

from dpcore_app.ui.common import address
from dpcore_app.ui.lessons.catalog import LESSONS

BASE = "http://localhost:8501"  # AppTest has no browser address: the server's own
LINK = re.compile(r"href=[\"']([^\"']+)[\"']|link = (\S+)|<th>link</th><td>([^<]+)<")
SCRIPT = re.compile(r"<script.*?</script>", re.S)  # plotly's own code, inlined for offline use


@pytest.fixture
def downloads(monkeypatch):
    """{label: content} of every download button of the runs, produced after the run."""
    captured = {}
    original = DeltaGenerator.download_button

    def spy(self, label, data, *args, **kwargs):
        captured[label] = data
        return original(self, label, data, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", spy)
    monkeypatch.setattr(streamlit, "download_button", lambda *a, **k: spy(streamlit._main, *a, **k))
    return lambda: {label: data() if callable(data) else data for label, data in captured.items()}


def links_in(text):
    """The links a reader follows: anchors, the settings' link, CSV headers' # link = …"""
    return [
        html.unescape(next(g for g in groups if g)) for groups in LINK.findall(SCRIPT.sub("", text))
    ]


def open_share(at, url_path):
    """Open the page's "Link to this view" expander, as a click does."""
    at.session_state[address.share_key(url_path)] = True
    at.run()
    assert not at.exception
    return at


def reopens(open_fresh, at, link, page, scope):
    """The link is absolute, names every control the page has, and a fresh session opened on it
    has every control in the same state, with no notice."""
    parts = urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}" == BASE and parts.path == f"/{scope}", link
    params = parse_qs(parts.query, keep_blank_values=True)
    again = open_fresh(page, **params)
    assert not [w for w in again.warning if w.icon == ":material/link_off:"], [
        w.value for w in again.warning
    ]
    keys = [k for k in at.session_state if k.startswith(f"{scope}.")]
    assert {k.split(".", 1)[1] for k in keys} <= set(params), (keys, params)  # complete
    for key in keys:
        assert again.session_state[key] == at.session_state[key], key


def test_dp_owl_handout_csvs_and_view_link(open_fresh, downloads):
    page = "dpcore_app/app_pages/dp_owl.py"
    at = open_fresh(
        page, eps="10", n="500", reps="20", compare="200", gamma_mode="fixed", gamma="40"
    )
    assert not at.exception and not at.code  # the link is written once its expander opens
    shared = [c.value for c in open_share(at, "dp-owl").code]
    assert len(shared) == 1 and "eps=10" in shared[0] and "gamma=40" in shared[0]
    files = downloads()
    written = {label: links_in(str(content)) for label, content in files.items()}
    for label in ("Runs (CSV)", "Summary (CSV)", "This view (CSV)", "Handout (HTML, offline)"):
        assert written[label] and set(written[label]) == {shared[0]}, (label, written[label])
    assert f"# link = {shared[0]}" in files["Summary (CSV)"]
    reopens(open_fresh, at, shared[0], page, "dp-owl")


def test_cvar_handout_and_view_link(open_fresh, downloads):
    page = "dpcore_app/app_pages/cvar.py"
    at = open_fresh(page, eps="0.5", tau="0.1", n="1000", loss="two-point")
    assert not at.exception
    (shared,) = [c.value for c in open_share(at, "cvar").code]
    assert set(links_in(downloads()["Handout of this view (HTML, offline)"])) == {shared}
    reopens(open_fresh, at, shared, page, "cvar")


def test_the_worksheet_links_are_absolute_text_and_qr(open_fresh, downloads, monkeypatch):
    at = open_fresh("dpcore_app/app_pages/lessons.py")
    assert not at.exception
    sheet = downloads()["Printable handout of the lessons (HTML, works offline)"]
    expected = [lesson.link(BASE) for lesson in LESSONS]
    assert links_in(sheet) == expected
    assert all(f">{html.escape(u)}</a>" in sheet for u in expected)  # the link as text, for paper
    assert sheet.count("<svg") == len(LESSONS)  # one QR code each
    monkeypatch.setenv(address.PUBLIC_URL, "https://stats.example.org/privacy/")
    behind = open_fresh("dpcore_app/app_pages/lessons.py")
    assert not behind.exception
    sheet = downloads()["Printable handout of the lessons (HTML, works offline)"]
    assert "https://stats.example.org/privacy/dp-owl?" in sheet and BASE not in sheet
