"""AppTest: the "Your data" page with awkward files, parameter choices, the ledger and sessions."""

import csv
import hashlib
import io
import json
import logging
import os
import re
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.data.csv_io import read_table
from dpcore_app.ui.common import ledger
from dpcore_app.ui.upload import files
from tests.app.conftest import APP
from tests.app.your_data_files import (
    EACH_NEIGHBOUR,
    SITE_TABLE,
    public_d0,
    site_csv,
    trial_csv,
)
from tests.app.your_data_page import (
    PAGE,
    RELEASE,
    UPLOADED,
    demo_release,
    fill_bounds,
    fill_table,
    headline,
    ledger_entries,
    release,
    set_cap,
    upload,
    upload_release,
    words,
)
from tests.releases import with_rule

DEMO = "dpcore_app/demo_data/paper_trial.csv"
DATA = (Path(__file__).resolve().parents[2] / DEMO).read_bytes()


def edit_row(at, data, column, **values):
    """Change one row of the page's table, keeping the others (as typing into one cell)."""
    digest = hashlib.sha256(data).hexdigest()[:12]
    rows = dict(at.session_state[f"meta_rows_{digest}"])
    rows[column] = {**rows.get(column, {}), **values}
    return fill_table(at, data, rows)


def release_files(at):
    """The release's three files (the dictionary and the script downloads left out)."""
    return [b for b in at.get("download_button") if b.key in ("dl_rule", "dl_rows", "dl_report")]


@pytest.fixture
def page(open_page):
    return open_page(PAGE)


# --------------------------------------------------------------------------------------------
# Awkward and malformed files: each ends in a clear message or a correct result

GOOD = trial_csv()
CASES = {
    # name: (bytes, expected words in an error, or None for a readable trial)
    "plain comma file": (GOOD, None),
    "semicolon": (trial_csv(sep=";"), None),
    "tab": (trial_csv(sep="\t"), None),
    "utf-8 with BOM": (b"\xef\xbb\xbf" + GOOD, None),
    # one encoding, declared (UTF-8 on the page), never guessed from the file
    "latin-1 header": (GOOD.replace(b"age", b"\xe2ge"), "not valid utf-8: byte 0xE2 at line 1"),
    "trailing spaces": (GOOD.replace(b",", b" , "), None),
    "quoted fields": (GOOD.replace(b"age,arm,y", b'"age","arm","y"'), None),
    "drug/placebo labels": (trial_csv(arms=("drug", "placebo")), None),
    "1/2 labels need a choice": (trial_csv(arms=("1", "2")), None),
    "missing values dropped": (GOOD.replace(b"\n41,", b"\nNA,", 1), None),
    "windows line ends": (GOOD.replace(b"\n", b"\r\n"), None),
    "excel sep line": (b"sep=;\n" + trial_csv(sep=";"), None),
    "empty file": (b"", "the file is empty"),
    "only spaces": (b"   \n  \n", "the file is empty"),
    "header only": (b"age,arm,y\n", "no data rows"),
    "not a csv (zip)": (b"PK\x03\x04" + b"\x00" * 200, "not a CSV file"),
    "binary junk": (bytes(range(256)) * 20, "CSV"),
    "pdf": (b"%PDF-1.4 junk", "PDF"),
    "three arms": (trial_csv(arms=("a", "b")).replace(b",a,", b",c,", 3), "3 arms"),
    "one arm": (trial_csv(arms=("1", "1")), "one arm only"),
    "too few rows": (trial_csv(n=12), "at least 10"),
    "constant outcome": (
        b"age,arm,y\n" + b"".join(b"%d,%d,5\n" % (i, i % 2) for i in range(30)),
        "same value in every row",
    ),
    "duplicate header": (GOOD.replace(b"age,arm,y", b"age,arm,arm"), "more than once"),
    "ragged rows": (GOOD + b"1,2,3,4,5\n", "fields"),
    # a cell that is not a number is a missing value of its row (weight 0), nothing else
    "non-numeric covariate cell": (GOOD.replace(b"\n41,", b"\nforty,", 1), None),
    "all rows missing outcome": (
        b"age,arm,y\n" + b"".join(b"%d,%d,\n" % (i, i % 2) for i in range(30)),
        "missing value",
    ),
    "infinite covariate": (GOOD.replace(b"\n41,", b"\ninf,", 1), None),
    "stray quote": (GOOD.replace(b"\n41,", b'\n"41,', 1), "quoted field is not closed"),
    "markup in names and labels": (
        trial_csv(arms=("<b>x</b>", "**y**"), header=("[a](http://e)", "arm", "y")),
        None,
    ),
}


