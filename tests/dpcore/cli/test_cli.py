"""The dpcore command line.

The user's whole path (fit, apply, the ledger), ``--version`` and argparse's exit code run in
a subprocess, as a user runs them; every other test calls ``cli.main`` in this process (the
same parser and commands, without an interpreter start that imports pandas and scipy)."""

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.dpcore.cli.commands import fit_command, run

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "dpcore_app" / "demo_data"


def dpcore(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "dpcore", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["fit"],
        ["apply"],
        ["ledger"],
        ["ledger", "show"],
        ["ledger", "cap"],
        ["ledger", "list"],
        ["ledger", "grant"],
        ["sweep"],
        ["app"],
        ["serve"],
    ],
)
def test_help_documents_every_command(command):
    out = run(*command, "--help")
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
    out = run(
        *"sweep --n 100 --epsilon 1 inf --reps 3 --test-size 200".split(),
        "--out",
        tmp_path / "s.csv",
    )
    assert out.returncode == 0, out.stderr
    table = pd.read_csv(tmp_path / "s.csv")
    assert len(table) == 2 and {"n", "epsilon", "accuracy_mean", "value_mean"} <= set(table.columns)


def test_bad_input_is_one_line_with_exit_code(tmp_path):
    out = run("apply", tmp_path / "missing.json", DEMO / "paper_trial.csv")
    assert out.returncode in (1, 3)
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr


def test_fit_apply_round_trip_recorded_in_the_ledger(tmp_path):
    """The README's path as a user runs it: fit, apply, show, cap, a refused fit. About 6 s
    (10 s on a loaded machine): five commands in five interpreters, each importing pandas."""
    ledger, rule = tmp_path / "ledger.sqlite", tmp_path / "rule.json"
    fit = dpcore(*fit_command(DEMO / "paper_trial.csv", DEMO / "paper_trial.json", ledger, rule))
    assert fit.returncode == 0, fit.stderr
    applied = dpcore("apply", rule, DEMO / "paper_trial.csv", "--out", tmp_path / "rec.csv")
    assert applied.returncode == 0, applied.stderr
    rec = pd.read_csv(tmp_path / "rec.csv")
    assert set(rec["recommendation"]) <= {0, 1} and len(rec) == len(
        pd.read_csv(DEMO / "paper_trial.csv")
    )
    keyed = ("--dictionary", DEMO / "paper_trial.json", "--ledger", ledger)
    shown = dpcore("ledger", "show", DEMO / "paper_trial.csv", *keyed)
    assert "total epsilon=1 " in shown.stdout
    assert dpcore("ledger", "cap", DEMO / "paper_trial.csv", "1.5", *keyed).returncode == 0
    again = dpcore(
        *fit_command(
            DEMO / "paper_trial.csv", DEMO / "paper_trial.json", ledger, tmp_path / "rule2.json"
        )
    )
    assert again.returncode == 1 and "exceeded" in again.stderr
    assert not (tmp_path / "rule2.json").exists()  # refused: nothing released


def test_apply_reports_the_rows_it_cannot_score(tmp_path):
    """The README's `dpcore apply` on the demo's new patients: two rows cannot be scored (an age
    missing, a site outside the rule's levels); they are written with the reason, not refused."""
    from dpcore.owl.rule_file import rule_to_dict, write_rule

    covariates = ["age", "biomarker", "severity", "frailty", "site=B", "site=C"]
    rule = write_rule(
        rule_to_dict(
            covariates=covariates,
            intercept=0.5,
            coef=[-0.01, 1.0, -0.1, -0.5, 0.2, -0.2],
            lower=[40, 0, 0, 0, 0, 0],
            upper=[80, 1, 10, 1, 1, 1],
            treated="drug",
            control="placebo",
            categories={"site": ["A", "B", "C"]},
        ),
        tmp_path / "rule.json",
    )
    assert rule
    out = run("apply", tmp_path / "rule.json", DEMO / "hospital_new_patients.csv")
    assert out.returncode == 0, out.stderr
    table = pd.read_csv(__import__("io").StringIO(out.stdout), keep_default_na=False)
    assert len(table) == 8 and {"arm", "days_in_hospital"}.isdisjoint(table.columns)
    unscored = table[table["not_scored"] != ""]
    assert unscored["patient_id"].tolist() == ["N006", "N007"]
    assert (unscored["recommendation"] == "").all()
    assert set(table["recommendation"][table["not_scored"] == ""]) <= {"drug", "placebo"}
    assert "2 of 8 row(s) could not be scored" in out.stderr


