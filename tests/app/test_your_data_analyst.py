"""AppTest: the Your-data page as an analyst's tool. A CSV and its dictionary in, the preview,
a release with its private evaluation, and the files that work elsewhere."""

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import load_rule, read_dictionary
from dpcore_app.ui.upload import analyst_compute
from dpcore_app.ui.upload import explain as explain_upload
from tests.app.conftest import choose_roles
from tests.app.your_data_files import EACH_NEIGHBOUR
from tests.app.your_data_page import PAGE, RELEASE, headline, ledger_entries, release, words
from tests.releases import run_script, with_rule

ROOT = Path(__file__).resolve().parents[2]
HOSPITAL = ROOT / "dpcore_app" / "demo_data" / "hospital_trial.csv"


@pytest.fixture
def page(open_page):
    return open_page(PAGE)


def write_script_files(folder, data, last, propensity, **kw):
    """Write what the script of the release ``last`` reads into ``folder``: ``data`` as
    trial.csv, and as trial_dictionary.json the dictionary the page hands back for the
    release's settings (``propensity`` and ``kw`` as ``dictionary_from_settings`` takes them)."""
    (folder / "trial.csv").write_bytes(data)
    filled = analyst_compute.dictionary_from_settings(
        last.trial,
        last.settings["bounds"],
        last.settings["outcome_bounds"],
        last.settings["larger_is_better"],
        propensity,
        **kw,
    )
    (folder / "trial_dictionary.json").write_text(filled.to_json())