@pytest.fixture(scope="module")
def shared_page():
    """One session for the file cases: each upload replaces the previous file."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page(PAGE)
    at.run()
    return at


@pytest.mark.parametrize("case", list(CASES))
def test_awkward_and_malformed_files(shared_page, case):
    data, expected = CASES[case]
    at = upload(shared_page, data, name=f"{case}.csv")
    errors = words(at.error)
    if expected is None:
        assert not at.error, errors
        assert "patients read" in words(at.info)
    else:
        assert expected in errors, errors
        assert "could not be read" in words(at.warning)
        assert "Traceback" not in errors and "could not be computed" not in errors


def test_markup_in_the_file_is_shown_as_text(shared_page):
    at = upload(shared_page, CASES["markup in names and labels"][0])
    treated = next(r for r in at.radio if r.label.startswith("Treated arm"))
    assert set(treated.options) == {"\\<b\\>x\\</b\\>", "\\*\\*y\\*\\*"}  # options render markdown
    shown = " ".join(e.value for e in at.caption)
    assert "\\<b\\>x\\</b\\>" in shown and "\\*\\*y\\*\\*" in shown  # escaped by plain()
    assert not any("<b>" in m.value for m in at.markdown)


# --------------------------------------------------------------------------------------------
# The demo flow: dictionary, release, ledger, downloads


def test_release_is_recorded_and_the_json_reproduces_the_screen(page):
    at = demo_release(page)
    last = at.session_state[RELEASE]
    rel, rec, diagnostics = last.release, last.rec, last.diagnostics
    assert at.subheader[-1].value == "Private treatment rule (ε = 1)"
    entries = ledger_entries(at)
    assert [(e.mechanism, e.epsilon, e.delta) for e in entries] == [
        ("DP-OWL rule (Your data)", 1.0, 0.0)
    ]
    assert "ε = 1 over 1 release" in words(at.sidebar.markdown)
    assert (
        "Released a private treatment rule at ε = 1: a patient's data moves the chance of "
        "this rule by at most a factor 2.72. This dataset has spent ε = 1 in total, over every "
        "session."
        in headline(at)
        and "Release no. 1 on this dataset." in headline(at)
    )
    rule = json.loads(files.rule_json(rel))
    recommended, _ = files.apply_rule(rule, read_table(DEMO))
    np.testing.assert_array_equal(recommended == rule["treated"], rec > 0)
    share = f"{100 * np.mean(recommended == rule['treated']):.1f}%"
    assert at.metric[0].value == share and at.metric[0].label.endswith("1")
    for analyst_only in ("value", "clipped", "diagnostic", "agree", "kappa", "n_iter"):
        assert analyst_only not in " ".join(rule).lower()
    at.button(key="compare").click().run()
    assert not at.exception
    analyst = at.session_state["your_data_compare"][1]
    shown = words(at.markdown)
    assert f"{analyst.value_private:.3g}" in shown and "agrees with the non-private" in shown
    text = json.dumps(rule)
    for number in (analyst.value_private, analyst.value_nonprivate):
        assert repr(number) not in text
    assert "clipped_share" in diagnostics and "clipped_share" not in text


def test_second_release_adds_up_and_a_cap_refuses(page):
    at = upload_release(page, eps="0.5")
    set_cap(at, 0.8)
    at.select_slider(key="eps").set_value(0.4).run()
    assert "would be refused" in words(at.warning)  # the verdict counts the spend and the cap
    release(at)
    assert "Refused" in words(at.error) and "0.8" in words(at.error)
    assert len(ledger_entries(at)) == 1
    at.select_slider(key="eps").set_value(0.2).run()
    release(at)
    assert not at.error
    assert [e.epsilon for e in ledger_entries(at)] == [0.5, 0.2]
    assert "ε = 0.7 over 2 releases (cap ε = 0.8)" in words(at.sidebar.markdown)


def test_no_session_can_cap_a_shipped_demo_file(page):
    """The demo files are practice data every session shares: their total adds up, but the
    sidebar offers no cap, so no student can block the class."""
    at = demo_release(page)
    assert not [n for n in at.sidebar.number_input if n.key == "ledger_cap"]
    assert not [b for b in at.sidebar.button if b.key == "ledger_set_cap"]
    assert "Practice data shipped with the app" in words(at.sidebar.caption)
    assert "ε = 1 over 1 release" in words(at.sidebar.markdown)


def test_a_first_cap_needs_confirmation(page):
    at = upload_release(page)
    at.sidebar.number_input(key="ledger_cap").set_value(3.0).run()
    assert at.sidebar.button(key="ledger_set_cap").disabled  # not confirmed yet
    assert "cannot be raised or removed" in at.sidebar.checkbox(key="ledger_cap_sure").label


def test_data_range_shortcut_warns_and_says_not_private(page):
    at = page
    at.radio(key="file").set_value("hospital_trial").run()
    at.button(key="fill_data").click().run()
    assert "voids the privacy guarantee" in words(at.warning)
    at.button_group(key="better").set_value("smaller").run()  # not read off the data either
    release(at)
    assert at.subheader[-1].value.startswith("NOT PRIVATE treatment rule")
    assert "WITHOUT a privacy guarantee" in headline(at)
    rel = at.session_state[RELEASE].release
    assert not json.loads(files.rule_json(rel))["private"]
    assert "NOT PRIVATE" in ledger_entries(at)[0].mechanism.upper()


def test_one_data_range_left_after_the_dictionary_keeps_the_release_not_private(page):
    """The data's ranges, then the dictionary, then one column's data range typed back (as a
    dictionary that does not describe it would leave it): the title follows the table's
    entries, not the last button pressed."""
    at = page
    at.radio(key="file").set_value("hospital_trial").run()
    at.button(key="fill_data").click().run()
    data = (
        Path(__file__).resolve().parents[2] / "dpcore_app/demo_data/hospital_trial.csv"
    ).read_bytes()
    digest = hashlib.sha256(data).hexdigest()[:12]
    from_data = dict(at.session_state[f"meta_rows_{digest}"])["age"]
    at.button(key="fill_dictionary").click().run()
    assert "voids the privacy guarantee" not in words(at.warning)
    edit_row(at, data, "age", **{k: from_data[k] for k in ("lower", "upper", "origin")})
    assert "'age' were read from the data" in words(at.warning)
    release(at)
    assert at.subheader[-1].value.startswith("NOT PRIVATE treatment rule")


@pytest.mark.parametrize(
    "settings,expect",
    [
        ({"design": "estimated"}, "C = n W"),
        ({"design": "column"}, "none is left to hold the propensities"),
        ({"eps": 0.05, "gamma_from": "proxy"}, "Algorithm 2 on a simulated public proxy"),
        ({"eps": 1000.0, "better": "smaller"}, "the paper's table"),
        ({"design": "2:1"}, "W = **60**"),
        ({"design": "estimated", "p_min": 0.01}, "W = **2000**"),
    ],
)
def test_parameter_choices(page, settings, expect):
    at = page
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    kinds = {
        "design": "selectbox",
        "eps": "select_slider",
        "gamma_from": "radio",
        "better": "button_group",
        "p_min": "select_slider",
    }
    for key, value in settings.items():
        getattr(at, kinds[key])(key=key).set_value(value).run()
    assert not at.exception
    shown = words(at.caption) + words(at.markdown) + words(at.error)
    assert expect in shown, shown[-600:]
    if settings.get("design") != "column":  # the demo has no propensity column to pick
        release(at)
        assert not at.error, words(at.error)
        assert at.session_state[RELEASE].release.epsilon == settings.get("eps", 1.0)


def test_incomplete_or_reversed_bounds_block_the_release(page):
    at = page
    at.radio(key="file").set_value("paper_trial").run()
    edit_row(at, DATA, "x1", upper=None)  # the dictionary's bound taken out of the table
    assert "Enter the public bounds" in words(at.info)
    assert all(b.key != "release" for b in at.button)
    edit_row(at, DATA, "x1", lower=2.0, upper=1.0)
    assert "upper bound must be above" in words(at.info)
    assert all(b.key != "release" for b in at.button)


def test_a_file_over_the_upload_limit_is_refused(page):
    big = b"a,b\n" + b"1,2\n" * (26 * 1024 * 1024)  # 104 MB, over the configured 100 MB
    at = upload(page, big)
    assert "largest file this app accepts is 100 MB" in words(at.error)


# --------------------------------------------------------------------------------------------
# Uploaded data stay in their session


def test_a_second_session_sees_neither_the_data_nor_the_ledger(
    open_page, monkeypatch, caplog, own_session_ids
):
    import dpcore_app.ui.upload.compute as compute

    calls = []
    real = compute.read_trial
    monkeypatch.setattr(compute, "read_trial", lambda *a, **k: calls.append(1) or real(*a, **k))
    marker = b"zqxj_marker"
    data = trial_csv(arms=(marker.decode(), "placebo"))
    caplog.set_level(logging.DEBUG)
    start = time.time() - 1
    first = upload(open_page(PAGE), data)
    fill_bounds(first, [(0, 100), (-5, 5)], data)
    release(first)
    reads = len(calls)  # the analyst's choices of roles each read the file once
    assert len(ledger_entries(first)) == 1 and reads >= 1

    second = AppTest.from_file(APP, default_timeout=60)
    second.run()
    second.switch_page(PAGE)
    second.run()
    assert "No trial yet" in words(second.info)
    assert ledger.IN_USE not in second.session_state  # the ledger itself is shared (per file)
    assert RELEASE not in second.session_state
    assert "ε = 0: no private release" in words(second.sidebar.markdown)
    upload(second, data)  # the same bytes: a global cache would answer without reading
    assert len(calls) == 2 * reads
    assert marker.decode() not in caplog.text
    for folder in (Path(tempfile.gettempdir()), Path(APP).parent):  # nothing written to disk
        # os.walk, not rglob: another test's temporary folder may go while this one walks
        paths = (Path(r) / n for r, _, names in os.walk(folder) for n in names)
        for path in paths:
            try:
                fresh = (
                    path.is_file() and path.stat().st_mtime >= start and path.stat().st_size < 10**7
                )
                assert not fresh or marker not in path.read_bytes(), path
            except OSError:  # another process's file, gone or unreadable
                continue


def test_bad_link_values_fall_back_with_a_notice(open_page):
    at = open_page(PAGE, file="../../etc/passwd", eps="0", design="9:1", bounds="1")
    notices = words(at.warning)
    for key in ("file=../../etc/passwd", "eps=0", "design=9:1", "unknown parameter"):
        assert key in notices
    assert at.radio(key="file").value == "upload" and "No trial yet" in words(at.info)


def test_gamma_and_W_follow_the_public_settings(page):
    """Hospital demo, 2:1: W = 20 / (1/3) = 60; γ is the paper's, scaled by W / 30."""
    from dpcore.owl.paper import paper_gamma

    at = page
    at.radio(key="file").set_value("hospital_trial").run()
    at.button(key="fill_dictionary").click().run()
    gamma = paper_gamma(1.0, 1200) * 60 / 30  # n = the file's 1200 rows, 19 of them incomplete
    assert f"γ = **{gamma:.4g}**" in words(at.markdown) and "W = **60**" in words(at.markdown)
    rel = release(at).session_state[RELEASE].release
    assert rel.C == 0.0
    np.testing.assert_allclose([rel.W, rel.gamma], [60.0, gamma], rtol=1e-12)
    assert rel.sensitivity == pytest.approx(2 * 60 / gamma, rel=1e-6)


