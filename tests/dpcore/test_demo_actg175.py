"""The real ACTG 175 demo: its dictionary reads, the trial reads whole, the extraction repeats."""

import os
from pathlib import Path

import numpy as np
import pytest

from dpcore import read_dictionary, read_trial

DEMO = Path(__file__).resolve().parents[2] / "dpcore_app" / "demo_data"


def test_the_dictionary_describes_the_file_and_reads_the_trial():
    d = read_dictionary(DEMO / "actg175_trial.json")
    assert d.treatment == "arm" and d.treated == "zidovudine+didanosine" and d.propensity == 0.5
    assert d.outcome == "cd420" and d.outcome_bounds == (0.0, 1500.0) and d.larger_is_better
    assert len(d.covariates) == 16 and d.missing_bounds == []
    trial = read_trial(DEMO / "actg175_trial.csv", **d.read_trial_kwargs())
    assert trial.n == 1054 and trial.n_dropped == 0
    assert int((trial.A > 0).sum()) == 522
    lower, upper = trial.feature_bounds(d.bounds)
    # The public bounds were written from the protocol; checking here that the patients fall
    # inside them is a test of the dictionary, not an input to any release.
    assert np.mean((trial.X >= lower) & (trial.X <= upper)) == 1.0


def test_the_extraction_script_writes_the_same_bytes(tmp_path, monkeypatch):
    wheel = os.environ.get("LIFELINES_WHEEL")
    if not wheel or not Path(wheel).exists():
        pytest.skip("set LIFELINES_WHEEL to a lifelines-0.30.3 wheel to rerun the extraction")
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_actg175", DEMO / "make_actg175.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path)
    module.main(["make_actg175.py", wheel])
    for name in (
        "actg175_trial.csv",
        "actg175_trial.json",
        "actg175_four_arms.csv",
        "actg175_four_arms.json",
    ):
        assert (tmp_path / name).read_bytes() == (DEMO / name).read_bytes()
