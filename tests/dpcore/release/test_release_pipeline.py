"""The release pipeline (dpcore.release): the library and `dpcore fit` make the same release,
neighbouring files publish the same fields, and the ledger records the plan's parts."""

import json
from pathlib import Path

import pytest

from dpcore import PrivacyLedger, read_dictionary
from dpcore.privacy.accounting import BudgetExceededError
from dpcore.release import ReleaseError, ReleasePlan, release
from tests.dpcore.cli.commands import run

DEMO = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"
VOLATILE = {"released_at", "ledger"}  # the time, and the ledger's record (per ledger file)
#: The evaluation's released numbers and what follows from them.
NOISY_EVALUATION = {"cells", "second_moments", "complete_rows_noisy", "values", "gains"}
NOISY_EVALUATION |= {"verdict", "summary", "complete_share_noisy"}
NOISY_EVALUATION |= {"cells_by_arm", "second_moments_by_arm", "cell_second_moments"}  # AIPW, K
NOISY_EVALUATION |= {"average_effect"}  # the same cells, post-processed


def test_the_library_and_dpcore_fit_write_the_same_rule_file(tmp_path):
    """One seed (titled NOT PRIVATE, as any seeded release is): the two rule files agree in
    every field but the time and the ledger's record, and the evaluation in every public one
    (its noise comes from OpenDP's sampler, which no seed reproduces)."""
    fit = run(
        "fit",
        DEMO / "hospital_trial.csv",
        "--dictionary",
        DEMO / "hospital_trial.json",
        "--epsilon",
        "1",
        "--evaluate",
        "1",
        "--seed",
        "7",
        "--not-private",
        "--ledger",
        tmp_path / "cli.sqlite",
        "--out",
        tmp_path / "cli.json",
    )
    assert fit.returncode == 0, fit.stderr
    from_cli = json.loads((tmp_path / "cli.json").read_text())
    plan = ReleasePlan(epsilon=1.0, epsilon_eval=1.0, seed=7, not_private=("a seed",))
    made = release(DEMO / "hospital_trial.csv", read_dictionary(DEMO / "hospital_trial.json"), plan)
    from_library = json.loads(json.dumps(made.to_dict()))
    same = VOLATILE | {"evaluation"}
    assert {k: v for k, v in from_library.items() if k not in same} == {
        k: v for k, v in from_cli.items() if k not in same
    }
    public = set(from_cli["evaluation"]) - NOISY_EVALUATION
    assert {k: from_library["evaluation"][k] for k in public} == {
        k: from_cli["evaluation"][k] for k in public
    }


@pytest.mark.parametrize("evaluate", [None, 1.0])
def test_neighbouring_files_publish_the_same_fields_through_the_pipeline(tmp_path, evaluate):
    """Privacy rule 10 for the library's release: one patient replaced (outcome and a
    covariate) changes nothing published but the noisy numbers and the time."""
    lines = (DEMO / "hospital_trial.csv").read_text().splitlines()
    fields = lines[9].split(",")
    fields[2], fields[-1] = "79", "19"
    (tmp_path / "n.csv").write_text("\n".join([*lines[:9], ",".join(fields), *lines[10:]]) + "\n")
    d = read_dictionary(DEMO / "hospital_trial.json")
    plan = ReleasePlan(epsilon=1.0, epsilon_eval=evaluate)
    a = release(DEMO / "hospital_trial.csv", d, plan).to_dict()
    b = release(tmp_path / "n.csv", d, plan).to_dict()
    noisy = {"coef", "intercept", "released_at", "evaluation"}
    assert a.keys() == b.keys()
    assert {k for k in a if a[k] != b[k]} <= noisy
    if evaluate:
        ev_a, ev_b = a["evaluation"], b["evaluation"]
        assert ev_a.keys() == ev_b.keys()
        assert {k for k in ev_a if ev_a[k] != ev_b[k]} <= NOISY_EVALUATION


def test_the_ledger_records_the_plans_parts_and_a_cap_releases_nothing():
    d = read_dictionary(DEMO / "paper_trial.json")
    ledger = PrivacyLedger(budget=1.5)
    plan = ReleasePlan(epsilon=1.0, epsilon_eval=0.5)
    made = release(DEMO / "paper_trial.csv", d, plan, ledger=ledger)
    assert made.entry.epsilon == 1.0 == plan.cost
    assert dict(made.entry.parts) == {"fit": 1.0, "evaluation": 0.5}
    with pytest.raises(BudgetExceededError):
        release(DEMO / "paper_trial.csv", d, ReleasePlan(epsilon=1.0), ledger=ledger)
    assert ledger.total()[0] == 1.0


