"""Control specs without a browser: how a link's values are read, written and shown."""

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpcore_app.ui.common.controls import Choice, IntRange, MultiChoice
from dpcore_app.ui.common.grids import EPS_OPTIONS, N_OPTIONS, fmt_eps
from dpcore_app.ui.common.limits import MIN_REPS, _Gate, cap_work
from dpcore_app.ui.common.safety import plain

EPS = Choice("eps", EPS_OPTIONS, 1.0, "Privacy budget ε", fmt_eps)
COMPARE = MultiChoice("compare", N_OPTIONS, (200, 500), "Also show n")
REPS = IntRange("reps", 20, 500, 200, "Repetitions")

HOSTILE = [
    "",
    " ",
    "-5",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "1e309",
    "9" * 400,
    "５００",
    "1_000",
    "0x10",
    "10.5",
    "<script>alert(1)</script>",
    "`` [x](https://evil.example) ``",
    "![b](https://evil.example/b.png)",
    "# heading\n## more",
    "\u0000",
    "ε",
]


def test_a_choice_reads_exactly_the_labels_its_widget_writes():
    assert EPS.from_url(["0.5"]) == (0.5, None)
    assert EPS.from_url(["non-private"]) == (math.inf, None)
    for raw in (["inf"], ["-1"], ["2000"], ["1e309"]):
        value, problem = EPS.from_url(raw)
        assert value == 1.0 and "must be one of 0.05 … non-private" in problem


def test_off_grid_values_snap_to_the_nearest_option_with_a_reason():
    assert EPS.from_url(["0.50"]) == (0.5, None) and EPS.from_url(["1e0"]) == (1.0, None)
    value, problem = EPS.from_url(["0.3"])  # used to reset to 1
    assert value == 0.2 and "has no option 0.3; the nearest on its grid is 0.2" in problem
    assert EPS.from_url(["700"])[0] == 500.0 and EPS.from_url(["800"])[0] == 1000.0  # log scale
    W = Choice("W", ("auto", 10, 20, 30, 48), "auto", "Weight bound W")
    assert W.from_url(["25"])[0] == 30 and W.from_url(["5"])[0] == "auto"  # outside: the default


def test_greek_labels_have_ascii_aliases():
    from dpcore_app.ui.common.controls import ascii_form

    X = Choice("x", ("ε", "n", "τ", "εnτ"), "ε", "x-axis", str)
    assert X.from_url(["eps_n_tau"]) == ("εnτ", None) and X.from_url(["TAU"]) == ("τ", None)
    assert X.from_url(["eps"]) == ("ε", None) and X.to_url("εnτ") == "εnτ"
    assert ascii_form("√d") == "sqrt_d"
    assert X.from_url(["epsntau"])[1]  # near misses are still refused


def test_a_repeated_parameter_is_refused_and_the_default_used():
    for spec in (EPS, REPS):
        value, problem = spec.from_url(["40", "60"])
        assert value == spec.default and "was given 2 times (40, 60)" in problem


@pytest.mark.parametrize(
    "raw,expected", [("500", 500), ("500.0", 500), ("5e2", 500), (" 60 ", 60), ("+40", 40)]
)
def test_whole_numbers_written_another_way_are_read(raw, expected):
    assert REPS.from_url([raw]) == (expected, None)
    assert REPS.to_url(expected) == str(expected)


@pytest.mark.parametrize("raw", HOSTILE + ["19", "501", "-20", "1e3"])
def test_anything_else_gives_the_default_and_a_reason(raw):
    value, problem = REPS.from_url([raw])
    assert value == 200 and problem.startswith("Repetitions must be")


def test_a_multiselect_keeps_its_valid_part_and_reads_the_empty_selection():
    assert COMPARE.from_url(["500", "200"]) == ((500, 200), None)
    assert COMPARE.from_url([""]) == ((), None)  # what the widget writes when cleared
    value, problem = COMPARE.from_url(["500", "abc"])
    assert value == (500,) and "abc is not one" in problem
    value, problem = COMPARE.from_url(["abc", "7"])
    assert value == (200, 500) and "abc, 7 is not one" in problem
    assert COMPARE.to_url(()) == [""] and COMPARE.to_url((200,)) == ["200"]


