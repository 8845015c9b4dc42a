"""One release everywhere: the page, ``dpcore fit``, the library and the rerun script make the same
release from the same trial, dictionary, ε and noise, down to the byte of the rule file.

Three trials with dictionaries written the way outside analysts write them (from
docs/dictionary.md only): a wide file whose post-randomization columns are marked ``ignore``; a
labelled yes/no outcome where "yes" (the event) is bad; a 2:1 design whose treated arm sorts
second. Every surface runs in this process under one seeded noise source
(:func:`tests.releases.seeded_noise`), each with a fresh ledger, so the ledger's record in the
files is the same too (release no. 1, the plan's cost).
"""

import json
import os

import numpy as np
import pytest

from dpcore import PrivacyLedger, read_dictionary
from dpcore.cli import main as dpcore_main
from dpcore.owl.rule_file import write_rule
from dpcore.release import release
from dpcore_app.ui.upload import analyst_compute, files
from tests.app.your_data_page import PAGE, RELEASE, words
from tests.releases import seeded_noise

SEED = 11


def wide():
    """1:1, a categorical site, 24 post-randomization columns marked ignore, an identifier;
    one patient in eight has no age, which the dictionary fills in (with its indicator)."""
    rng = np.random.default_rng(1)
    n, post = 120, [f"postop_{k}" for k in range(24)]
    head = ["record", "age", "site", "arm", "pain_score", *post]
    rows = [
        [
            f"R{i:04d}",
            "" if i % 8 == 3 else str(30 + i % 45),
            "ABC"[i % 3],
            "surgery" if i % 2 else "physio",
            f"{rng.uniform(0, 10):.1f}",
            *(f"{rng.normal():.2f}" for _ in post),
        ]
        for i in range(n)
    ]
    columns = [
        {"name": "record", "role": "identifier"},
        {
            "name": "age",
            "role": "covariate",
            "type": "numeric",
            "bounds": [18, 90],
            "missing": {"fill": 50},
        },
        {"name": "site", "role": "covariate", "type": "categorical", "levels": ["A", "B", "C"]},
        {"name": "arm", "role": "treatment", "levels": ["surgery", "physio"]},
        {"name": "pain_score", "role": "outcome", "bounds": [0, 10], "unit": "points"},
        *({"name": c, "role": "ignore"} for c in post),
    ]
    d = {
        "treatment": "arm",
        "treated": "surgery",
        "randomization": "1:1",
        "outcome": "pain_score",
        "larger_is_better": False,
        "columns": columns,
    }
    return head, rows, d


def pancreatitis():
    """A yes/no outcome given as labels, the event bad; a binary covariate in words."""
    rng = np.random.default_rng(2)
    head = ["id", "age", "sex", "group", "pep"]
    rows = [
        [
            str(i),
            str(25 + i % 50),
            "female" if i % 3 else "male",
            "indomethacin" if i % 2 else "placebo",
            "1_yes" if rng.uniform() < 0.15 else "0_no",
        ]
        for i in range(150)
    ]
    columns = [
        {"name": "id", "role": "identifier"},
        {"name": "age", "role": "covariate", "type": "numeric", "bounds": [18, 90]},
        {"name": "sex", "role": "covariate", "type": "binary", "levels": ["male", "female"]},
        {"name": "group", "role": "treatment", "levels": ["placebo", "indomethacin"]},
        {"name": "pep", "role": "outcome", "type": "binary", "levels": ["0_no", "1_yes"]},
    ]
    d = {
        "treatment": "group",
        "treated": "indomethacin",
        "randomization": "1:1",
        "outcome": "pep",
        "larger_is_better": False,
        "columns": columns,
    }
    return head, rows, d


def two_to_one():
    """2:1 on the treated arm, whose label sorts second."""
    from tests.app.wide_trial import DICTIONARY, wide_trial

    text = wide_trial(90).decode().splitlines()
    return text[0].split(","), [r.split(",") for r in text[1:]], DICTIONARY