def test_sweep_help_prints_a_plain_percent():
    out = run("sweep", "--help")
    assert "95% CI" in " ".join(out.stdout.split()) and "%%" not in out.stdout


def test_app_files_are_found_as_package_resources():
    """app.py and its Streamlit config, found through the dpcore_app package (here the source
    tree's root); the config's options become flags, so they hold from any directory."""
    from dpcore import cli

    app, flags = cli.app_files()
    assert app.is_file() and app.name == "app.py" and (app.parent / "app_pages").is_dir()
    assert "--server.maxUploadSize=100" in flags and "--server.fileWatcherType=none" in flags


def test_an_installed_dashboard_is_found_in_its_package(tmp_path, monkeypatch):
    """app.py and the config are read from the dpcore_app package, wherever it is installed."""
    import dpcore_app
    from dpcore import cli

    (tmp_path / "app.py").write_text("")
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "config.toml").write_text("[server]\nmaxUploadSize = 7\n")
    monkeypatch.setattr(dpcore_app, "APP_DIR", tmp_path)
    assert cli.app_files() == (tmp_path / "app.py", ["--server.maxUploadSize=7"])


def test_warm_drops_only_streamlits_bare_mode_notices():
    import logging

    from dpcore_app import warm

    loggers = [logging.getLogger(name) for name in warm.BARE_MODE_LOGGERS]
    before = [list(lg.filters) for lg in loggers]
    try:
        warm.quiet_bare_mode()
        for lg in loggers:
            record = lambda level, lg=lg: lg.makeRecord(lg.name, level, "", 1, "m", (), None)  # noqa: E731
            assert not lg.filter(record(logging.WARNING)) and lg.filter(record(logging.ERROR))
        assert logging.getLogger("streamlit.other").filter(
            logging.getLogger("streamlit.other").makeRecord(
                "x", logging.WARNING, "", 1, "m", (), None
            )
        )
    finally:
        for lg, filters in zip(loggers, before):
            lg.filters[:] = filters


def test_app_passes_streamlit_options_through(monkeypatch):
    """`dpcore app --server.port 8502` runs `streamlit run app.py ... --server.port 8502`."""
    pytest.importorskip("streamlit")
    from dpcore import cli
    from dpcore._serve import processes

    seen = {}
    monkeypatch.setattr(processes, "run_app", lambda cmd, cwd: seen.update(cmd=cmd, cwd=cwd) or 0)
    assert cli.main(["app", "--server.port", "8502"]) == 0
    assert seen["cmd"][1:4] == ["-m", "streamlit", "run"]
    assert (
        Path(seen["cmd"][4]).name == "app.py" and Path(seen["cwd"]) == Path(seen["cmd"][4]).parent
    )
    assert seen["cmd"][-2:] == ["--server.port", "8502"]


def test_warm_runs_the_dashboards_warm_up_with_its_options(monkeypatch):
    """`dpcore warm --only dp_owl` runs `python -m dpcore_app.warm --only dp_owl` beside app.py (through
    dpcore_app.warm, which drops Streamlit's bare-mode notices)."""
    pytest.importorskip("streamlit")
    from dpcore import cli

    seen = {}
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd, cwd: seen.update(cmd=cmd, cwd=cwd) or 0)
    assert cli.main(["warm", "--only", "dp_owl", "--limit", "3"]) == 0
    assert seen["cmd"][1:] == ["-m", "dpcore_app.warm", "--only", "dp_owl", "--limit", "3"]
    assert (Path(seen["cwd"]) / "app.py").is_file()


