"""AppTest: on Your data the public dictionary decides every role, whether it arrives before or
after the trial's CSV: treatment, treated arm, outcome, direction and covariates; a column it
marks ``ignore`` or ``identifier`` is never offered as a covariate; a role the analyst changes
is named on the page and in the release's files. An uploaded file is never a demo, and bounds in
other units than the data are shown before the release."""

import hashlib
import json

import pytest

from dpcore_app.ui.common import ledger, ledger_sidebar
from dpcore_app.ui.upload import files
from tests.app.wide_trial import DICTIONARY, wide_trial
from tests.app.your_data_page import PAGE, RELEASE, release, words

DATA = wide_trial()
DIGEST = hashlib.sha256(DATA).hexdigest()[:12]


def upload_csv(at):
    at.radio(key="file").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("wide_trial.csv", DATA, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]


def upload_dictionary(at):
    text = json.dumps(DICTIONARY).encode()
    at.file_uploader(key="dictionary_upload").set_value(("d.json", text, "application/json"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def widget(elements, prefix):
    return next(e for e in elements if (e.key or "").startswith(prefix + DIGEST))


def roles(at):
    return dict(
        treatment=widget(at.selectbox, "treat_").value,
        outcome=widget(at.selectbox, "outcome_").value,
        treated=widget(at.radio, "treated_").value,
        covariates=widget(at.multiselect, "covs_").value,
        offered=widget(at.multiselect, "covs_").options,
    )


EXPECTED = dict(treatment="arm", outcome="weight_g", treated="verum", covariates=["age", "parity"])


@pytest.mark.parametrize("order", ["dictionary first", "csv first"])
def test_the_dictionary_decides_the_roles_whichever_comes_first(open_page, order):
    at = open_page(PAGE)
    at.radio(key="file").set_value("upload").run()
    steps = (
        [upload_dictionary, upload_csv]
        if order == "dictionary first"
        else [
            upload_csv,
            upload_dictionary,
        ]
    )
    for step in steps:
        step(at)
    got = roles(at)
    assert {k: got[k] for k in EXPECTED} == EXPECTED
    # never offered: what the dictionary marks ignore or identifier
    assert set(got["offered"]) == {"age", "parity"}
    assert "not offered as covariates" in words(at.caption)
    assert "differ from the data dictionary" not in words(at.warning)


def test_without_a_dictionary_the_outcome_and_covariates_are_the_analysts(open_page):
    at = open_page(PAGE)
    upload_csv(at)
    assert widget(at.selectbox, "treat_").value == "arm"  # the name says so
    assert widget(at.selectbox, "outcome_").value is None
    assert "Choose the treatment and the outcome column" in words(at.info)
    widget(at.selectbox, "outcome_").set_value("weight_g").run()
    covs = widget(at.multiselect, "covs_")
    assert covs.value == [] and "postop_pain" in covs.options
    assert "none is pre-selected" in words(at.caption)


def test_an_overridden_role_is_named_on_the_page_and_in_the_rule_file(open_page):
    at = open_page(PAGE)
    upload_csv(at)
    upload_dictionary(at)
    at.button(key="fill_dictionary").click().run()
    widget(at.multiselect, "covs_").set_value(["age"]).run()
    assert "dictionary covariates left out: 'parity'" in words(at.warning)
    release(at)
    rule = json.loads(files.rule_json(at.session_state[RELEASE].release))
    assert rule["roles_differ_from_dictionary"] == ["dictionary covariates left out: 'parity'"]
    assert rule["treated"] == "verum" and rule["covariates"] == ["age"]


def test_a_release_with_the_dictionarys_roles_names_no_override(open_page):
    at = open_page(PAGE)
    upload_csv(at)
    upload_dictionary(at)
    at.button(key="fill_dictionary").click().run()
    release(at)
    released = at.session_state[RELEASE].release
    assert released.overrides == () and released.treated == "verum"
    assert released.names == ("age", "parity") and released.outcome == "weight_g"


def test_an_uploaded_file_with_a_dictionary_is_not_a_demo_and_can_be_capped(open_page):
    at = open_page(PAGE)
    upload_csv(at)
    upload_dictionary(at)
    assert any(n.key == ledger_sidebar.CAP for n in at.sidebar.number_input)
    assert "Practice data shipped with the app" not in words(at.sidebar.caption)


def test_an_outcome_in_other_units_than_its_bounds_is_shown_and_confirmed_before_release(
    open_page,
):
    """Bounds [0, 6] (kilograms) on birthweights in grams: every outcome would be clipped. The
    page says so before the release button, which stays off until the analyst confirms; the
    ledger's record says the bounds were confirmed, the rule file does not."""
    kilograms = json.loads(json.dumps(DICTIONARY))
    next(c for c in kilograms["columns"] if c["name"] == "weight_g")["bounds"] = [0, 6]
    at = open_page(PAGE)
    upload_csv(at)
    text = json.dumps(kilograms).encode()
    at.file_uploader(key="dictionary_upload").set_value(("d.json", text, "application/json"))
    at.run()
    at.button(key="fill_dictionary").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "weight_g (100%)" in words(at.warning) and "units" in words(at.warning)
    assert at.button(key="release").disabled
    box = next(c for c in at.checkbox if (c.key or "").startswith("units_confirmed_"))
    box.check().run()
    assert not at.button(key="release").disabled
    release(at)
    entry = ledger.dataset_ledger(at.session_state[ledger.IN_USE]).entries[-1]
    assert "bounds confirmed by the analyst" in entry.mechanism
    published = files.rule_json(at.session_state[RELEASE].release)
    assert "confirmed" not in published and "100%" not in published


def test_bounds_that_hold_the_data_ask_for_no_confirmation(open_page):
    at = open_page(PAGE)
    upload_csv(at)
    upload_dictionary(at)
    at.button(key="fill_dictionary").click().run()
    assert not any((c.key or "").startswith("units_confirmed_") for c in at.checkbox)
    assert not at.button(key="release").disabled


def test_the_dictionarys_direction_randomization_and_bounds_arrive_with_it(open_page):
    """No click needed: a 2:1 design whose treated arm sorts second is 2:1 on the treated arm
    as soon as the dictionary is there (a release cannot use a 1:1 it contradicts)."""
    at = open_page(PAGE)
    upload_csv(at)
    widget(at.selectbox, "outcome_").set_value("weight_g").run()  # the analyst's choice
    assert at.selectbox(key="design").value == "1:1"  # the page's default
    upload_dictionary(at)
    assert at.selectbox(key="design").value == "2:1"
    assert at.button_group(key="better").value == "larger"
    assert widget(at.radio, "treated_").value == "verum"
    assert "A rule can be released" in words(at.info)


def test_returning_by_the_sidebar_keeps_the_file_its_dictionary_and_the_settings(open_page):
    """Another page, then back through the sidebar (an address with no settings): the
    upload, its dictionary (said as kept) and ε are this session's, not the defaults."""
    at = open_page(PAGE)
    upload_csv(at)
    upload_dictionary(at)
    at.select_slider(key="eps").set_value(10.0).run()
    at.switch_page("dpcore_app/app_pages/dp_owl.py").run()
    for name in list(at.query_params):  # the sidebar's link carries no settings
        del at.query_params[name]
    at.switch_page("dpcore_app/app_pages/your_data.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.select_slider(key="eps").value == 10.0 and at.query_params["eps"] == "10"
    assert "uploaded earlier in this session" in words(at.caption)
    assert "Using the dictionary d.json" in words(at.caption).replace("\\", "")
    assert roles(at)["treated"] == "verum"
    assert "A rule can be released at ε = 10" in words(at.info)