@given(st.lists(st.text(max_size=30), min_size=1, max_size=3))
def test_no_link_value_can_make_a_spec_fail_or_leave_its_options(raw):
    for spec in (EPS, REPS):
        value, _ = spec.from_url(raw)
        assert value in EPS_OPTIONS if spec is EPS else 20 <= value <= 500
    value, _ = COMPARE.from_url(raw)
    assert set(value) <= set(N_OPTIONS)


_UNESCAPED = re.compile(r"(?<!\\)[`\[\]()!#<>*_:$|~]")


@given(st.text(max_size=80))
def test_plain_text_has_no_markup_left(text):
    shown = plain(text)
    assert "\n" not in shown
    # Every markup character is escaped (an escaped backslash is itself escaped).
    assert not _UNESCAPED.search(shown.replace("\\\\", ""))
    assert re.sub(r"\\(.)", r"\1", shown).replace("\u200b", "") == " ".join(text.split())
    assert not re.search(r":(\\?/){2}|(?i:www)\\?\.|@(?!\u200b)", shown)  # nothing to autolink


def test_work_per_view_is_capped_with_a_notice():
    assert cap_work(200, {1000, 200, 500, 2500}, keep=1000).notice is None
    work = cap_work(500, set(N_OPTIONS), keep=5000)  # fewer repetitions first
    assert work.reps == 90 and len(work.sizes) == len(N_OPTIONS) and "90 repetitions" in work.notice
    work = cap_work(500, set(N_OPTIONS), keep=5000, max_work=300_000)  # then fewer sizes
    assert work.reps == MIN_REPS and work.reps * sum(work.sizes) <= 300_000
    assert 5000 in work.sizes and 4000 not in work.sizes and 3000 not in work.sizes
    assert "without n = 3000, 4000" in work.notice
    work = cap_work(500, {5000}, keep=5000)
    assert (
        work.sizes == (5000,)
        and work.reps == 400
        and "400 repetitions instead of 500" in work.notice
    )


def test_the_gate_says_when_a_caller_would_wait():
    gate = _Gate(1)
    assert not gate.busy()
    with gate.slot():
        assert gate.busy()
    assert not gate.busy()


def test_a_fresh_link_is_corrected_with_public_apis_only():
    """Overflow values, repeats, off-grid values and unknown parameters on a link opened in a
    new session: one st.query_params edit, the page's own keys set before its widgets exist."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[3] / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("dpcore_app/app_pages/dp_owl.py")
    for key, value in {
        "reps": "1e309",
        "seed": ["3", "4"],
        "eps": "0.3",
        "compare": "200",
        "bogus": "1",
        "n": "5e2",
    }.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    link = {k: v if isinstance(v, list) else [v] for k, v in at.query_params.items()}
    assert link == {"eps": ["0.2"], "compare": ["200"], "n": ["500"]}
    assert at.session_state["dp-owl.eps"] == 0.2 and at.session_state["dp-owl.reps"] == 200
    assert at.session_state["dp-owl.n"] == 500
    text = re.sub(r"\\(.)", r"\1", " ".join(w.value for w in at.warning))
    assert (
        "1e309" in text
        and "given 2 times" in text
        and "bogus" in text
        and "nearest on its grid is 0.2" in text
    )


def test_a_bidirectional_control_in_shown_text_is_named_not_obeyed():
    """A link value (or a file's label) with U+202E would reverse the notice around it."""
    shown = plain("eps=\u202e0001 is not one of the options").replace("\\", "")
    assert "\u202e" not in shown and "⟨U+202E⟩" in shown
    shown = plain("a\u2066b\u2069c\u200fd").replace("\\", "")
    assert shown == "a⟨U+2066⟩b⟨U+2069⟩c⟨U+200F⟩d"