def test_ledger_cap_and_show(tmp_path):
    """`dpcore ledger show` and `cap`: a cap is set once, raised only with --allow-raise, and
    a name is a label of the same dataset."""
    ledger, data = tmp_path / "ledger.sqlite", DEMO / "paper_trial.csv"
    empty = run("ledger", "show", data, "--ledger", ledger)
    assert empty.returncode == 0 and f"ledger {ledger}\n" in empty.stdout
    assert "does not exist yet: it is new and empty" in empty.stdout
    assert "cap none" not in empty.stdout and not ledger.exists()  # reading made nothing
    assert run("ledger", "cap", data, "2", "--ledger", ledger).returncode == 0
    raised = run("ledger", "cap", data, "3", "--ledger", ledger)
    assert raised.returncode == 1 and len(raised.stderr.strip().splitlines()) == 1
    assert run("ledger", "cap", data, "3", "--allow-raise", "--ledger", ledger).returncode == 0
    shown = run("ledger", "show", data, "--ledger", ledger, "--name", "")
    assert "cap 3" in shown.stdout
    other = run("ledger", "show", data, "--ledger", ledger, "--name", "trial B")
    assert "cap 3" in other.stdout  # a name is a label: the same data, the same dataset and cap
    assert "--allow-raise" in raised.stderr


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
        fit = run(
            *fit_command(
                data,
                DEMO / "paper_trial.json",
                tmp_path / f"{name}.sqlite",
                tmp_path / f"{name}.json",
            )
        )
        assert fit.returncode == 0, fit.stderr
        out[name] = json.loads((tmp_path / f"{name}.json").read_text())
    noisy = {"coef", "intercept", "released_at"}
    assert out["original"].keys() == out["neighbour"].keys()
    differ = {k for k in out["original"] if out["original"][k] != out["neighbour"][k]}
    assert differ <= noisy, differ


FIT = ("fit", DEMO / "paper_trial.csv", "--dictionary", DEMO / "paper_trial.json", "--epsilon", "1")


def _shown(ledger):
    return run(
        "ledger",
        "show",
        DEMO / "paper_trial.csv",
        "--dictionary",
        DEMO / "paper_trial.json",
        "--ledger",
        ledger,
    ).stdout


def test_seed_is_refused_unless_the_rule_is_titled_not_private(tmp_path):
    import json

    ledger = tmp_path / "l.sqlite"
    refused = run(*FIT, "--seed", "0", "--ledger", ledger, "--out", tmp_path / "r.json")
    assert refused.returncode == 1 and "--not-private" in refused.stderr
    assert not (tmp_path / "r.json").exists() and "does not exist yet" in _shown(ledger)
    seeded = run(
        *FIT, "--seed", "0", "--not-private", "--ledger", ledger, "--out", tmp_path / "r.json"
    )
    assert seeded.returncode == 0, seeded.stderr
    rule = json.loads((tmp_path / "r.json").read_text())
    assert rule["title"].startswith("NOT PRIVATE") and rule["seed"] == 0
    assert rule["private"] is False and rule["ledger"]["epsilon_total"] == "no guarantee (inf)"
    later = run(*FIT, "--ledger", ledger, "--out", tmp_path / "later.json")
    assert later.returncode == 0, later.stderr
    assert (
        json.loads((tmp_path / "later.json").read_text())["ledger"]["epsilon_total"]
        == "no guarantee (inf)"
    )  # every later file states it
    assert "total epsilon=no guarantee (inf)" in _shown(ledger)


def test_fit_evaluate_writes_the_private_evaluation_and_charges_the_larger_part(tmp_path):
    import json

    ledger, out = tmp_path / "l.sqlite", tmp_path / "r.json"
    fit = run(*FIT, "--evaluate", "0.5", "--ledger", ledger, "--out", out)
    assert fit.returncode == 0, fit.stderr
    rule = json.loads(out.read_text())
    assert rule["evaluation"]["epsilon_eval"] == 0.5 and rule["n"] == 800  # the fit's part
    assert rule["ledger"]["epsilon_total"] == "1"
    assert "total epsilon=1 " in _shown(ledger)


