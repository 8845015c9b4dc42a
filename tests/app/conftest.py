import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

#: A file with more candidate covariates than this gets none chosen by :func:`choose_roles`.
WIDE = 20

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def app():
    """A fresh app session started from the entrypoint, as a user would."""
    return AppTest.from_file(APP, default_timeout=60)


@pytest.fixture
def open_page(app):
    """open_page(page, **query_params): run app.py with the link's parameters, then go to page."""
    return lambda page, **params: _open(app, page, **params)


@pytest.fixture
def open_fresh():
    """open_fresh(page, **query_params): like open_page, in a new session each call."""
    return lambda page, **params: _open(AppTest.from_file(APP, default_timeout=60), page, **params)


@pytest.fixture
def own_session_ids(monkeypatch):
    """Give every AppTest its own session id, as the server gives every browser tab.

    AppTest runs all its instances as "test session id", so without this every AppTest would
    share one session-scoped cache; the id is keyed by the AppTest's session state.
    """
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

    real = ScriptRunner.__init__

    def init(self, *args, session_id, session_state, **kwargs):
        real(
            self,
            *args,
            session_id=f"test-{id(session_state)}",
            session_state=session_state,
            **kwargs,
        )

    monkeypatch.setattr(ScriptRunner, "__init__", init)


def _open(at, page, **params):
    """Open a deep link to ``page`` (app.py runs first, as with a shared link). AppTest knows
    st.navigation's pages only after a first run; that run also sends the history guard, so a
    correction is written at once (a tab's very first run corrects it one run later:
    tests/app/test_history.py)."""
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if page != "dpcore_app/app_pages/overview.py":
        at.switch_page(page)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def words():
    """words(elements): the text of notices as a user reads it (markdown escapes removed)."""
    return lambda elements: " ".join(re.sub(r"\\(.)", r"\1", e.value) for e in elements)


def choose_roles(at):
    """Choose the outcome and the covariates as the analyst of these small test files does
    (the page pre-selects neither without a data dictionary): the outcome the column names
    suggest, and every other column that is not an identifier, unless the file is too wide to
    take them all (then none). Roles already chosen, by a dictionary or a test, stay."""
    from dpcore.data.roles import guess_columns

    outcome = next((s for s in at.selectbox if (s.key or "").startswith("outcome_")), None)
    if outcome is None or outcome.value is not None:
        return at
    treatment = next(s for s in at.selectbox if (s.key or "").startswith("treat_"))
    guess = guess_columns([treatment.value, *outcome.options])
    chosen = guess["outcome"] if guess["outcome"] in outcome.options else outcome.options[0]
    outcome.set_value(chosen).run()
    covariates = [c for c in guess["covariates"] if c not in (chosen, treatment.value)]
    key = outcome.key.replace("outcome_", "covs_", 1)
    widget = next((m for m in at.multiselect if m.key == key), None)  # absent once refused
    if widget is not None and 0 < len(covariates) <= WIDE:
        widget.set_value(covariates).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


#: The icons of the teaching pages' verdicts, whose colour is their severity (red: "do not").
VERDICT_ICONS = {":material/medical_services:", ":material/groups:"}


def failures(at):
    """The page's red notices that report a failure, not a verdict's "do not" in its colour."""
    return [e for e in at.error if e.icon not in VERDICT_ICONS]


def warnings(at):
    """The page's amber notices other than a verdict's caution in its colour."""
    return [w for w in at.warning if w.icon not in VERDICT_ICONS]


def page_sweep(ns, epsilons, reps):
    """``owl_monte_carlo`` over ``ns`` × ``epsilons`` with ``reps`` repetitions and the DP-OWL
    page's other settings (the paper's γ, weight bound 48, its test size and public outcome,
    seed 0): the sweep the page's charts show, computed here without the page."""
    from dpcore.owl.experiments import owl_monte_carlo
    from dpcore_app.ui.owl.compute import PUBLIC_OUTCOME, TEST_SIZE

    return owl_monte_carlo(
        ns,
        epsilons,
        gamma="paper",
        reps=reps,
        test_size=TEST_SIZE,
        seed=0,
        outcome=PUBLIC_OUTCOME,
        weight_bound=48.0,
    )