@pytest.mark.parametrize(
    "d0,design,expect",
    [
        ("public", None, "Algorithm 2 on a file D0 (400 rows"),
        ("public", "estimated", "needs a known randomization ratio"),
        ("trial", None, "D0 is the trial itself"),
        ("shares rows", None, "D0 shares 1 row with the trial"),
    ],
)
def test_gamma_tuned_on_a_public_file_d0(page, d0, design, expect):
    at = page
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    if design:
        at.selectbox(key="design").set_value(design).run()
    at.radio(key="gamma_from").set_value("d0").run()
    assert "Upload D0" in words(at.info) and all(b.key != "release" for b in at.button)
    data = {
        "public": public_d0(),
        "trial": DATA,
        "shares rows": public_d0() + DATA.splitlines(keepends=True)[5],
    }[d0]
    at.file_uploader(key="upload_d0").set_value(("d0.csv", data, "text/csv")).run()
    assert not at.exception
    assert expect in words(at.markdown) + words(at.error)
    if d0 == "public" and not design:
        release(at)
        source = at.session_state[RELEASE].release.gamma_source
        assert "the analyst declares public" in source and "analyst's assertion" in source
        assert (
            "analyst's assertion"
            in json.loads(files.rule_json(at.session_state[RELEASE].release))["gamma_source"]
        )
    else:
        assert all(b.key != "release" for b in at.button)


