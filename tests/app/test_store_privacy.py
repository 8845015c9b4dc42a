"""Privacy rule 4 and the shared results store: uploaded data never enter it.

The store is shared by every session and process and outlives them, so anything in it is
published to every later user. The Your-data page's whole flow (an uploaded file, a release,
the analyst-only comparison, Algorithm 2 on an uploaded D0) must leave it unchanged; the same
detector sees the DP-OWL page's writes, so it can fail.
"""

import ast
import os
from pathlib import Path

import pytest

from tests.app.your_data_files import public_d0, trial_csv
from tests.app.your_data_page import PAGE, fill_bounds, release, upload

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _own_store(tmp_path, monkeypatch):
    """A store of this test's own: another test process writing the run's shared store at the
    same time must not look like a write by the page under test."""
    monkeypatch.setenv("DPCORE_STORE", str(tmp_path / "store"))


def snapshot():
    root = Path(os.environ["DPCORE_STORE"])
    return {p: p.stat().st_mtime_ns for p in root.rglob("*")} if root.exists() else {}


def test_the_your_data_flow_leaves_the_store_unchanged(open_page):
    before = snapshot()
    data = trial_csv(n=60)
    at = upload(open_page(PAGE), data)
    fill_bounds(at, [(0, 100), (-5, 5)], data)
    release(at)
    at.button(key="compare").click().run()
    assert not at.exception and at.session_state["your_data_release"]
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    at.radio(key="gamma_from").set_value("d0").run()
    at.file_uploader(key="upload_d0").set_value(("d0.csv", public_d0(), "text/csv")).run()
    release(at)
    assert not at.exception
    assert "Algorithm 2 on a file D0" in at.session_state["your_data_release"].release.gamma_source
    assert snapshot() == before


def test_the_detector_sees_a_teaching_page_write(open_page):
    before = snapshot()
    at = open_page("dpcore_app/app_pages/dp_owl.py", reps="40", compare=["200"], seed="4242")
    assert not at.exception
    assert set(snapshot()) - set(before), "the DP-OWL page's sweeps should be stored"


def test_no_code_that_reads_uploads_imports_the_store():
    readers = [
        *ROOT.glob("dpcore_app/ui/upload/*.py"),
        ROOT / "dpcore_app" / "app_pages" / "your_data.py",
    ]
    assert len(readers) > 10, readers  # the room is there
    for path in readers:
        names = {
            a.name
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for a in node.names
        }
        modules = {
            node.module
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom)
        }
        assert "stored" not in names and "dpcore.store" not in modules | names, path
