"""The "Python script" download: it runs on a demo file and redoes the release's settings."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpcore import load_rule, read_dictionary, read_trial
from dpcore.owl.script import release_script

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo_data"


def run(script, tmp_path):
    shutil.copy(DEMO / "hospital_trial.csv", tmp_path / "trial.csv")
    shutil.copy(DEMO / "hospital_trial.json", tmp_path / "trial_dictionary.json")
    (tmp_path / "release.py").write_text(script, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "release.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout, load_rule(tmp_path / "rule.json")


@pytest.mark.slow
@pytest.mark.parametrize("epsilon_eval", [None, 0.5])
def test_the_script_reproduces_the_release_settings_on_a_demo_file(tmp_path, epsilon_eval):
    pytest.importorskip("opendp")
    script = release_script(csv_name="trial.csv", dictionary_name="trial_dictionary.json",
                            epsilon=1.0, gamma=60.0, weight_bound=60.0, epsilon_eval=epsilon_eval)
    first = script.splitlines()[:3]
    assert "NEW PRIVATE RELEASE" in first[0] and "spends" in first[0]
    assert f"ε = {1.0 if epsilon_eval is None else max(1.0, epsilon_eval):g} again" in first[1]
    assert "seed" not in script.split("settings = dict(")[1].replace("split_seed", "")
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
        release_script(csv_name="a.csv", dictionary_name="a.json", epsilon=float("inf"),
                       gamma=1.0, weight_bound=1.0)