# --------------------------------------------------------------------------------------------
# Issue 14: public levels and n, stale releases, chosen identifiers, small cache keys, width


def upload_with_site(at, data):
    """Upload ``data`` (a site_csv) and take age and site as the covariates."""
    upload(at, data)
    at.multiselect(key=f"covs_{hashlib.sha256(data).hexdigest()[:12]}").set_value(
        ["age", "site"]
    ).run()


def site_release(at, data):
    upload_with_site(at, data)
    fill_table(at, data, SITE_TABLE)
    return release(at)


def test_levels_come_from_the_table_not_the_data(page):
    at = page
    data = site_csv({2: "RARE_one_patient"})
    upload_with_site(at, data)
    assert "Type the public levels" in words(at.info)  # guessed categorical, no levels yet
    assert all(b.key != "release" for b in at.button)
    fill_table(at, data, SITE_TABLE)
    rel = release(at).session_state[RELEASE].release
    assert rel.names == ("age", "site=B", "site=C") and rel.private
    assert "RARE" not in files.rule_json(rel)


def test_levels_read_from_the_data_title_the_release_not_private(page):
    at = page
    data = site_csv({2: "RARE_one_patient"})
    upload_with_site(at, data)
    at.button(key="fill_data").click().run()
    assert "voids the privacy" in words(at.warning)
    at.button_group(key="better").set_value("larger").run()
    rel = release(at).session_state[RELEASE].release
    assert "site=rare_one_patient" in rel.names  # as the reader keys the level
    assert rel.title() == (
        "NOT PRIVATE treatment rule (ε = 1): bounds or levels read from the data void the guarantee"
    )


