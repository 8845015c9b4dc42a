"""Links as a crowd would send them: every parameter of every page, hostile values, repeats,
misspellings. Each link ends in a rendered page, a notice that names the value used, and a
corrected address that reproduces the same view in a fresh session without a notice."""

import json
import re
from pathlib import Path

import pytest

from dpcore_app import app
from tests.app.conftest import failures, warnings

ROOT = Path(__file__).resolve().parents[2]
PAGES = [f"dpcore_app/app_pages/{name}.py" for name, *_ in app.PAGES]
WIDGETS = {
    "SelectSlider",
    "Slider",
    "NumberInput",
    "Radio",
    "Selectbox",
    "Multiselect",
    "ButtonGroup",
    "Checkbox",
    "Toggle",
    "TextInput",
    "TextArea",
    "DateInput",
    "TimeInput",
    "ColorPicker",
}
HOSTILE = {
    "empty": "",
    "huge": "9" * 400,
    "negative": "-5",
    "nan": "NaN",
    "inf": "inf",
    "overflow": "1e309",
    "unicode digits": "５００",
    "digit separator": "1_000",
    "script": "<script>alert(1)</script>",
    "markdown link": "`` [Log in again](https://evil.example/login) ``",
    "image beacon": "![x](https://evil.example/beacon.png)",
    "heading": "x\n# Heading",
}
FAST = {"dpcore_app/app_pages/dp_owl.py": {"reps": "20", "compare": ["200"]}}
_keys = {}


def walk(node):
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from walk(child)


def bound_keys(open_fresh, page):
    """{URL parameter: session-state key} of the page's widgets, from one clean run: a page owns
    its keys (dp-owl.eps) and its links use the short names (eps). The sidebar's controls (the
    privacy ledger's cap) belong to the session, not to a link."""
    if page not in _keys:
        at = open_fresh(page, **FAST.get(page, {}))
        keys = sorted(
            {
                n.key
                for n in walk(at.main)
                if type(n).__name__ in WIDGETS and getattr(n, "key", None)
            }
        )
        _keys[page] = {k.split(".", 1)[-1]: k for k in keys}
    return _keys[page]


def link_of(at):
    """The address bar's parameters after the run, as lists."""
    return {k: v if isinstance(v, list) else [v] for k, v in at.query_params.items()}


def link_notices(at):
    return [w for w in warnings(at) if w.icon == ":material/link_off:"]


def notice_for(notices, key):
    found = [n for n in notices if re.search(rf"“{re.escape(key)}=", n)]
    assert len(found) <= 1, found
    return found[0] if found else None


def assert_plain(at):
    """Every notice is escaped text: no markup character reaches the markdown renderer raw."""
    for w in link_notices(at):
        body = w.value.replace("\\\\", "")
        assert not re.search(r"(?<!\\)[`\[\]()!#<>*_]", body), body
        assert "\n" not in body


@pytest.mark.parametrize("page", PAGES)
@pytest.mark.parametrize("kind", list(HOSTILE))
def test_hostile_values_in_every_parameter(open_page, open_fresh, words, page, kind):
    keys = bound_keys(open_fresh, page)
    value = HOSTILE[kind]
    at = open_page(page, **{**FAST.get(page, {}), **{k: value for k in keys}})
    assert not failures(at), [e.value for e in failures(at)]
    assert at.title and at.title[0].value
    assert_plain(at)
    notices = [re.sub(r"\\(.)", r"\1", w.value) for w in warnings(at)]
    link = link_of(at)
    for key in keys:
        notice = notice_for(notices, key)
        if notice is None:  # accepted as written (an empty multiselect is a valid selection)
            assert link.get(key, [""]) in ([value], [""]), (key, link.get(key))
            continue
        used = re.search(r"Using (the default, )?(.+)\.$", notice)
        assert used, notice
        if used.group(1):
            assert key not in link, (key, link)
        else:
            assert ", ".join(link[key]) == used.group(2) or (
                link[key] == [""] and used.group(2) == "none"
            )
    # The corrected address reproduces the view in a fresh session, without a notice.
    again = open_fresh(page, **link)
    assert not warnings(again), words(warnings(again))
    for key, state in keys.items():
        assert again.session_state[state] == at.session_state[state], key


@pytest.mark.parametrize("page", PAGES)
def test_repeated_and_misspelled_parameters(open_page, open_fresh, words, page):
    keys = bound_keys(open_fresh, page)
    params = {**FAST.get(page, {}), "esp": "0.5"}
    first = next(iter(keys), None)
    if first:
        params[first] = ["1", "2"]
    at = open_page(page, **params)
    notices = words(warnings(at))
    assert "unknown parameter “esp”" in notices
    if first:
        assert f"“{first}=1&2”" in notices
    assert "esp" not in link_of(at)
    assert not failures(at)


OWL = "dpcore_app/app_pages/dp_owl.py"