def upload_with_dictionary(at, data, dictionary, name="dictionary.csv"):
    at.radio(key="file").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("trial.csv", data, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    at.file_uploader(key="dictionary_upload").set_value((name, dictionary, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    at.button(key="fill_dictionary").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_csv_and_dictionary_to_an_evaluated_release_and_four_files(page, tmp_path):
    # Not byte-identical to the demo, so the page knows no dictionary until one is uploaded.
    data = HOSPITAL.read_bytes().replace(b"\n", b"\r\n")
    dictionary = read_dictionary(ROOT / "dpcore_app" / "demo_data" / "hospital_trial.json")
    at = upload_with_dictionary(page, data, dictionary.to_csv().encode())
    assert "A rule can be released" in words(at.info)
    assert "Simulated, no privacy spent" not in words(at.caption)  # the analyst starts it
    at.toggle(key="preview_on").set_value(True).run()
    assert "twin of 960 patients" in at.toggle(key="preview_on").label  # the fit part's size
    shown = words(at.markdown) + words(at.caption)
    assert "Simulated, no privacy spent" in shown and "agrees with the non-private rule" in shown
    assert at.toggle(key="evaluate").value is True  # on by default
    at = release(at, evaluate=True)
    last = at.session_state[RELEASE]
    rel, ev = last.release, last.evaluation
    assert ev is not None and rel.n == 960 and ev.m == 240  # the public 80/20 split of n = 1200
    entry = ledger_entries(at)[-1]
    assert entry.mechanism == "DP-OWL rule + private evaluation (Your data)"
    assert dict(entry.parts) == {"fit": 1.0, "evaluation": 1.0} and entry.epsilon == 1.0
    assert "This dataset has spent ε = 1 in total" in headline(at)
    assert ev.rule_sentence()[:60] in words([*at.success, *at.info, *at.error])
    # the first answer leads the evaluation: which arm is better on average
    shown = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "First, the arms on average." in shown and ev.first_answer()[:40] in shown
    assert [m.label for m in at.metric][2:] == [
        "Private rule",
        "Everyone 'drug'",
        "Everyone 'placebo'",
    ]
    labels = [b.label for b in at.get("download_button")]
    for wanted in (
        "Rule (JSON)",
        "Per-row recommendations (CSV)",
        "Report (HTML, opens offline)",
        "Python script (redoes the release: spends ε again)",
        "Download this dictionary (JSON)",
        "Download this dictionary (CSV)",
    ):
        assert wanted in labels

    # The rule file loads in dpcore and reproduces the per-row file's recommendations exactly.
    rule_text = last.files[("rule",)]
    assert json.loads(rule_text)["evaluation"]["verdict"] == ev.verdict
    rows = next(v for k, v in last.files.items() if k[0] == "rows")
    rows = pd.read_csv(io.StringIO(rows))
    table = pd.read_csv(HOSPITAL).iloc[rows["data_row"] - 1]
    scored = rows["recommendation"].notna().to_numpy()
    got = load_rule(rule_text).recommend(table[scored])
    assert got.tolist() == rows["recommendation"][scored].tolist()
    report = last.files[("report",)]
    assert "Private evaluation on held-out patients" in report and "no privacy spent" in report

    # The script, with the dictionary the page hands back, redoes the release elsewhere.
    write_script_files(tmp_path, data, last, last.settings["propensity"], base=dictionary)
    script = analyst_compute.script_for(last)  # what the page's "Python script" offers
    assert script.startswith("# RUNNING THIS SCRIPT IS A NEW PRIVATE RELEASE")
    again = run_script(tmp_path, script)
    assert again.covariates == tuple(rel.names) and len(again.coef) == len(rel.coef)
    assert again.settings["epsilon"] == rel.epsilon and again.settings["gamma"] == rel.gamma
    assert again.settings["W"] == rel.W and again.settings["n"] == rel.n
    assert again.settings["evaluation"]["epsilon_eval"] == ev.epsilon
    # ... and records itself under the page's dataset, adding to the page's total
    entries = ledger_entries(at)
    assert len(entries) == 2 and dict(entries[1].parts) == {"fit": 1.0, "evaluation": 1.0}


def test_without_the_evaluation_the_release_is_one_sequential_spend(page):
    at = page
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    at.toggle(key="evaluate").set_value(False).run()
    at = release(at)
    last = at.session_state[RELEASE]
    assert last.evaluation is None and last.release.n == 1000
    entry = ledger_entries(at)[-1]
    assert entry.mechanism == "DP-OWL rule (Your data)" and entry.parts == ()
    assert "evaluation" not in json.loads(last.files[("rule",)])


def test_the_real_trial_demo_releases_with_its_protocol_bounds(page):
    at = page
    at.radio(key="file").set_value("actg175_trial").run()
    at.button(key="fill_dictionary").click().run()
    assert not at.exception and "1054 patients read" in words(at.info)
    at = release(at, evaluate=True)
    last = at.session_state[RELEASE]
    assert last.release.n == round(0.8 * 1054) and last.release.outcome_bounds == (0.0, 1500.0)
    assert np.isfinite(last.evaluation.values["rule"].value)


def test_a_malformed_dictionary_gets_a_message_and_the_page_carries_on(page):
    at = page
    at.radio(key="file").set_value("upload").run()
    at.file_uploader(key="upload").set_value(
        ("t.csv", HOSPITAL.read_bytes() + b"\n", "text/csv")
    ).run()
    at.file_uploader(key="dictionary_upload").set_value(
        ("d.csv", b"column,role,type,lower,upper\nage,covariate,numeric,90,18\n", "text/csv")
    ).run()
    assert not at.exception
    choose_roles(at)  # the dictionary names no outcome: the analyst chooses it
    assert "lower < upper" in words(at.warning) and "swap them" in words(at.warning)
    # ... and marked in the table itself, on the row it concerns, beside what the row lacks
    table = at.dataframe[-1].value.set_index("column")["problem"]
    assert "the dictionary's bounds was left out" in table["age"] and "swap them" in table["age"]
    assert "enter public bounds" in table["age"] and "dictionary" not in table["biomarker"]


def treated_radio(at):
    return next(r for r in at.radio if r.label.startswith("Treated arm"))


def test_the_actg175_demo_starts_from_its_dictionarys_treated_arm(page):
    at = page
    at.radio(key="file").set_value("actg175_trial").run()
    assert not at.exception
    radio = treated_radio(at)
    assert radio.value == "zidovudine+didanosine"
    assert [o.replace("\\", "") for o in radio.options] == ["zidovudine+didanosine", "zidovudine"]


def test_the_treated_arm_and_levels_come_from_an_uploaded_dictionary(page):
    """Labels that sort against the treated arm (drug < placebo), a 2:1 design, a third label
    on one row and a level holding a comma: the control shows the dictionary's arms with its
    treated one chosen, and the level stays whole."""
    rng = np.random.default_rng(3)
    rows = []
    for i in range(90):
        arm = "drug" if i % 3 else "placebo"
        if i == 5:
            arm = "unknown arm"
        rows.append(
            f"{40 + i % 30},{('A, north', 'B', 'C')[i % 3]!r},{arm},{rng.uniform(0, 20):.2f}"
        )
    data = ("age,site,arm,days\n" + "\n".join(r.replace("'", '"') for r in rows) + "\n").encode()
    dictionary = (
        b"column,role,type,lower,upper,levels,unit,treated\n"
        b"age,covariate,numeric,18,90,,years,\n"
        b'site,covariate,categorical,,,"A, north|B|C",,\n'
        b"arm,treatment,label,,,placebo|drug,,drug\n"
        b"days,outcome,numeric,0,30,,days,\n"
        b"larger_is_better,design,,,,false,,\n"
        b"randomization,design,,,,2:1,,\n"
    )
    at = upload_with_dictionary(page, data, dictionary)
    radio = treated_radio(at)
    assert list(radio.options) == ["drug", "placebo"] and radio.value == "drug"
    digest = __import__("hashlib").sha256(data).hexdigest()[:12]
    rows = at.session_state[f"meta_rows_{digest}"]
    assert rows["site"]["levels"] == "A, north | B | C"
    at = release(at)
    rel = at.session_state[RELEASE].release
    assert rel.treated == "drug" and rel.control == "placebo"
    assert "site=B" in rel.names and "site=C" in rel.names and len(rel.names) == 3


@EACH_NEIGHBOUR
def test_neighbouring_files_publish_the_same_fields_with_the_evaluation(
    open_fresh, change, tmp_path, monkeypatch
):
    """Two files that differ in one row, released with the private evaluation: every
    published field but the noisy numbers (coefficients, cells, values) is the same. Each
    file is released in its own ledger: in one ledger the second shares rows with the first
    and is rightly charged the first's release too."""

    from tests.app.your_data_files import SITE_TABLE, site_csv
    from tests.app.your_data_page import fill_table, upload

    published = []
    for k, data in enumerate((site_csv(), site_csv(change))):
        monkeypatch.setenv("DPCORE_LEDGER", str(tmp_path / f"ledger{k}.sqlite"))
        at = upload(open_fresh(PAGE), data)
        key = f"covs_{__import__('hashlib').sha256(data).hexdigest()[:12]}"
        at.multiselect(key=key).set_value(["age", "site"]).run()
        fill_table(at, data, SITE_TABLE)
        at = release(at, evaluate=True)
        last = at.session_state[RELEASE]
        rel = with_rule(last.release, intercept=0.0, coef=(0.0,) * len(last.release.coef))
        ev = last.evaluation.to_dict()
        public = {k: ev[k] for k in ("epsilon_eval", "patients", "level", "sensitivity_l1")}
        entry = ledger_entries(at)[-1]
        shown = [e for e in at.info if "held out" not in str(e.value)]
        published.append(
            (
                {k: v for k, v in rel.to_dict().items() if k != "evaluation"},  # noisy: below
                public,
                (entry.mechanism, entry.parts),
                at.subheader[-1].value,
                words(shown),
            )
        )
    assert published[0] == published[1]
    assert published[0][1]["patients"] == 12 and published[0][0]["n"] == 48


def codes_csv(change=None, n=60):
    """age, site coded 01/02/03, note (unused text), arm True/False, y; row 7 may change."""
    rng = np.random.default_rng(5)
    rows = [
        [
            str(30 + i % 50),
            f"0{1 + i % 3}",
            "ok",
            "True" if i % 2 else "False",
            f"{rng.uniform(0, 10):.3f}",
        ]
        for i in range(n)
    ]
    for j, v in (change or {}).items():
        rows[7][j] = v
    return ("age,site,note,arm,y\n" + "".join(",".join(r) + "\n" for r in rows)).encode()


@pytest.mark.parametrize(
    "change",
    [{1: "x"}, {3: ""}, {2: "caf\u00e9"}],
    ids=["site x among 01/02/03", "a True/False arm with a gap", "an accent in an unused note"],
)
def test_neighbouring_files_read_per_cell_on_the_page(open_fresh, change, tmp_path, monkeypatch):
    """Issue 30's breaks through the page: one changed cell changes nothing else published.
    Each file is released in its own ledger (in one, the neighbour shares rows with the first
    file and is rightly charged its release too)."""
    import hashlib

    from tests.app.your_data_page import fill_table, upload

    table = {
        "age": {"lower": 18.0, "upper": 90.0},
        "site": {"type": "categorical", "levels": "01, 02, 03"},
        "y": {"lower": 0.0, "upper": 10.0},
    }
    published, trials = [], []
    for k, data in enumerate((codes_csv(), codes_csv(change))):
        monkeypatch.setenv("DPCORE_LEDGER", str(tmp_path / f"ledger{k}.sqlite"))
        at = upload(open_fresh(PAGE), data)
        at.multiselect(key=f"covs_{hashlib.sha256(data).hexdigest()[:12]}").set_value(
            ["age", "site"]
        ).run()
        fill_table(at, data, table)
        at = release(at)
        assert not at.exception and not at.error, words(at.error)
        last = at.session_state[RELEASE]
        rel = with_rule(last.release, intercept=0.0, coef=(0.0,) * len(last.release.coef))
        published.append((rel.to_dict(), at.subheader[-1].value))
        trials.append(last.trial)
    assert published[0] == published[1]
    other = np.arange(60) != 7  # every other row is read exactly as before
    np.testing.assert_array_equal(trials[0].X[other], trials[1].X[other])
    np.testing.assert_array_equal(trials[0].A[other], trials[1].A[other])
    rule = published[0][0]
    assert rule["n"] == 60 and rule["one_hot"] == ["site=02", "site=03"]
    assert rule["rule"].startswith("treat with 'True'")


@pytest.mark.parametrize("row", [0, 7, 59])
def test_a_stray_quote_is_refused_on_the_page_whichever_row(open_fresh, row):
    from tests.app.your_data_page import upload

    lines = codes_csv().decode().splitlines()
    cells = lines[row + 1].split(",")
    cells[2] = '"unclosed'
    lines[row + 1] = ",".join(cells)
    at = upload(open_fresh(PAGE), ("\n".join(lines) + "\n").encode())
    assert f"line {row + 2}: a quoted field is not closed" in words(at.error)


def test_a_latin1_byte_in_an_unused_column_is_refused_on_the_page(open_fresh):
    """It used to decode the whole file as Windows-1252 and publish garbled arm labels."""
    from tests.app.your_data_page import upload

    data = codes_csv().replace(b"True", "médicament".encode()).replace(b"False", b"placebo")
    lines = data.split(b"\n")
    lines[8] = lines[8].replace(b",ok,", b",caf\xe9,")
    at = upload(open_fresh(PAGE), b"\n".join(lines))
    assert "not valid utf-8: byte 0xE9 at line 9" in words(at.error)


def test_a_propensity_column_design_s_script_runs_and_adds_to_the_page_s_total(page, tmp_path):
    """A per-row propensity column, released with the private evaluation; the page's script
    download redoes it (a subprocess) and its entry lands in the page's dataset. About 6 s
    alone (a page release, then a subprocess that imports dpcore); longer on a loaded machine."""
    from tests.app.your_data_page import fill_bounds, upload

    rng = np.random.default_rng(5)
    lines = ["age,arm,y,p"]
    for i in range(200):
        p = 0.7 if i % 2 else 0.4
        arm = "1" if rng.uniform() < p else "0"
        lines.append(f"{40 + i % 30},{arm},{rng.normal():.4f},{p}")
    data = ("\n".join(lines) + "\n").encode()
    at = upload(page, data)
    digest = __import__("hashlib").sha256(data).hexdigest()[:12]
    at.multiselect(key=f"covs_{digest}").set_value(["age"]).run()
    at.selectbox(key="design").set_value("column").run()
    at.selectbox(key=f"prop_{digest}").set_value("p").run()
    at = release(fill_bounds(at, [(0, 100), (-5, 5)], data), evaluate=True)
    last = at.session_state[RELEASE]
    assert last.settings["propensity"] == "column" and last.trial.propensity_column == "p"
    write_script_files(tmp_path, data, last, "column", min_propensity=last.mapping["p_min"])
    again = run_script(tmp_path, analyst_compute.script_for(last))
    assert again.settings["n"] == last.release.n == 160
    entries = ledger_entries(at)
    assert len(entries) == 2 and entries[1].mechanism == "DP-OWL rule + private evaluation"


def test_the_promise_of_an_evaluated_release_is_its_larger_epsilon(page):
    """The rule at ε = 0.5 and its evaluation at ε_eval = 2: every sentence about what one
    patient is promised uses 2 (each patient is in one part, and the larger part's ε holds),
    never the fit's 0.5 alone."""
    at = page
    at.query_params["eps"] = "0.5"
    at.run()
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    at.select_slider(key="eps_eval").set_value(2.0).run()
    release(at, evaluate=True)
    last = at.session_state[RELEASE]
    assert last.release.made.plan.cost == 2.0
    said = words(at.info) + words(at.warning) + words(at.success)
    assert "At ε = 2 an attacker" in said and "after seeing the rule and its evaluation" in said
    assert "At ε = 0.5 an attacker" not in said
    statement = explain_upload.release_statement(last.release)
    assert "at ε = 2 (δ = 0)" in statement and "e^2 = 7.39" in statement
    assert "ε_eval = 2" in statement and "Only the rule's" not in statement


def test_a_large_epsilon_is_warned_before_the_release_and_never_green_after(page):
    at = page
    at.query_params["eps"] = "100"
    at.run()
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    assert "Above ε = 5 the promise to one patient is weak" in words(at.warning)
    release(at, evaluate=True)
    # whatever the evaluation says, the headline that names the promise is not green
    assert "attacker" not in words(at.success)
    assert "can be almost certain" in words(at.warning)


def test_the_plug_in_rule_is_released_with_its_files_and_the_analysts_comparison(page):
    at = page
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    at.radio(key="learner").set_value("plug-in").run()
    at.toggle(key="preview_on").set_value(True).run()  # the preview works for either learner
    assert not at.exception, [e.value for e in at.exception]
    said = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "Which learner?" in said and "the private plug-in rule gives the better arm" in said
    assert "not on your trial" in said
    assert "preview simulates DP-OWL" not in words(at.caption)
    release(at, evaluate=True)
    last = at.session_state[RELEASE]
    assert last.release.made.plan.learner == "plug-in"
    assert {b.key for b in at.get("download_button")} >= {"dl_rule", "dl_rows", "dl_report"}
    report = last.files[("report",)]
    assert "Ridge (public)" in report and "γ (regularization)" not in report
    assert "the ridge are public settings" in explain_upload.release_statement(last.release)
    at.button(key="compare").click().run()
    assert not at.exception and "non-private rule" in " ".join(m.value for m in at.markdown)
    assert ledger_entries(at)[-1].mechanism.startswith("Private plug-in rule")


def test_the_preview_states_effect_sizes_in_the_outcomes_units_and_takes_the_analysts_own(page):
    """The presets say their SD in the outcome's units (a share of the bounds' range can
    exceed any real effect), the default is the smallest, and the analyst's own SD is
    previewed as stated."""
    at = page
    at.radio(key="file").set_value("hospital_trial").run()
    at.button(key="fill_dictionary").click().run()
    at.toggle(key="preview_on").set_value(True).run()
    control = at.get("segmented_control")
    strength = next(c for c in control if c.key == "preview_strength")
    assert strength.value == "weak"
    assert "weak: 1 days" in strength.options and "moderate: 3 days" in strength.options
    strength.set_value("yours").run()
    at.number_input(key="preview_yours").set_value(0.5).run()
    said = " ".join(m.value for m in at.markdown).replace("\\", "")  # markdown escapes
    assert "With your stated effects" in said and "standard deviation of 0.5 days" in said
    # and how much the effect must vary for a private rule to beat giving everyone one arm
    assert "beats giving everyone one arm beyond Monte-Carlo doubt" in said or (
        "is not enough for a DP-OWL release" in said
    )


def test_the_preview_recommends_a_learner_and_its_button_sets_the_learner(page):
    """Strong linear effects on the paper's trial at ε = 1: the twin gives the plug-in rule
    clearly more patients with the better arm; its button sets the Learner control (a public
    choice), after which the comparison names it as the analyst's own and offers no button."""
    at = page
    at.radio(key="file").set_value("paper_trial").run()
    at.button(key="fill_dictionary").click().run()
    at.toggle(key="preview_on").set_value(True).run()
    next(c for c in at.get("segmented_control") if c.key == "preview_strength").set_value(
        "strong"
    ).run()
    said = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "more patients in 100 get the better arm with the private plug-in rule" in said
    button = next(b for b in at.button if b.key == "use_learner")
    assert button.label == "Use the private plug-in rule"
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.radio(key="learner").value == "plug-in"
    said = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "(your choice)" in said
    assert not any(b.key == "use_learner" for b in at.button)
