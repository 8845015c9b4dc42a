"""The Your data page driven in AppTest as a user drives it: upload a file, type its public table,
release, set a cap; and what the user reads on the page and in the ledger."""

import hashlib
import re

from dpcore_app.ui.common import ledger
from tests.app.conftest import choose_roles
from tests.app.your_data_files import trial_csv

PAGE = "dpcore_app/app_pages/your_data.py"
RELEASE = "your_data_release"


def words(elements):
    """What the user reads (markdown escapes removed)."""
    return " ".join(re.sub(r"\\(.)", r"\1", str(e.value)) for e in elements)


def headline(at):
    """The page's verdict once a rule is out, whatever its colour (green only when the private
    evaluation shows the rule beats treating everyone)."""
    return words([*at.success, *at.warning, *at.info])


def upload(at, data, name="trial.csv"):
    at.file_uploader(key="upload").set_value((name, data, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    return choose_roles(at)


def fill_table(at, data, rows):
    """Type public metadata into the page's table: {column: {lower, upper, type, levels}}.

    AppTest cannot edit a data_editor; the page keeps the table's entries in the session
    state by column name, which is what typing into the table changes. The outcome's
    direction is public metadata too: it is chosen ("larger") where nothing chose it yet.
    """
    if (
        any(b.key == "better" for b in at.button_group)
        and at.button_group(key="better").value is None
    ):
        at.button_group(key="better").set_value("larger")
    digest = hashlib.sha256(data).hexdigest()[:12]
    typed = {
        c: {"type": "numeric", "lower": None, "upper": None, "levels": "", "unit": "", **r}
        for c, r in rows.items()
    }
    at.session_state[f"meta_rows_{digest}"] = typed
    at.session_state[f"meta_version_{digest}"] = (
        at.session_state[f"meta_version_{digest}"] + 1
        if f"meta_version_{digest}" in at.session_state
        else 1
    )
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def fill_bounds(at, values, data, names=("age", "y")):
    """Public bounds for the columns ``names``, in that order: [(lo, hi), ...]."""
    return fill_table(
        at, data, {n: {"lower": lo, "upper": hi} for n, (lo, hi) in zip(names, values)}
    )


def release(at, evaluate=False):
    """Click the release button; without the private evaluation (on by default on the page)
    unless asked: most tests follow the rule's own path, test_your_data_analyst the other."""
    if any(t.key == "evaluate" for t in at.toggle) and at.toggle(key="evaluate").value != evaluate:
        at.toggle(key="evaluate").set_value(evaluate).run()
    at.button(key="release").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def ledger_entries(at):
    """The durable ledger's releases on the dataset the session has in use."""
    return ledger.dataset_ledger(at.session_state[ledger.IN_USE]).entries


def demo_release(at, **params):
    """Open the paper's demo, fill in the dictionary's bounds, release once."""
    for key, value in params.items():
        at.query_params[key] = value
    if params:  # the link opens first; the clicks follow on the page it set
        at.run()
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    assert "A rule can be released" in words(at.info)
    return release(at)


def set_cap(at, eps):
    """Type a cap in the sidebar, confirm it when asked (the first cap), and set it."""
    at.sidebar.number_input(key="ledger_cap").set_value(eps)
    if any(c.key == "ledger_cap_sure" for c in at.sidebar.checkbox):
        at.sidebar.checkbox(key="ledger_cap_sure").check()
    at.run()
    at.sidebar.button(key="ledger_set_cap").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


UPLOADED = trial_csv(n=60)


def upload_release(at, eps=None):
    """Upload a file of its own (not a shipped demo), type its bounds, release once."""
    if eps is not None:
        at.query_params["eps"] = eps
    at = fill_bounds(upload(at, UPLOADED), [(0, 100), (-5, 5)], UPLOADED)
    return release(at)
