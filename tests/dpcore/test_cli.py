"""The dpcore command line, run as a user runs it: in a subprocess."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo_data"


def dpcore(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "dpcore", *map(str, args)], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120)


def has(module, name):
    try:
        return importlib.util.find_spec(module) is not None and hasattr(
            __import__(module, fromlist=[name]), name)
    except ImportError:
        return False


@pytest.mark.parametrize("command", [[], ["fit"], ["apply"], ["ledger"], ["ledger", "show"],
                                     ["ledger", "cap"], ["sweep"], ["app"]])
def test_help_documents_every_command(command):
    out = dpcore(*command, "--help")
    assert out.returncode == 0 and "usage: dpcore" in out.stdout


def test_version():
    import dpcore as pkg

    out = dpcore("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"dpcore {pkg.__version__}"


def test_bad_arguments_give_one_line_and_exit_code_2():
    out = dpcore("sweep", "--n", "100", "--epsilon", "0")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].startswith("dpcore sweep: error: argument --epsilon")


def test_sweep_writes_a_csv(tmp_path):
    out = dpcore("sweep", "--n", "100", "--epsilon", "1", "inf", "--reps", "3",
                 "--test-size", "200", "--out", tmp_path / "s.csv")
    assert out.returncode == 0, out.stderr
    table = pd.read_csv(tmp_path / "s.csv")
    assert len(table) == 2 and {"n", "epsilon", "accuracy_mean", "value_mean"} <= set(table.columns)


def test_bad_input_is_one_line_with_exit_code(tmp_path):
    out = dpcore("apply", tmp_path / "missing.json", DEMO / "paper_trial.csv")
    assert out.returncode in (1, 3)
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


needs_release = pytest.mark.skipif(
    not (has("dpcore.owl.release", "load_rule") and has("dpcore.data.dictionary", "read_dictionary")
         and has("dpcore.privacy.accounting", "dataset_key")),
    reason="dpcore.owl.release, dpcore.data.dictionary or the durable ledger not merged yet")


@needs_release
def test_fit_apply_round_trip_recorded_in_the_ledger(tmp_path):
    ledger, rule = tmp_path / "ledger.sqlite", tmp_path / "rule.json"
    fit = dpcore("fit", DEMO / "paper_trial.csv", "--dictionary", DEMO / "paper_trial.json",
                 "--epsilon", "1", "--seed", "0", "--ledger", ledger, "--out", rule)
    assert fit.returncode == 0, fit.stderr
    applied = dpcore("apply", rule, DEMO / "paper_trial.csv", "--out", tmp_path / "rec.csv")
    assert applied.returncode == 0, applied.stderr
    rec = pd.read_csv(tmp_path / "rec.csv")
    assert set(rec["recommendation"]) <= {0, 1} and len(rec) == len(pd.read_csv(DEMO / "paper_trial.csv"))
    shown = dpcore("ledger", "show", DEMO / "paper_trial.csv", "--ledger", ledger)
    assert "total epsilon=1 " in shown.stdout
    assert dpcore("ledger", "cap", DEMO / "paper_trial.csv", "1.5", "--ledger", ledger).returncode == 0
    again = dpcore("fit", DEMO / "paper_trial.csv", "--dictionary", DEMO / "paper_trial.json",
                   "--epsilon", "1", "--ledger", ledger, "--out", tmp_path / "rule2.json")
    assert again.returncode == 1 and "exceeded" in again.stderr
    assert not (tmp_path / "rule2.json").exists()  # refused: nothing released


def test_app_passes_streamlit_options_through(monkeypatch):
    """`dpcore app --server.port 8502` runs `streamlit run app.py ... --server.port 8502`."""
    pytest.importorskip("streamlit")
    from dpcore import cli

    seen = {}
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, cwd: seen.update(cmd=cmd, cwd=cwd) or 0)
    assert cli.main(["app", "--server.port", "8502"]) == 0
    assert seen["cmd"][1:4] == ["-m", "streamlit", "run"]
    assert Path(seen["cmd"][4]).name == "app.py" and Path(seen["cwd"]) == Path(seen["cmd"][4]).parent
    assert seen["cmd"][-2:] == ["--server.port", "8502"]


def test_warm_runs_the_dashboards_warm_up_with_its_options(monkeypatch):
    """`dpcore warm --only dp_owl` runs `python -m ui.warm --only dp_owl` beside app.py."""
    pytest.importorskip("streamlit")
    from dpcore import cli

    seen = {}
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, cwd: seen.update(cmd=cmd, cwd=cwd) or 0)
    assert cli.main(["warm", "--only", "dp_owl", "--limit", "3"]) == 0
    assert seen["cmd"][1:] == ["-m", "ui.warm", "--only", "dp_owl", "--limit", "3"]
    assert (Path(seen["cwd"]) / "app.py").is_file()


@pytest.mark.skipif(not has("dpcore.privacy.accounting", "dataset_key"),
                    reason="the durable ledger is not in this version")
def test_ledger_cap_and_show(tmp_path):
    ledger, data = tmp_path / "ledger.sqlite", DEMO / "paper_trial.csv"
    empty = dpcore("ledger", "show", data, "--ledger", ledger)
    assert empty.returncode == 0 and "over 0 release(s); cap none" in empty.stdout
    assert dpcore("ledger", "cap", data, "2", "--ledger", ledger).returncode == 0
    raised = dpcore("ledger", "cap", data, "3", "--ledger", ledger)
    assert raised.returncode == 1 and len(raised.stderr.strip().splitlines()) == 1
    assert dpcore("ledger", "cap", data, "3", "--allow-raise", "--ledger", ledger).returncode == 0
    shown = dpcore("ledger", "show", data, "--ledger", ledger, "--name", "")
    assert "cap 3" in shown.stdout
    other = dpcore("ledger", "show", data, "--ledger", ledger, "--name", "trial B")
    assert "cap none" in other.stdout  # another name, another dataset


@needs_release
@pytest.mark.parametrize("change", ["values", "missing"])
def test_fit_on_neighbouring_files_differs_only_in_the_noisy_part(tmp_path, change):
    """Privacy rule 10: two files that differ in one row give rule files whose every field but
    the released coefficients (and the release time) is identical."""
    import json

    rows = (DEMO / "paper_trial.csv").read_text().splitlines()
    fields = rows[7].split(",")
    fields[0] = "" if change == "missing" else "0.99"
    fields[-1] = "-9.5" if change == "values" else fields[-1]
    neighbour = tmp_path / "neighbour.csv"
    neighbour.write_text("\n".join(rows[:7] + [",".join(fields)] + rows[8:]) + "\n")
    out = {}
    for name, data in (("original", DEMO / "paper_trial.csv"), ("neighbour", neighbour)):
        fit = dpcore("fit", data, "--dictionary", DEMO / "paper_trial.json", "--epsilon", "1",
                     "--ledger", tmp_path / f"{name}.sqlite", "--out", tmp_path / f"{name}.json")
        assert fit.returncode == 0, fit.stderr
        out[name] = json.loads((tmp_path / f"{name}.json").read_text())
    noisy = {"coef", "intercept", "released_at"}
    assert out["original"].keys() == out["neighbour"].keys()
    differ = {k for k in out["original"] if out["original"][k] != out["neighbour"][k]}
    assert differ <= noisy, differ