def test_a_fit_whose_out_cannot_be_written_is_not_charged(tmp_path):
    ledger = tmp_path / "l.sqlite"
    fit = run(*FIT, "--ledger", ledger, "--out", tmp_path / "missing" / "r.json")
    assert fit.returncode == 1 and "--out" in fit.stderr and "Traceback" not in fit.stderr
    assert "over 0 release(s)" in _shown(ledger)


def test_a_fit_whose_out_is_a_directory_is_refused_before_anything_is_charged(tmp_path):
    ledger = tmp_path / "l.sqlite"
    (tmp_path / "rules").mkdir()
    fit = run(*FIT, "--ledger", ledger, "--out", tmp_path / "rules")
    assert fit.returncode == 1 and "is a directory" in fit.stderr, fit.stderr
    assert len(fit.stderr.strip().splitlines()) == 1 and "Traceback" not in fit.stderr
    assert list((tmp_path / "rules").iterdir()) == []
    assert not ledger.exists() or "over 0 release(s)" in _shown(ledger)


def _dictionary_without(tmp_path, covariate):
    """The demo trial's dictionary with ``covariate`` marked ignore (a release on fewer
    columns of the same file)."""
    import json

    d = json.loads((DEMO / "paper_trial.json").read_text())
    for c in d["columns"]:
        if c["name"] == covariate:
            c["role"] = "ignore"
    out = tmp_path / f"without_{covariate}.json"
    out.write_text(json.dumps(d))
    return out


def test_a_cap_set_on_the_file_binds_releases_whatever_dictionary_they_use(tmp_path):
    """`dpcore ledger cap FILE` (no dictionary) caps the file: a release with the full
    dictionary and one that leaves a covariate out share that one budget (issue 37)."""
    ledger, data = tmp_path / "l.sqlite", DEMO / "paper_trial.csv"
    assert run("ledger", "cap", data, "1.5", "--ledger", ledger).returncode == 0
    full = run(*FIT, "--ledger", ledger, "--out", tmp_path / "r.json")
    assert full.returncode == 0, full.stderr
    fewer = _dictionary_without(tmp_path, "x4")
    over = ("fit", data, "--dictionary", fewer, "--epsilon", "1", "--ledger", ledger)
    refused = run(*over, "--out", tmp_path / "r2.json")
    assert refused.returncode == 1 and "epsilon=1.5 exceeded" in refused.stderr, refused.stderr
    assert not (tmp_path / "r2.json").exists()
    within = run(*over[:4], "--epsilon", "0.5", *over[6:], "--out", tmp_path / "r3.json")
    assert within.returncode == 0, within.stderr
    shown = run("ledger", "show", data, "--ledger", ledger).stdout
    assert "total epsilon=1.5 delta=0 over 2 release(s); cap 1.5" in shown


