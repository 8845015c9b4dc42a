"""A binary outcome written as labels (``0_no``/``1_yes``), declared ``type: binary`` with its two
levels in the dictionary, as binary covariates are: read as 0/1 by the library and ``dpcore
fit``, its direction from ``larger_is_better`` (the event is bad), and a neighbouring file gives
the same published fields. A dictionary whose levels the file never writes fails its check."""

import io
import json

import numpy as np
import pytest

from dpcore import DPOWL, read_trial
from dpcore.data import read_dictionary
from tests.dpcore.cli.commands import fit_command, run

DICTIONARY = {
    "treatment": "arm",
    "treated": "indomethacin",
    "outcome": "pancreatitis",
    "larger_is_better": False,  # the event (1_yes) is the outcome to avoid
    "propensity": 0.5,
    "columns": [
        {"name": "age", "role": "covariate", "type": "numeric", "bounds": [18, 90]},
        {"name": "arm", "role": "treatment", "levels": ["indomethacin", "placebo"]},
        {"name": "pancreatitis", "role": "outcome", "type": "binary", "levels": ["0_no", "1_yes"]},
    ],
}


def trial_csv(n=200, seed=0):
    rng = np.random.default_rng(seed)
    rows = "".join(
        f"{40 + i % 30},{'Indomethacin' if i % 2 else 'placebo'},"
        f"{'1_yes' if rng.random() < 0.15 else '0_no'}\n"
        for i in range(n)
    )
    return "age,arm,pancreatitis\n" + rows


def test_the_labels_read_as_0_and_1_and_the_direction_comes_from_the_dictionary():
    d = read_dictionary(DICTIONARY)
    assert not d.problems and d.outcome_bounds == (0.0, 1.0)
    text = trial_csv()
    trial = read_trial(
        io.StringIO(text.replace("1_yes", "1_YES", 1) + "50,placebo,maybe\n"), dictionary=d
    )
    expected = [1.0 if line.endswith("1_yes") else 0.0 for line in text.splitlines()[1:]]
    np.testing.assert_array_equal(trial.B[:-1], expected)  # 1_YES is 1_yes: labels by key
    assert not trial.complete[-1]  # another label: a missing outcome, weight 0
    assert trial.n == 201 and trial.larger_is_better is False
    rule = DPOWL(
        epsilon=np.inf,
        gamma=10.0,
        feature_bounds=trial.feature_bounds(d.bounds),
        outcome_bounds=d.outcome_bounds,
    ).fit_trial(trial)
    assert rule.larger_is_better_ is False


def test_labels_that_are_not_the_files_are_refused_with_the_fix():
    d = dict(DICTIONARY, columns=[dict(c) for c in DICTIONARY["columns"]])
    d["columns"][2]["levels"] = ["no", "yes"]
    with pytest.raises(ValueError, match="holds neither of its levels"):
        read_trial(io.StringIO(trial_csv()), dictionary=read_dictionary(d))


@pytest.mark.parametrize("change", ["event", "missing"])
def test_dpcore_fit_on_neighbouring_files_publishes_the_same_fields(tmp_path, change):
    """Privacy rule 10 on a labelled binary outcome: one patient's outcome changed (or
    unreadable) changes nothing in the rule file but the noisy coefficients and the time."""
    (tmp_path / "d.json").write_text(json.dumps(DICTIONARY))
    lines = trial_csv().splitlines()
    age, arm, outcome = lines[5].split(",")
    swapped = {"0_no": "1_yes", "1_yes": "0_no"}[outcome] if change == "event" else "n/a"
    neighbour = [*lines[:5], f"{age},{arm},{swapped}", *lines[6:]]
    out = {}
    for name, text in (("original", lines), ("neighbour", neighbour)):
        (tmp_path / f"{name}.csv").write_text("\n".join(text) + "\n")
        fit = run(
            *fit_command(
                tmp_path / f"{name}.csv",
                tmp_path / "d.json",
                tmp_path / f"{name}.sqlite",
                tmp_path / f"{name}.json",
            )
        )
        assert fit.returncode == 0, fit.stderr
        out[name] = json.loads((tmp_path / f"{name}.json").read_text())
    assert out["original"]["larger_is_better"] is False
    assert out["original"]["outcome_bounds"] == [0.0, 1.0]
    differ = {k for k in out["original"] if out["original"][k] != out["neighbour"][k]}
    assert differ <= {"coef", "intercept", "released_at"}, differ


def test_dictionary_check_reads_the_labelled_outcome_as_the_reader_does(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps(DICTIONARY))
    (tmp_path / "t.csv").write_text(trial_csv())
    ok = run("dictionary", "check", tmp_path / "d.json", "--data", tmp_path / "t.csv")
    assert ok.returncode == 0 and "not numbers" not in ok.stdout + ok.stderr, ok.stdout
    (tmp_path / "t.csv").write_text(trial_csv() + "50,placebo,unknown\n")
    noted = run("dictionary", "check", tmp_path / "d.json", "--data", tmp_path / "t.csv")
    assert "1 cell(s) match none of the levels; they read as missing" in noted.stdout + noted.stderr


def test_a_misspelled_level_is_a_problem_of_dictionary_check_not_a_note(tmp_path):
    """Levels the file never writes ("placebos" for "placebo") would read every such row as
    missing (or a covariate's as the baseline): the check fails and names the file's spelling."""
    typo = dict(DICTIONARY, columns=[dict(c) for c in DICTIONARY["columns"]])
    typo["columns"][1]["levels"] = ["indomethacin", "placebos"]
    (tmp_path / "d.json").write_text(json.dumps(typo))
    (tmp_path / "t.csv").write_text(trial_csv())
    checked = run("dictionary", "check", tmp_path / "d.json", "--data", tmp_path / "t.csv")
    said = checked.stdout + checked.stderr
    assert checked.returncode != 0 and "100 of 200 cells match none of the levels" in said, said
    assert "'placebo'" in said