def test_n_is_the_files_row_count_and_the_complete_count_is_analyst_only(page):
    at = site_release(page, site_csv({1: "NA"}))
    last = at.session_state[RELEASE]
    assert last.release.n == 60 and "patient's row among the 60" in words(at.info)
    assert "1 of them miss a value" in words(at.caption) and "for you only" in words(at.caption)
    published = json.loads(files.rule_json(last.release))
    numbers = [
        v for v in _leaves(published) if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    assert 59 not in numbers and published["n"] == 60


def _leaves(value):
    """Every scalar inside a parsed JSON value (coefficients, counts, settings)."""
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def test_a_release_is_hidden_when_its_settings_change(page):
    data = site_csv()
    at = site_release(page, data)
    assert at.subheader[-1].value == "Private treatment rule (ε = 1)"
    covs = at.multiselect(key=f"covs_{hashlib.sha256(data).hexdigest()[:12]}")
    covs.set_value(["age"]).run()
    assert not at.exception
    assert all(not s.value.startswith("Private treatment rule") for s in at.subheader)
    assert "computed from earlier settings" in words(at.caption)
    assert not release_files(at)
    at.multiselect(key=f"covs_{hashlib.sha256(data).hexdigest()[:12]}").set_value(
        ["age", "site"]
    ).run()
    fill_table(at, data, SITE_TABLE)
    assert at.subheader[-1].value == "Private treatment rule (ε = 1)"  # the same settings again
    edit_row(at, data, "site", levels="B, A, C")  # another baseline: other columns
    assert "computed from earlier settings" in words(at.caption)
    edit_row(at, data, "site", levels="A, B, C")
    assert at.subheader[-1].value == "Private treatment rule (ε = 1)"
    at.select_slider(key="eps").set_value(0.5).run()
    assert "computed from earlier settings" in words(at.caption)


def test_only_ticked_identifiers_reach_the_per_row_file(page):
    data = site_csv()
    at = site_release(page, data)
    ids = at.multiselect(key=f"ids_{hashlib.sha256(data).hexdigest()[:12]}")
    assert ids.value == ["patient_id"] and "response" in ids.options
    last = at.session_state[RELEASE]
    rows = next(v for k, v in last.files.items() if k[0] == "rows")
    header = rows.splitlines()[0]
    assert '"patient_id"' in header and "response" not in header
    ids.set_value([]).run()
    rows = last.files[("rows", ())]
    assert "patient_id" not in rows.splitlines()[0]


def test_a_rerun_after_a_release_reads_nothing_again(page, monkeypatch):
    import dpcore_app.ui.upload.compute as compute
    import dpcore_app.ui.upload.files as upload_files

    data = site_csv()
    at = site_release(page, data)
    calls = []
    for module, name in (
        (compute, "read_table"),
        (compute, "read_trial"),
        (upload_files, "rows_csv"),
    ):
        real = getattr(module, name)
        monkeypatch.setattr(
            module, name, lambda *a, _real=real, _n=name, **k: calls.append(_n) or _real(*a, **k)
        )
    for _ in range(3):
        at.run()
    assert not at.exception and calls == []
    assert at.subheader[-1].value == "Private treatment rule (ε = 1)"


def test_a_failed_download_says_so_on_the_page_and_logs_no_data(page, monkeypatch, caplog):
    import dpcore_app.ui.upload.files as upload_files

    secret = "zqxj" + "_secret"  # the source line shown in the traceback does not spell it

    def broken(*a, **k):
        raise ValueError("cell value " + secret)

    monkeypatch.setattr(upload_files, "rows_csv", broken)
    caplog.set_level(logging.DEBUG)
    at = site_release(page, site_csv())
    assert "Per-row recommendations (CSV) download could not be built (ValueError)" in words(
        at.error
    )
    assert "zqxj_secret" not in caplog.text and "message withheld" in caplog.text
    assert len(release_files(at)) == 2  # the other two files are still offered


def test_a_wide_file_has_one_table_and_no_preselected_covariates(page):
    names = [f"c{j}" for j in range(2000)]
    head = ",".join(names + ["arm", "y"]) + "\n"
    body = "".join(",".join(["1"] * 2000 + [str(i % 2), str(i % 5)]) + "\n" for i in range(30))
    data = (head + body).encode()
    at = upload(page, data)
    key = f"covs_{hashlib.sha256(data).hexdigest()[:12]}"
    assert at.multiselect(key=key).value == [] and "none is pre-selected" in words(at.caption)
    assert not at.main.number_input  # bounds live in one table, not 2 inputs per column
    at.multiselect(key=key).set_value(names[:3]).run()
    assert not at.exception


def test_a_file_over_the_workable_size_is_refused(page, monkeypatch):
    import dpcore_app.ui.upload.compute as compute

    monkeypatch.setattr(compute, "MAX_ROWS", 50)
    at = upload(page, site_csv())
    assert "this page works with at most 50" in words(at.error)


def test_switching_to_a_demo_and_back_keeps_the_upload_mapping_and_table(page):
    data = site_csv()
    at = page
    upload(at, data)
    covs = f"covs_{hashlib.sha256(data).hexdigest()[:12]}"
    at.multiselect(key=covs).set_value(["age", "site"]).run()
    fill_table(at, data, SITE_TABLE)
    at.radio(key="file").set_value("paper_trial").run()
    at.radio(key="file").set_value("upload").run()
    assert not at.exception
    assert "uploaded earlier in this session" in words(at.caption)
    assert at.multiselect(key=covs).value == ["age", "site"]
    assert any(b.key == "release" for b in at.button)  # the typed table is still there
    at.button(key="forget_upload").click().run()
    assert "No trial yet" in words(at.info)


def test_option_lists_show_column_names_as_typed(page):
    at = upload(page, site_csv())
    assert (
        "patient_id"
        in at.selectbox(key=f"treat_{hashlib.sha256(site_csv()).hexdigest()[:12]}").options
    )
    assert not any("\\_" in o for s in at.selectbox for o in s.options)
    assert not any("\\_" in o for m in at.multiselect for o in m.options)


def test_an_estimated_propensity_warns_before_the_release(page):
    at = page
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    at.selectbox(key="design").set_value("estimated").run()
    assert "essentially noise" in words(at.warning) and RELEASE not in at.session_state
    at.selectbox(key="design").set_value("1:1").run()
    assert "essentially noise" not in words(at.warning)


def test_the_upload_caption_states_how_long_files_and_links_live(page):
    at = page
    caption = words(at.caption)
    assert "keeps your session 120 s" in caption  # server.disconnectedSessionTTL
    assert "gone when you close the tab" not in caption  # not true: the session outlives it
    assert "share the downloaded files, not the links" in caption


def test_a_large_per_row_file_is_built_when_asked(page, monkeypatch):
    import dpcore_app.ui.upload.results as upload_results

    monkeypatch.setattr(upload_results, "EAGER_ROWS", 10)
    at = site_release(page, site_csv())
    last = at.session_state[RELEASE]
    assert not any(k[0] == "rows" for k in last.files) and len(release_files(at)) == 2
    at.button(key="prepare_rows").click().run()
    assert any(k[0] == "rows" for k in last.files) and len(release_files(at)) == 3
    at.run()
    assert len(release_files(at)) == 3


def test_downloads_carry_the_release_index_and_the_files_total(page):
    at = demo_release(page, eps="0.5")
    first = at.session_state[RELEASE].release
    at.select_slider(key="eps").set_value(0.2).run()
    release(at)
    second = at.session_state[RELEASE].release
    spent = {e.index: e.epsilon for e in ledger_entries(at)}
    for rel in (first, second):
        got = json.loads(files.rule_json(rel))["ledger"]
        assert float(got["epsilon_total"]) == pytest.approx(
            sum(v for k, v in spent.items() if k <= got["release_index"])
        )
    assert (
        json.loads(files.rule_json(second))["ledger"]["release_index"]
        == json.loads(files.rule_json(first))["ledger"]["release_index"] + 1
    )
    report = at.session_state[RELEASE].files[("report",)]
    assert f"release no. {second.ledger_index} on this file" in report
    rows_file = next(v for k, v in at.session_state[RELEASE].files.items() if k[0] == "rows")
    rows = list(csv.DictReader(io.StringIO(rows_file)))
    assert {(r["release_no"], r["file_epsilon_total"]) for r in rows} == {
        (str(second.ledger_index), f"{second.epsilon_total:g}")
    }
    assert max(len(v) for v in rows[0].values()) < 40  # no sentence repeated in every row


@EACH_NEIGHBOUR
def test_neighbouring_files_on_the_page_publish_the_same_fields(
    open_fresh, change, tmp_path, monkeypatch
):
    """The page's own plumbing (table, levels, n, γ, release, downloads) on two files that
    differ in one row: every published field but the noisy coefficients is the same. Each
    file is released in its own ledger: in one ledger the second file shares 59 rows with the
    first and is rightly charged its release too (tests/dpcore/privacy/test_ledger_identity.py)."""

    published = []
    for k, data in enumerate((site_csv(), site_csv(change))):
        monkeypatch.setenv("DPCORE_LEDGER", str(tmp_path / f"ledger{k}.sqlite"))
        at = site_release(open_fresh(PAGE), data)
        last = at.session_state[RELEASE]
        rel = with_rule(last.release, intercept=0.0, coef=(0.0,) * len(last.release.coef))
        published.append(
            (
                rel.to_dict(),
                last.files[("rows", ("patient_id",))].splitlines()[0],
                at.subheader[-1].value,
                words(at.info),
            )
        )
    assert published[0] == published[1]
    assert published[0][0]["n"] == 60 and published[0][0]["covariates"] == [
        "age",
        "site=B",
        "site=C",
    ]


# --------------------------------------------------------------------------------------------
# The outcome's direction: never assumed


DIRECTION_WARNING = (
    "was created with a default value but also had its value set via the Session State API"
)


@pytest.fixture
def policy_log(monkeypatch):
    """The records of Streamlit's widget-policy logger (it does not propagate to caplog); its
    once-per-process flag is reset so that the duplicate-state warning can show again."""
    from streamlit.elements.lib import policies

    records = []
    handler = logging.Handler()
    handler.emit = records.append
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    policies._LOGGER.addHandler(handler)
    yield records
    policies._LOGGER.removeHandler(handler)


def test_the_outcome_direction_has_no_default(page):
    at = upload(page, UPLOADED)
    at = fill_table(at, UPLOADED, {})  # no bounds yet: the direction is not chosen by this
    at.button_group(key="better").set_value(None).run()
    assert at.button_group(key="better").value is None
    assert all(b.key != "release" for b in at.button)
    assert "Still needed: Choose which outcome is better" in words(at.info)
    assert "nothing is assumed" in words(at.warning)
    at = fill_bounds(at, [(0, 100), (-5, 5)], UPLOADED)
    at.button_group(key="better").set_value(None).run()
    assert all(b.key != "release" for b in at.button)  # bounds alone do not make it ready
    at.button_group(key="better").set_value("smaller").run()
    assert "nothing is assumed" not in words(at.warning)
    release(at)
    assert at.session_state[RELEASE].release.larger_is_better is False


@pytest.mark.parametrize(
    "line,expect",
    [
        ("larger_is_better,design,,,,false,\n", "smaller"),
        ("larger_is_better,design,,,,true,\n", "larger"),
        ("", None),  # not given
        ("larger_is_beter,design,,,,true,\n", None),  # misspelled: listed as a problem
    ],
)
def test_filling_from_a_dictionary_sets_the_direction_only_when_it_names_it(
    page, policy_log, line, expect
):
    dictionary = (
        "column,role,type,lower,upper,levels\nage,covariate,numeric,0,100,\n"
        "arm,treatment,label,,,1|0\ny,outcome,numeric,-5,5,\n" + line
    ).encode()
    at = upload(page, UPLOADED)
    at.file_uploader(key="dictionary_upload").set_value(("d.csv", dictionary, "text/csv")).run()
    at.button(key="fill_dictionary").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.button_group(key="better").value == expect
    assert (expect is None) == ("Choose which outcome is better" in words(at.info))
    if line and expect is None:
        assert "larger_is_beter" in words(at.warning)  # the dictionary's problem, listed
    assert not [r for r in policy_log if DIRECTION_WARNING in r.getMessage()]


def test_the_page_is_the_analysts_steps_with_the_spend_from_the_first(page):
    at = page
    heads = lambda: [
        re.sub(r"\\(.)", r"\1", m.value)
        for m in at.markdown  # noqa: E731
        if re.match(r"\*\*\d · ", m.value)
    ]
    assert [h.split(" · ")[1].rstrip("*") for h in heads()] == [
        "Data",
        "Dictionary and table",
        "Preview",
        "Release",
        "Files",
    ]
    assert all("· needs " in h for h in heads())
    at.radio(key="file").set_value("paper_trial").run()
    assert "spent on this file so far: ε = 0 over every session" in heads()[0]
    # the demo's dictionary fills the roles, the design and the table as the file arrives
    assert [":green[done]" in h for h in heads()] == [True, True, True, False, False]
    release(at)
    assert "spent on this file so far: ε = 1 over every session" in heads()[0]
    assert all(":green[done]" in h for h in heads())


@pytest.mark.parametrize("written", [("Yes", "No "), ("Y", "N"), ("TRUE", "false")])
def test_a_binary_covariate_written_as_words_is_read_as_the_command_line_reads_it(page, written):
    """Typed binary, a covariate whose cells are Yes/No (or Y/N, TRUE/false) reads as 1/0,
    each cell on its own, as read_trial and dpcore fit read it; the release goes out."""
    yes, no = written
    rows = "".join(f"{40 + i % 30},{yes if i % 3 else no},{i % 2},{i % 7}\n" for i in range(60))
    data = ("age,smoker,arm,y\n" + rows).encode()
    at = upload(page, data)
    fill_table(
        at,
        data,
        {
            "age": {"lower": 18.0, "upper": 90.0},
            "smoker": {"type": "binary"},
            "y": {"lower": 0.0, "upper": 10.0},
        },
    )
    assert not at.error, [e.value for e in at.error]
    release(at)
    released = at.session_state[RELEASE]
    assert released.release.names == ("age", "smoker")
    smoker = released.trial.X[:, 1]
    assert smoker.tolist() == [float(i % 3 != 0) for i in range(60)]