def test_ledger_list_names_every_dataset_with_who_spend_and_cap(tmp_path):
    ledger = tmp_path / "l.sqlite"
    new = run("ledger", "list", "--ledger", ledger)
    assert new.returncode == 0 and "does not exist yet: no dataset" in new.stdout
    assert not ledger.exists()
    assert run(*FIT, "--ledger", ledger, "--out", tmp_path / "r.json").returncode == 0
    other = tmp_path / "other.csv"
    other.write_text("arm,y\n1,2\n0,3\n")
    assert run("ledger", "cap", other, "2", "--ledger", ledger, "--name", "pilot").returncode == 0
    listed = run("ledger", "list", "--ledger", ledger)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.strip().splitlines()
    assert lines[0] == f"ledger {ledger}: 2 dataset(s)"
    assert "paper_trial.csv  registered by the local user" in lines[1]
    assert lines[1].endswith("epsilon=1 delta=0 over 1 release(s); cap none")
    assert "pilot  registered by the local user" in lines[2]
    assert lines[2].endswith("epsilon=0 delta=0 over 0 release(s); cap 2")
    # The keeper lets a server user see the pilot, by the key's start as the list shows it.
    from dpcore.privacy.accounting import PrivacyLedger

    prefix = lines[2].split()[0]
    with pytest.raises(ValueError, match="that you may see"):
        PrivacyLedger.open(ledger, PrivacyLedger.list_datasets(ledger)[1].dataset, user="bob")
    granted = run("ledger", "grant", prefix, "bob", "--ledger", ledger)
    assert granted.returncode == 0 and "bob may now see dataset" in granted.stdout
    key = PrivacyLedger.list_datasets(ledger, user="bob")[0].dataset
    assert key.startswith(prefix) and PrivacyLedger.open(ledger, key, user="bob").budget == 2.0
    unknown = run("ledger", "grant", "ds3-0000", "bob", "--ledger", ledger)
    assert unknown.returncode == 1 and "names no dataset" in unknown.stderr


def test_a_dictionary_without_larger_is_better_is_refused_naming_the_field(tmp_path):
    import json

    d = json.loads((DEMO / "paper_trial.json").read_text())
    d.pop("larger_is_better", None)
    (tmp_path / "d.json").write_text(json.dumps(d))
    fit = run(
        *fit_command(
            DEMO / "paper_trial.csv",
            tmp_path / "d.json",
            tmp_path / "l.sqlite",
            tmp_path / "r.json",
        )
    )
    assert fit.returncode == 1 and "larger_is_better" in fit.stderr
    assert len(fit.stderr.strip().splitlines()) == 1


def test_a_re_saved_file_spends_the_same_budget(tmp_path):
    ledger = tmp_path / "l.sqlite"
    resaved = tmp_path / "resaved.csv"
    lines = (DEMO / "paper_trial.csv").read_text().splitlines()
    resaved.write_text("\r\n".join([lines[0]] + lines[1:][::-1]))  # CRLF, rows reversed
    assert run(*FIT, "--ledger", ledger, "--out", tmp_path / "a.json").returncode == 0
    again = run(
        "fit",
        resaved,
        *FIT[2:],
        "--ledger",
        ledger,
        "--name",
        "another name",
        "--out",
        tmp_path / "b.json",
    )
    assert again.returncode == 0, again.stderr
    assert "total is 2" in again.stdout


def test_default_cap_for_every_new_dataset(tmp_path):
    ledger = tmp_path / "l.sqlite"
    assert run("ledger", "default-cap", "2", "--ledger", ledger).returncode == 0
    assert "cap 2" in _shown(ledger)
    raised = run("ledger", "default-cap", "3", "--ledger", ledger)
    assert raised.returncode == 1 and "--allow-raise" in raised.stderr


def test_apply_neutralises_formula_cells_and_keeps_numbers(tmp_path):
    import csv

    rule = tmp_path / "r.json"
    assert run(*FIT, "--ledger", tmp_path / "l.sqlite", "--out", rule).returncode == 0
    lines = (DEMO / "paper_trial.csv").read_text().splitlines()
    header = lines[0] + ",note"
    notes = ['=HYPERLINK("http://x")', "+1", "@SUM(A1)", "\uff1dcmd", "-x", "plain"]
    rows = [f"{line},{notes[i % len(notes)]}" for i, line in enumerate(lines[1:13])]
    patients = tmp_path / "p.csv"
    patients.write_bytes(("\n".join([header, *rows]) + "\n").encode())
    out = tmp_path / "rec.csv"
    applied = run("apply", rule, patients, "--out", out)
    assert applied.returncode == 0, applied.stderr
    with open(out, newline="", encoding="utf-8") as fh:
        table = list(csv.reader(fh))
    assert len(table) == 13
    note = table[0].index("note")
    cells = [r[note] for r in table[1:]]
    assert cells[:3] == ['\'=HYPERLINK("http://x")', "'+1", "'@SUM(A1)"]
    assert cells[3] == "'\uff1dcmd" and cells[4] == "'-x" and cells[5] == "plain"
    assert any(c.startswith("-") for r in table[1:] for c in r[:note])  # numbers stay numbers
    arm = table[0].index("treatment")
    assert {r[arm] for r in table[1:]} <= {"0", "1"}  # whole numbers as written, not 1.0


