"""AppTest: the "Your data" page on the four-arm ACTG 175 demo: two arms compared, or a rule
over all four. (A K-arm or one-arm file without a dictionary ends in a clear message:
tests/app/test_your_data.py's cases "three arms" and "one arm".)"""

from tests.app.your_data_page import PAGE, ledger_entries, words

DIGEST_KEY = "arms_mode_"


def four_arms(open_page):
    at = open_page(PAGE)
    at.radio(key="file").set_value("actg175_four_arms").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def mode_radio(at):
    return next(r for r in at.radio if r.key and r.key.startswith(DIGEST_KEY))


def test_a_rule_over_all_four_arms_is_released_and_recorded(open_page):
    """Over 10 s: a session from app.py, the page's runs on the 2,139-patient demo and one
    K-arm fit; the smallest path that releases a rule over four arms."""
    at = four_arms(open_page)
    mode_radio(at).set_value("all").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "can be released" in words(at.info)
    at.button(key="release").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Private treatment rule over 4 arms (ε = 1)" in words(at.subheader)
    # the verdict is the K-arm release's, not the two-arm deployment sentence
    assert "Private treatment rule over 4 arms (ε = 1). Release no. 1" in words(at.info)
    assert [e.epsilon for e in ledger_entries(at)] == [1.0]
    assert any(b.key == "dl_rule" for b in at.get("download_button"))
    assert "done" in " ".join(m.value for m in at.markdown if "5 · Files" in m.value)


def test_two_of_four_arms_run_the_two_arm_steps(open_page):
    """Over 10 s: a session from app.py and the page's runs through the dictionary's table."""
    at = four_arms(open_page)
    radio = mode_radio(at)
    assert radio.value == "two"
    treated = next(s for s in at.selectbox if s.key and s.key.startswith("arms_treated_"))
    treated.set_value("didanosine").run()
    assert not at.exception, [e.value for e in at.exception]
    arm = next(r for r in at.radio if r.label.startswith("Treated arm"))
    assert set(arm.options) == {"didanosine", "zidovudine"}
    at.button(key="fill_dictionary").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "A rule can be released" in words(at.info)
    assert "2139" in words(at.info) or "2,139" in words(at.info)


def test_a_rule_over_all_arms_of_an_uploaded_three_arm_trial(open_page):
    """An upload (not a demo) with its dictionary, the dictionary after the CSV: the rule over
    all three arms is released and recorded, with the dictionary's labels."""
    import json

    import numpy as np

    rng = np.random.default_rng(7)
    arms = ("placebo", "low dose", "high dose")
    rows = "".join(
        f"{40 + i % 30},{arms[i % 3]},{50 + rng.normal(0, 10):.1f}\n" for i in range(300)
    )
    data = ("age,group,score\n" + rows).encode()
    dictionary = {
        "treatment": "group",
        "outcome": "score",
        "larger_is_better": True,
        "arm_probabilities": [1 / 3, 1 / 3, 1 / 3],
        "columns": [
            {"name": "age", "role": "covariate", "type": "numeric", "bounds": [18, 90]},
            {"name": "group", "role": "treatment", "levels": list(arms)},
            {"name": "score", "role": "outcome", "bounds": [0, 100]},
        ],
    }
    at = open_page(PAGE)
    at.radio(key="file").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("three.csv", data, "text/csv")).run()
    at.file_uploader(key="dictionary_upload").set_value(
        ("three.json", json.dumps(dictionary).encode(), "application/json")
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    mode_radio(at).set_value("all").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "can be released" in words(at.info), words(at.info)
    at.button(key="release").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Private treatment rule over 3 arms (ε = 1)" in words(at.subheader)
    assert [e.epsilon for e in ledger_entries(at)] == [1.0]


def test_the_plug_in_rule_over_all_four_arms_is_one_release_at_the_full_epsilon(open_page):
    at = four_arms(open_page)
    mode_radio(at).set_value("all").run()
    at.radio(key="learner").set_value("plug-in").run()
    assert "all 4 released together at ε = 1" in words(at.caption)
    at.button(key="release").click().run()
    assert not at.exception, [e.value for e in at.exception]
    rule = at.session_state["your_data_release"].release.to_dict()
    assert rule["learner"].startswith("private plug-in rule over every arm")
    assert "epsilon_per_rule" not in rule and len(rule["scores"]) == 3
    assert [e.epsilon for e in ledger_entries(at)] == [1.0]