CASES = {"wide with ignored columns": wide, "labelled yes/no outcome": pancreatitis}
CASES["2:1, treated arm second"] = two_to_one


def write_files(case, tmp_path):
    head, rows, d = CASES[case]()
    data = ("\n".join(",".join(r) for r in [head, *rows]) + "\n").encode()
    (tmp_path / "trial.csv").write_bytes(data)
    (tmp_path / "trial_dictionary.json").write_text(json.dumps(d), encoding="utf-8")
    return data, d


def page_release(open_page, data, d, learner="dp-owl"):
    at = open_page(PAGE)
    at.radio(key="file").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("trial.csv", data, "text/csv")).run()
    text = json.dumps(d).encode()
    at.file_uploader(key="dictionary_upload").set_value(("d.json", text, "application/json"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "A rule can be released" in words(at.info), words(at.error) + words(at.warning)
    at.radio(key="learner").set_value(learner).run()
    at.select_slider(key="eps_eval").set_value(1.0).run()
    with seeded_noise(SEED):
        at.button(key="release").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at.session_state[RELEASE]


@pytest.mark.parametrize(
    "case,learner",
    [(case, "dp-owl") for case in CASES] + [("2:1, treated arm second", "plug-in")],
)
def test_the_page_the_cli_the_library_and_the_script_write_the_same_rule_file(
    case, learner, tmp_path, open_page, monkeypatch
):
    """Over 10 s: the page's whole path in AppTest, and three more releases of the trial."""
    data, d = write_files(case, tmp_path)
    csv, dictionary = tmp_path / "trial.csv", tmp_path / "trial_dictionary.json"
    monkeypatch.setenv("DPCORE_LEDGER", str(tmp_path / "page.sqlite"))
    last = page_release(open_page, data, d, learner)
    page = files.rule_json(last.release)
    plan = last.release.made.plan  # ε = 1, evaluated at 1 on 20%, γ from the paper's table
    assert plan.epsilon == 1.0 and plan.epsilon_eval == 1.0 and plan.gamma is None
    assert plan.learner == learner
    with seeded_noise(SEED):
        made = release(csv, read_dictionary(dictionary), plan, ledger=PrivacyLedger())
        library = write_rule(made.to_dict(), None)
        code = dpcore_main(
            [
                "fit",
                str(csv),
                "--dictionary",
                str(dictionary),
                "--epsilon",
                "1",
                "--evaluate",
                "1",
                "--learner",
                learner,
                *(["--weight-bound", repr(plan.weight_bound)] if plan.weight_bound else []),
                "--ledger",
                str(tmp_path / "cli.sqlite"),
                "--out",
                str(tmp_path / "cli.json"),
            ]
        )
        assert code == 0
        script = analyst_compute.script_for(last, "trial.csv", "trial_dictionary.json")
        monkeypatch.setenv("DPCORE_LEDGER", str(tmp_path / "script.sqlite"))
        monkeypatch.chdir(tmp_path)
        exec(compile(script, "release_again.py", "exec"), {"__name__": "__main__"})
    cli = (tmp_path / "cli.json").read_text(encoding="utf-8")
    again = (tmp_path / "rule.json").read_text(encoding="utf-8")
    rule = json.loads(page)
    # the dictionary's roles, on every surface
    covariates = [c["name"] for c in d["columns"] if c["role"] == "covariate"]
    named = {c.split("=")[0].removesuffix(" is missing") for c in rule["covariates"]}
    assert named == set(covariates)
    fills = {c["name"]: c["missing"]["fill"] for c in d["columns"] if "missing" in c}
    assert rule.get("fill", {}) == fills
    assert (rule["treatment"], rule["outcome"]) == (d["treatment"], d["outcome"])
    assert rule["treated"] == d["treated"] and rule["private"] is True
    assert "roles_differ_from_dictionary" not in rule
    assert rule["ledger"]["release_index"] == 1
    assert page == library == cli == again
    assert os.path.exists(tmp_path / "script.sqlite")