def test_fit_evaluate_aipw_writes_the_doubly_robust_evaluation_at_the_same_cost(tmp_path):
    import json

    ledger, out = tmp_path / "l.sqlite", tmp_path / "r.json"
    fit = run(
        *FIT,
        "--evaluate",
        "0.5",
        "--evaluation",
        "aipw",
        "--model-covariates",
        "x1,x3",
        "--ledger",
        ledger,
        "--out",
        out,
    )
    assert fit.returncode == 0, fit.stderr
    ev = json.loads(out.read_text())["evaluation"]
    assert ev["method"].startswith("aipw") and ev["epsilon_eval"] == 0.5
    assert ev["outcome_model"]["columns"] == [0, 2] and ev["outcome_model"]["epsilon"] == 0.25
    assert len(ev["second_moments"]) == 6 and "Doubly robust" in ev["summary"]
    assert json.loads(out.read_text())["ledger"]["epsilon_total"] == "1"  # max(ε, ε_eval)
    assert "total epsilon=1 " in _shown(ledger)


@pytest.mark.parametrize("method", ["ipw", "aipw"])
def test_fit_evaluate_on_neighbouring_files_differs_only_in_the_noisy_part(tmp_path, method):
    """Privacy rule 10 for ``dpcore fit --evaluate``: the rule file's every field but the noisy
    ones (coefficients, the evaluation's noisy cells and what is computed from them, the AIPW
    outcome model's coefficients) agrees."""
    import json

    rows = (DEMO / "paper_trial.csv").read_text().splitlines()
    fields = rows[7].split(",")
    fields[0], fields[-1] = "0.99", "-9.5"
    neighbour = tmp_path / "neighbour.csv"
    neighbour.write_text("\n".join(rows[:7] + [",".join(fields)] + rows[8:]) + "\n")
    out = {}
    for name, data in (("original", DEMO / "paper_trial.csv"), ("neighbour", neighbour)):
        fit = run(
            "fit",
            data,
            *FIT[2:],
            "--evaluate",
            "0.5",
            "--evaluation",
            method,
            "--ledger",
            tmp_path / f"{name}.sqlite",
            "--out",
            tmp_path / f"{name}.json",
        )
        assert fit.returncode == 0, fit.stderr
        out[name] = json.loads((tmp_path / f"{name}.json").read_text())
    differ = {k for k in out["original"] if out["original"][k] != out["neighbour"][k]}
    assert differ <= {"coef", "intercept", "released_at", "evaluation"}, differ
    a, b = out["original"]["evaluation"], out["neighbour"]["evaluation"]
    public = {"epsilon_eval", "patients", "level", "sensitivity_l1", "epsilon_split", "method"}
    assert {k: a[k] for k in public & a.keys()} == {k: b[k] for k in public & b.keys()}
    assert set(a) == set(b)
    if method == "aipw":
        model = lambda e: {
            k: v
            for k, v in e["outcome_model"].items()  # noqa: E731
            if not k.startswith("coef")
        }
        assert model(a) == model(b) and len(model(a)) == 5


@pytest.mark.parametrize(
    "args,flag",
    [
        (("--evaluate", "1", "--fit-share", "1.5"), "--fit-share"),
        (("--ledger", "/proc/none/l.sqlite"), "--ledger"),
        (("--seed", "1"), "--not-private"),
        (("--evaluation", "aipw"), "--evaluate"),
        (
            ("--evaluate", "1", "--evaluation", "aipw", "--model-covariates", "x9"),
            "--model-covariates",
        ),
    ],
)
def test_user_errors_are_one_line_naming_the_flag_that_fixes_them(tmp_path, args, flag):
    got = run(
        *FIT,
        *args,
        "--out",
        tmp_path / "r.json",
        *(() if "--ledger" in args else ("--ledger", tmp_path / "l.sqlite")),
    )
    assert got.returncode == 1 and flag in got.stderr, got.stderr
    assert len(got.stderr.strip().splitlines()) == 1 and "Traceback" not in got.stderr
    assert not (tmp_path / "r.json").exists()


