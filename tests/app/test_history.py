"""A link is the whole experiment, page by page: page-owned state, whole-state links and presets,
and corrections that replace the history entry (the browser side: tests/e2e/test_lesson_sequence.py)."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

from dpcore_app.ui.common import link

APP = str(Path(__file__).resolve().parents[2] / "app.py")
OWL, BOUNDS, CVAR = (
    "dpcore_app/app_pages/dp_owl.py",
    "dpcore_app/app_pages/bounds.py",
    "dpcore_app/app_pages/cvar.py",
)
FAST = {"reps": "20", "compare": "200"}


def follow(at, page, **params):
    """Follow an in-app link (st.page_link) to ``page`` in the same session."""
    at.switch_page(page)
    at.query_params.clear()
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_a_link_sets_every_control_it_names_and_resets_the_rest_in_one_session():
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    follow(at, OWL, eps="0.5", n="500", **FAST)
    assert at.session_state["dp-owl.eps"] == 0.5 and at.session_state["dp-owl.n"] == 500
    follow(at, BOUNDS, eps="1", n="200", gamma_mode="fixed", gamma="1")
    assert (at.session_state["bounds.n"], at.session_state["bounds.gamma"]) == (200, 1)
    follow(at, OWL, eps="1", **FAST)  # eps=1 is the default: still set; n not named: its default
    assert not at.exception
    assert at.session_state["dp-owl.eps"] == 1.0 and at.session_state["dp-owl.n"] == 1000
    assert at.session_state["dp-owl.gamma_mode"] == "paper"  # nothing of the Theory page's state
    assert dict(at.query_params) == {"eps": "1", **FAST}  # the link as written: no entry added


def test_a_preset_sets_a_whole_state_and_the_address_follows():
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    follow(at, CVAR, B="2", reps="20")
    at.button(key="preset_1").click().run()  # the hard instance
    assert not at.exception
    assert at.session_state["cvar.loss"] == "two-point" and at.session_state["cvar.B"] == 1.0
    assert at.session_state["cvar.reps"] == 200  # the preset's whole state, not on top of the link
    assert dict(at.query_params) == {"eps": "0.5", "n": "1000", "loss": "hard two-point"}


def test_a_tabs_first_run_corrects_the_address_from_the_browser_then_the_server():
    """Before the history guard is in the browser, a st.query_params edit would add an entry:
    the first run replaces the address with a script, and the next run syncs the server's copy."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["demo_eps"] = "0.3"  # off-grid: the nearest option is 0.2
    at.run()
    assert at.session_state["overview.demo_eps"] == 0.2
    assert at.query_params["demo_eps"] == "0.3"
    scripts = [
        h.proto.body for h in at.get("html") if "replaceState(window.history.state" in h.proto.body
    ]
    assert len(scripts) == 1 and "demo_eps=0.2" in scripts[0]
    at.run()
    assert at.query_params["demo_eps"] == "0.2" and at.session_state["overview.demo_eps"] == 0.2
    guard = [h for h in at.sidebar.get("html") if "pushState" in h.proto.body]
    assert guard and link.history_guard.__doc__
