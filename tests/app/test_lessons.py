"""The Lessons page: every lesson's link sets a valid whole state on its page, and every
answer reads the live numbers of the same computation that page runs."""

import math
import re

import pytest

from dpcore_app.ui.common import address, handout
from dpcore_app.ui.lessons.catalog import LESSONS
from tests.app.conftest import failures

PAGE = "dpcore_app/app_pages/lessons.py"


def test_the_page_lists_every_lesson_with_its_link(open_fresh, monkeypatch):
    monkeypatch.setattr(address, "lan_address", lambda: "192.168.1.20")  # whatever this machine's
    at = open_fresh(PAGE)
    assert not at.exception and not failures(at)
    titles = [h.value for h in at.subheader]
    assert len(LESSONS) >= 5 and titles == [
        f"{k}. {lesson.title}" for k, lesson in enumerate(LESSONS, 1)
    ]
    links = [p for p in at.get("page_link")]
    assert len([p for p in links if p.proto.label == "Open the experiment"]) == len(LESSONS)
    # served on this computer only (AppTest's localhost): said before anything is printed
    notice = " ".join(i.value for i in at.info)
    assert "this computer's own address" in notice
    assert "DPCORE_PUBLIC_URL=http://192.168.1.20:" in notice  # the address to set, offered


@pytest.mark.parametrize(
    "number,lesson", list(enumerate(LESSONS, 1)), ids=[lesson.key for lesson in LESSONS]
)
def test_a_lessons_link_sets_a_state_its_page_accepts_and_the_answer_is_live(
    open_fresh, number, lesson
):
    target = open_fresh(lesson.page, **lesson.params)
    assert not [w for w in target.warning if w.icon == ":material/link_off:"], [
        w.value for w in target.warning
    ]
    assert not target.exception and not [e for e in target.error if e.icon == ":material/error:"]
    if lesson.anchor:  # "Look at" scrolls to a heading the page has
        assert lesson.anchor in [h.proto.anchor for h in target.subheader]
    at = open_fresh(PAGE)
    there = lesson.look_link(address.app_base())
    assert (there is None) == (not lesson.anchor)
    assert not there or any(f"[Go there]({there})" in m.value for m in at.markdown)
    next(t for t in at.toggle if t.label == f"Show the answer to lesson {number}").set_value(
        True
    ).run()
    assert not at.exception and not failures(at), [
        e.value for e in failures(at)
    ]  # a caught failure is an error
    text = " ".join(m.value for m in at.markdown)
    assert re.search(r"\d+\.\d", text) or "No private release yet" in text


def test_the_lessons_handout_is_offline_and_carries_every_link():
    base = "https://stats.example.org/privacy"
    page = handout.lessons_page(LESSONS, base)
    for lesson in LESSONS:
        assert lesson.link(base).replace("&", "&amp;") in page
    assert "http" not in page.replace(base, "")  # nothing else fetched
    assert "Before printing" not in page  # a public address: nothing to warn about


@pytest.mark.parametrize(
    "base,loop",
    [
        ("http://localhost:8501", True),
        ("http://127.0.0.1:8501", True),
        ("http://[::1]:8501", True),
        ("http://192.168.1.20:8501", False),
        ("https://stats.example.org/privacy", False),
    ],
)
def test_links_to_this_computer_only_are_said_before_printing(base, loop):
    """A lecturer on a laptop would print QR codes that send 30 phones to 127.0.0.1: the
    worksheet and the Lessons page say so first, and how to print links a class can open."""
    assert address.loopback(base) == loop
    notice = address.loopback_notice(base)
    assert (notice is not None) == loop
    if loop:
        assert "DPCORE_PUBLIC_URL=" in notice and "--server.address 0.0.0.0" in notice
        assert "no one signs in" in notice
        assert "Before printing." in handout.lessons_page(LESSONS, base)


@pytest.mark.parametrize(
    "seen,offered",
    [("192.168.1.20", "192.168.1.20"), ("10.0.0.7", "10.0.0.7"), ("127.0.1.1", None), (None, None)],
)
def test_the_notice_offers_this_computers_network_address_when_it_has_one(
    monkeypatch, seen, offered
):
    """The address the system would send from (read from a UDP socket pointed at a private
    address: no packet leaves), whatever network the test machine has: none (OSError) or only
    a loopback one, and the notice says what ADDRESS stands for instead."""
    import socket

    class Probe:
        def __init__(self, *args):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def connect(self, address):
            if seen is None:
                raise OSError("Network is unreachable")

        def getsockname(self):
            return (seen, 43210)

    monkeypatch.setattr(socket, "socket", Probe)
    assert address.lan_address() == offered
    notice = address.loopback_notice("http://localhost:8502")
    where = f"http://{offered or 'ADDRESS'}:8502"
    assert f"DPCORE_PUBLIC_URL={where} dpcore app --server.address 0.0.0.0" in notice
    assert ("ADDRESS: this computer's address on the class's network" in notice) == (not offered)
    sheet = handout.lessons_page(LESSONS, "http://localhost:8502")
    assert f"<code>DPCORE_PUBLIC_URL={where} dpcore app" in sheet  # the command, as code


def test_the_theory_lesson_names_the_bounds_as_the_theory_page_does():
    """Lesson 4 said "the printed bound" (the code's key) for what the Theory page calls the
    formula as transcribed from the paper."""
    from dpcore_app.ui.bounds.explain import coverage_sentence
    from dpcore_app.ui.lessons.catalog import answer_theory

    text = answer_theory()
    assert "printed" not in text
    assert "the transcribed bound held in" in text and "the re-derived bound held in" in text
    page = coverage_sentence("printed", {"share": 1.0, "trials": 10}, 0.05, math.inf)[1]
    assert "the transcribed bound held" in page  # the Theory page's own words


def test_lesson_2_explains_the_gap_with_the_pages_own_split_by_cause():
    """The answer used to say that more patients lose less to the noise, where the page's split
    by cause showed the noise's cost growing with n: it now reads the split it quotes."""
    from dpcore_app.ui.lessons.catalog import _owl, _split, answer_small_n

    text = answer_small_n()
    summary = _owl(200, compare=(2000,))
    for n in (200, 2000):
        _, _, total, noise, reg = _split(summary, n, 1.0)
        assert f"{total:+.1f} points, {noise:+.1f} from the noise and {reg:+.1f}" in text
    (n0, r0), (n1, r1) = (_split(summary, n, 1.0)[3:] for n in (200, 2000))
    noise_wins = abs(n0) - abs(n1) >= abs(r0) - abs(r1)
    which = "the noise's cost" if noise_wins else "the regularization's cost"
    assert f"more patients win back mostly {which}" in text