# --------------------------------------------------------------------------------------------
# The keeper's commands on a PostgreSQL ledger, in this process (a server of the test process)


def test_ledger_show_cap_and_default_cap_on_postgresql(postgres_server, monkeypatch, tmp_path):
    """The trial's first 80 rows: keying a file costs about 1 ms a row, whatever the ledger."""
    url, data = postgres_server.new_ledger(), tmp_path / "trial.csv"
    data.write_text("\n".join((DEMO / "paper_trial.csv").read_text().splitlines()[:81]) + "\n")
    keyed = (data, "--dictionary", DEMO / "paper_trial.json", "--ledger", url)
    fit = ("fit", *keyed, "--epsilon", "1")
    assert run("ledger", "default-cap", "--ledger", url).stdout.strip() == "no default cap"
    made = run("ledger", "default-cap", "4", "--ledger", url)
    assert made.returncode == 0 and "gets the cap epsilon=4" in made.stdout
    assert "over 0 release(s); cap 4" in run("ledger", "show", *keyed).stdout
    assert run("ledger", "cap", *keyed[:1], "1.5", *keyed[1:]).returncode == 0
    raised = run("ledger", "cap", *keyed[:1], "3", *keyed[1:])
    assert raised.returncode == 1 and "--allow-raise" in raised.stderr
    assert run(*fit, "--out", tmp_path / "r.json").returncode == 0
    again = run(*fit, "--out", tmp_path / "r2.json")
    assert again.returncode == 1 and "cap" in again.stderr and not (tmp_path / "r2.json").exists()
    monkeypatch.setenv("DPCORE_LEDGER", url)  # the app's and the command line's default
    shown = run("ledger", "show", *keyed[:3])
    assert "total epsilon=1 delta=0 over 1 release(s); cap 1.5" in shown.stdout, shown.stdout
    assert run("ledger", "default-cap").stdout.strip() == "default cap epsilon=4"


def test_a_ledger_server_out_of_reach_or_without_its_driver_is_one_line(tmp_path, monkeypatch):
    pytest.importorskip("psycopg")
    url = f"postgresql://ann:s3cret@/ledger?host={tmp_path}&port=9"  # nothing listens there
    down = run("ledger", "show", DEMO / "paper_trial.csv", "--ledger", url)
    assert down.returncode == 1 and "cannot connect to the ledger" in down.stderr
    assert len(down.stderr.strip().splitlines()) == 1 and "s3cret" not in down.stderr
    monkeypatch.setitem(sys.modules, "psycopg", None)
    missing = run("ledger", "default-cap", "2", "--ledger", url)
    assert missing.returncode == 3 and ".[server]" in missing.stderr
    assert "not on a package index" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    other = run("ledger", "show", DEMO / "paper_trial.csv", "--ledger", "mysql://db/ledger")
    assert other.returncode == 1 and "not one the ledger can serve" in other.stderr


def test_the_fit_parsers_choices_are_the_librarys():
    # the parser writes them out so that `dpcore --help` imports no scipy: the copies must agree
    import argparse

    from dpcore.cli.parser import build_parser
    from dpcore.owl.dpwerm import PERTURBATIONS
    from dpcore.owl.evaluation_fit import EVALUATIONS
    from dpcore.release.plan import LEARNERS

    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    choices = {a.dest: a.choices for a in sub.choices["fit"]._actions if a.choices}
    assert tuple(choices["learner"]) == LEARNERS
    assert tuple(choices["perturbation"]) == PERTURBATIONS
    assert tuple(choices["evaluation"]) == EVALUATIONS