def test_a_control_that_loses_its_value_keeps_the_last_one(open_page):
    """The browser can send a segmented control's value as empty during a fragment rerun."""
    at = open_page(OWL, metric="value", **FAST[OWL])
    metric = next(b for b in at.get("button_group") if b.key == "dp-owl.metric")
    metric.set_value(None)
    at.run()
    assert not failures(at), [e.value for e in failures(at)]
    title = json.loads(next(c for c in at.get("plotly_chart") if "vs_eps" in c.proto.id).proto.spec)
    assert "outcome units" in title["layout"]["yaxis"]["title"]["text"]  # still the value view
    mode = next(b for b in at.get("button_group") if b.key == "dp-owl.gamma_mode")
    mode.set_value(None)
    at.run()
    assert not failures(at) and "the authors' tuned value" in " ".join(c.value for c in at.caption)
    assert not [s for s in at.slider if s.key == "dp-owl.gamma"]  # still paper-tuned, not fixed


@pytest.mark.parametrize(
    "params,notice,expected",
    [
        (
            {"reps": ["40", "60"]},
            "“reps=40&60”: Repetitions was given 2 times (40, 60). Using the default, 200.",
            {"reps": 200},
        ),
        ({"compare": ["500", "abc"]}, "abc is not one. Using 500.", {"compare": [500]}),
        ({"W": "inf"}, "Using the default, auto.", {"W": "auto"}),
        ({"seed": "Infinity"}, "Using the default, 0.", {"seed": 0}),
        (
            {"seed": "1" * 400},
            "Seed must be between 0 and 1000000. Using the default, 0.",
            {"seed": 0},
        ),
        ({"reps": "1e309"}, "Using the default, 200.", {"reps": 200}),
    ],
)
def test_notices_name_the_value_the_view_uses(open_fresh, words, params, notice, expected):
    base = {} if "reps" in params else {"reps": "20"}
    at = open_fresh(OWL, **{**base, "compare": ["200"], **params})
    assert notice in words(warnings(at))
    for key, value in expected.items():
        assert at.session_state[f"dp-owl.{key}"] == value
    assert not failures(at)


def test_numbers_written_another_way_are_normalised_in_the_link(open_fresh):
    at = open_fresh(OWL, reps="2e1", seed="+7", compare=["200"])
    assert not link_notices(at)
    assert at.session_state["dp-owl.reps"] == 20 and at.session_state["dp-owl.seed"] == 7
    assert link_of(at)["reps"] == ["20"] and link_of(at)["seed"] == ["7"]


def test_links_the_app_writes_reproduce_the_view(open_fresh):
    """The browser drops a bound widget's value from the URL when it equals the widget's own
    default; every widget's default is its spec's, so a dropped value reloads as itself. The
    browser test clicks through the same link; here: free γ at its minimum, no comparison."""
    at = open_fresh(OWL, gamma_mode="fixed", gamma="1", compare="", reps="20")
    assert not link_notices(at) and not failures(at)
    assert at.session_state["dp-owl.gamma"] == 1 and list(at.session_state["dp-owl.compare"]) == []
    assert at.slider(key="dp-owl.gamma").proto.default == [75]  # what a link without gamma means
    assert "γ in use: **1**" in " ".join(c.value for c in at.caption)


def test_work_per_view_is_capped_with_a_notice(open_fresh, monkeypatch, words):
    import dpcore_app.ui.common.limits as limits

    monkeypatch.setattr(limits, "MAX_WORK", 50_000)
    at = open_fresh(OWL, reps="200", compare=["200"])
    assert "simulates 40 repetitions instead of 200" in words(at.info)
    assert not failures(at)


def test_a_caught_error_is_logged_with_its_traceback(open_fresh, monkeypatch, caplog):
    import dpcore_app.ui.owl.compute

    def broken(*args, **kwargs):
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(dpcore_app.ui.owl.compute, "sweeps", broken)
    at = open_fresh(OWL, **FAST[OWL])
    assert "solver exploded" in failures(at)[0].value
    record = next(r for r in caplog.records if "The DP-OWL study failed" in r.getMessage())
    assert record.exc_info and "solver exploded" in str(record.exc_info[1])


def test_uncached_sweeps_run_one_at_a_time(monkeypatch):
    """Four sessions' uncached sweeps at once: never two inside the engine together."""
    import threading
    import time

    import dpcore_app.ui.owl.compute as owl

    inside, worst, lock = [0], [0], threading.Lock()

    def fake(*args, **kwargs):
        with lock:
            inside[0] += 1
            worst[0] = max(worst[0], inside[0])
        time.sleep(0.05)
        with lock:
            inside[0] -= 1
        raise RuntimeError("stop here")  # not cached: each call runs the body

    monkeypatch.setattr(owl, "owl_monte_carlo", fake)
    errors = []

    def call(seed, reps):
        try:
            owl.owl_sweep(100, "paper", 75, 0.5, 30, reps, 10_000 + seed)
        except RuntimeError as exc:
            errors.append(exc)

    def crowd(reps, offset):
        threads = [threading.Thread(target=call, args=(offset + k, reps)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    crowd(200, 0)
    assert len(errors) == 4 and worst[0] == 1
    worst[0] = 0
    crowd(owl.QUICK_REPS, 100)  # first estimates do not wait in the queue
    assert len(errors) == 8 and worst[0] > 1


def test_the_server_config_turns_off_the_duplicate_state_warning():
    """A control has its spec's default (what a link leaves out) and a link sets its value
    through session state, on purpose; Streamlit would log that pattern once per process with
    a stack (the "default value but also set via the Session State API" warning)."""
    import tomllib

    config = tomllib.loads(
        (Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text()
    )
    assert config["global"]["disableWidgetStateDuplicationWarning"] is True