def test_a_plan_that_cannot_be_released_says_which_setting():
    with pytest.raises(ValueError, match="seed makes the noise reproducible"):
        ReleasePlan(epsilon=1.0, seed=3)
    for seed in (True, "3", [1, 2]):  # numpy seeds, but not a seed the file and script can write
        with pytest.raises(TypeError, match="seed must be an int"):
            ReleasePlan(epsilon=1.0, seed=seed, not_private=("a test",))
    with pytest.raises(ValueError, match="needs epsilon_eval"):
        ReleasePlan(epsilon=1.0, evaluation="aipw")
    d = read_dictionary(DEMO / "paper_trial.json")
    plan = ReleasePlan(epsilon=1.0, epsilon_eval=1.0, evaluation="aipw", model_covariates=("x9",))
    with pytest.raises(ReleaseError, match="not a covariate") as err:
        release(DEMO / "paper_trial.csv", d, plan)
    assert err.value.setting == "model_covariates"


# --------------------------------------------------------------------------------------------
# The private plug-in rule through the same pipeline


@pytest.mark.parametrize(
    "evaluate,choice",
    [
        (None, {"learner": "plug-in"}),
        (1.0, {"learner": "plug-in"}),
        (1.0, {"perturbation": "objective"}),
    ],
)
def test_each_learner_is_the_same_release_from_the_library_the_cli_and_the_script(
    tmp_path, monkeypatch, evaluate, choice
):
    """One plan, three surfaces, one seeded noise source: byte-identical rule files, for the
    plug-in rule and for DP-OWL by objective perturbation."""
    from dpcore.cli import main
    from dpcore.owl.rule_file import write_rule
    from dpcore.release.script import release_script
    from tests.releases import seeded_noise

    csv, dictionary = DEMO / "hospital_trial.csv", DEMO / "hospital_trial.json"
    plan = ReleasePlan(epsilon=5.0, epsilon_eval=evaluate, **choice)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DPCORE_LEDGER", str(tmp_path / "script.sqlite"))
    with seeded_noise(5):
        made = release(csv, read_dictionary(dictionary), plan, ledger=PrivacyLedger())
        library = write_rule(made.to_dict(), None)
        args = ["fit", str(csv), "--dictionary", str(dictionary), "--epsilon", "5"]
        args += ["--evaluate", "1"] if evaluate else []
        for k, v in choice.items():
            args += [f"--{k}", v]
        args += ["--ledger", str(tmp_path / "cli.sqlite")]
        assert main([*args, "--out", str(tmp_path / "cli.json")]) == 0
        script = release_script(plan, csv_name=str(csv), dictionary_name=str(dictionary))
        assert all(f"{k}={v!r}" in script for k, v in choice.items())
        exec(compile(script, "release_again.py", "exec"), {"__name__": "__main__"})
    assert library == (tmp_path / "cli.json").read_text() == (tmp_path / "rule.json").read_text()
    rule = json.loads(library)
    from dpcore.privacy.mechanisms import OBJECTIVE_PERTURBATION, PLUG_IN_STATISTICS

    if choice.get("learner") == "plug-in":
        assert rule["learner"].startswith("private plug-in rule") and "gamma" not in rule
        assert rule["mechanism"] == PLUG_IN_STATISTICS.sentence()
        name = "Private plug-in rule"
    else:
        assert rule["mechanism"] == OBJECTIVE_PERTURBATION.sentence()
        name = "DP-OWL rule (objective perturbation)"
    assert (made.entry.mechanism, dict(made.entry.parts)) == (
        (name + " + private evaluation", {"fit": 5.0, "evaluation": 1.0})
        if evaluate
        else (name, {})
    )


@pytest.mark.parametrize("evaluate", [None, 1.0])
def test_neighbouring_files_publish_the_same_fields_through_the_plug_in_rule(tmp_path, evaluate):
    lines = (DEMO / "hospital_trial.csv").read_text().splitlines()
    fields = lines[9].split(",")
    fields[2], fields[-1] = "79", "19"
    (tmp_path / "n.csv").write_text("\n".join([*lines[:9], ",".join(fields), *lines[10:]]) + "\n")
    d = read_dictionary(DEMO / "hospital_trial.json")
    plan = ReleasePlan(epsilon=1.0, learner="plug-in", epsilon_eval=evaluate)
    a = release(DEMO / "hospital_trial.csv", d, plan).to_dict()
    b = release(tmp_path / "n.csv", d, plan).to_dict()
    assert a.keys() == b.keys()
    assert {k for k in a if a[k] != b[k]} <= {"coef", "intercept", "evaluation"}
    if evaluate:
        assert {k for k in a["evaluation"] if a["evaluation"][k] != b["evaluation"][k]} <= (
            NOISY_EVALUATION
        )


def test_dp_owls_settings_are_refused_for_the_plug_in_rule_with_the_fix():
    with pytest.raises(ValueError, match="gamma, weight_bound: DP-OWL's settings"):
        ReleasePlan(epsilon=1.0, learner="plug-in", gamma=5.0, weight_bound=3.0)
    with pytest.raises(ValueError, match="learner must be one of"):
        ReleasePlan(epsilon=1.0, learner="owl")
    ReleasePlan(epsilon=1.0, learner="plug-in", model_covariates=("age",))  # its models'
