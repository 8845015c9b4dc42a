"""The "Python script" download: it runs on a demo file and redoes the release's settings."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from dpcore import PrivacyLedger, load_rule, read_dictionary, read_trial
from dpcore.release import ReleasePlan
from dpcore.release.script import release_script
from tests.releases import run_here

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "dpcore_app" / "demo_data"


def run(script, tmp_path):
    shutil.copy(DEMO / "hospital_trial.csv", tmp_path / "trial.csv")
    shutil.copy(DEMO / "hospital_trial.json", tmp_path / "trial_dictionary.json")
    out = run_here(script, tmp_path, timeout=120)
    return out, load_rule(tmp_path / "rule.json")


@pytest.mark.slow
@pytest.mark.parametrize("epsilon_eval", [None, 0.5])
def test_the_script_reproduces_the_release_settings_on_a_demo_file(tmp_path, epsilon_eval):
    pytest.importorskip("opendp")
    plan = ReleasePlan(epsilon=1.0, gamma=60.0, weight_bound=60.0, epsilon_eval=epsilon_eval)
    script = release_script(plan, csv_name="trial.csv", dictionary_name="trial_dictionary.json")
    first = script.splitlines()[:3]
    assert "NEW PRIVATE RELEASE" in first[0] and "spends" in first[0]
    assert f"ε = {1.0 if epsilon_eval is None else max(1.0, epsilon_eval):g} again" in first[1]
    assert "seed" not in script.split("plan = ReleasePlan(")[1].replace("split_seed", "")
    out, rule = run(script, tmp_path)
    d = read_dictionary(DEMO / "hospital_trial.json")
    trial = read_trial(DEMO / "hospital_trial.csv", **d.read_trial_kwargs(), incomplete="keep")
    assert trial.n == 1200  # public n: the rows with a missing value are kept at weight 0
    assert rule.covariates == trial.covariates and len(rule.coef) == len(trial.covariates)
    assert (rule.treated, rule.control) == ("drug", "placebo")
    assert rule.settings["epsilon"] == 1.0 and rule.settings["gamma"] == 60.0
    assert rule.settings["W"] == 60.0 and rule.settings["larger_is_better"] is False
    assert rule.lower == tuple(trial.feature_bounds(d.bounds)[0])
    if epsilon_eval is None:
        assert rule.settings["n"] == trial.n and "evaluation" not in rule.settings
    else:
        assert rule.settings["n"] == round(0.8 * trial.n)
        assert rule.settings["evaluation"]["epsilon_eval"] == 0.5
        assert "ε_eval = 0.5" in out


def test_bad_settings():
    with pytest.raises(ValueError, match="inf"):
        release_script(
            ReleasePlan(epsilon=float("inf"), gamma=1.0, weight_bound=1.0),
            csv_name="a.csv",
            dictionary_name="a.json",
        )


# --------------------------------------------------------------------------------------------
# Every design the page allows, and the release recorded in the durable ledger when run


def design_files(tmp_path, design, n=240):
    """A small synthetic trial with a per-row propensity column ``p``, and a dictionary for
    ``design`` ("ratio", "column" or "logistic"); returns the used columns, page order."""
    rng = np.random.default_rng(7)
    x = rng.uniform(0, 10, n)
    p = np.where(x > 5, 0.7, 0.4)
    arm = rng.uniform(size=n) < p
    y = rng.normal(size=n) + arm * (x - 5) * 0.3
    lines = ["note,x,arm,y,p"] + [
        f"n{i},{x[i]:.3f},{'drug' if arm[i] else 'placebo'},{y[i]:.3f},{p[i]:g}" for i in range(n)
    ]
    (tmp_path / "trial.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    columns = [
        {"name": "x", "role": "covariate", "type": "numeric", "bounds": [0.0, 10.0]},
        {"name": "arm", "role": "treatment", "type": "label", "levels": ["drug", "placebo"]},
        {"name": "y", "role": "outcome", "type": "numeric", "bounds": [-5.0, 5.0]},
    ]
    d = {
        "treated": "drug",
        "larger_is_better": True,
        "outcome_bounds": [-5.0, 5.0],
        "columns": columns,
    }
    if design == "ratio":
        d["propensity"] = 0.5
    elif design == "column":
        columns.append({"name": "p", "role": "propensity", "type": "numeric"})
        d["min_propensity"] = 0.05
    (tmp_path / "trial_dictionary.json").write_text(json.dumps(d), encoding="utf-8")
    return ["arm", "y", *(["p"] if design == "column" else []), "x"]


DESIGNS = [("ratio", None), ("ratio", 0.5), ("column", None), ("column", 0.5), ("logistic", None)]


@pytest.mark.parametrize("design,epsilon_eval", DESIGNS)
def test_the_script_runs_for_every_design_and_records_its_release(tmp_path, design, epsilon_eval):
    """A subprocess (about 3 s alone, importing dpcore; longer on a loaded machine): the script's release lands in the ledger the page keys the
    same way (the file's rows, whatever columns it uses), adding to the earlier total."""
    if epsilon_eval is not None:
        pytest.importorskip("opendp")
    design_files(tmp_path, design)
    ledger_file = tmp_path / "ledger.sqlite"
    # the page's own release on this dataset, keyed as the page keys it
    page = PrivacyLedger.for_file(tmp_path / "trial.csv", path=ledger_file)
    page.record("DP-OWL rule", 0.25)
    propensity = {"ratio": 0.5, "column": "column", "logistic": "logistic"}[design]
    plan = ReleasePlan(
        epsilon=1.0,
        gamma=50.0,
        weight_bound=200.0,
        C="worst-case" if design == "logistic" else 0.0,
        epsilon_eval=epsilon_eval,
        propensity=propensity,
        min_propensity=0.05 if design == "column" else None,
    )
    script = release_script(plan, csv_name="trial.csv", dictionary_name="trial_dictionary.json")
    out = run_here(script, tmp_path, ledger_file)
    rule = load_rule(tmp_path / "rule.json")
    assert rule.settings["private"] and (rule.treated, rule.control) == ("drug", "placebo")
    assert rule.settings["n"] == (240 if epsilon_eval is None else 192)
    again = PrivacyLedger.for_file(tmp_path / "trial.csv", path=ledger_file)
    assert again.dataset == page.dataset
    entries = again.entries
    assert len(entries) == 2 and entries[0].mechanism == "DP-OWL rule"
    assert entries[1].epsilon == 1.0
    assert dict(entries[1].parts) == (
        {} if epsilon_eval is None else {"fit": 1.0, "evaluation": 0.5}
    )
    assert again.total()[0] == pytest.approx(1.25)
    assert "1.25 spent on this dataset in total" in out


def test_a_not_private_release_s_script_leaves_the_dataset_no_guarantee(tmp_path):
    design_files(tmp_path, "ratio")
    ledger_file = tmp_path / "ledger.sqlite"
    plan = ReleasePlan(
        epsilon=1.0,
        gamma=50.0,
        weight_bound=20.0,
        propensity=0.5,
        not_private=("bounds or levels read from the data",),
    )
    script = release_script(plan, csv_name="trial.csv", dictionary_name="trial_dictionary.json")
    assert "WITHOUT A GUARANTEE" in script.splitlines()[1]
    run_here(script, tmp_path, ledger_file)
    assert not load_rule(tmp_path / "rule.json").settings["private"]
    ledger = PrivacyLedger.for_file(tmp_path / "trial.csv", path=ledger_file)
    assert len(ledger.entries) == 1 and ledger.total()[0] == float("inf")


def test_bad_designs_are_refused_by_the_plan_the_script_writes():
    kw = dict(epsilon=1.0, gamma=1.0, weight_bound=1.0)
    with pytest.raises(ValueError, match="worst-case"):
        ReleasePlan(**kw, propensity="logistic")
    with pytest.raises(ValueError, match="evaluation"):
        ReleasePlan(**kw, propensity="logistic", C="worst-case", epsilon_eval=1.0)
    with pytest.raises(ValueError, match="propensity"):
        ReleasePlan(**kw, propensity="1.5")
