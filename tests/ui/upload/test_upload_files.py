"""The three downloads: the JSON rule reproduces DPOWL's recommendations, the CSV is safe to
open in a spreadsheet, the report opens offline and holds nothing analyst-only."""

import csv
import dataclasses
import io
import json
import pathlib
import re

import numpy as np
import pandas as pd
import pytest

from dpcore.data.csv_io import read_table
from dpcore_app.ui.upload import compute, files
from dpcore_app.ui.upload.charts import rule_effects
from tests.releases import page_release, with_rule

DEMO = pathlib.Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"
HOSPITAL = DEMO / "hospital_trial.csv"


@pytest.fixture(scope="module")
def released():
    d = json.loads((DEMO / "hospital_trial.json").read_text())
    trial = compute.read_trial(
        HOSPITAL,
        treatment="arm",
        outcome="days_in_hospital",
        treated="drug",
        covariates=["site", "age", "biomarker", "severity", "frailty"],
        categorical={"site": ["A", "B", "C"]},
        incomplete="keep",
        unknown_levels="baseline",
    )
    bounds = {c["name"]: c["bounds"] for c in d["columns"] if "bounds" in c}
    W = compute.weight_bound((0.0, 20.0), 2 / 3, 0.05)
    settings = dict(
        bounds=bounds,
        outcome_bounds=(0.0, 20.0),
        larger_is_better=False,
        gamma=20.0,
        W=W,
        propensity=2 / 3,
        eps=50.0,
        gamma_source="a test",
    )
    release, rec = page_release(HOSPITAL.read_bytes(), trial, settings, label="=evil.csv")
    trial = release.made.trial
    return trial, release, rec, compute.compare_nonprivate(release.made, rec)


def test_json_rule_reproduces_the_recommendations(released):
    trial, release, rec, _ = released
    rule = json.loads(files.rule_json(release))
    table = read_table(HOSPITAL).iloc[trial.rows - 1]
    labels, _ = files.apply_rule(rule, table)
    ok = trial.covariates_complete  # a row missing a covariate gets no recommendation
    np.testing.assert_array_equal((labels == "drug")[ok], (rec > 0)[ok])
    assert 0 < np.mean(rec > 0) < 1  # both arms recommended: the check has teeth
    assert rule["one_hot"] == ["site=B", "site=C"] and rule["W"] == pytest.approx(60.0)


def test_the_python_recipe_in_the_file_runs_and_agrees(released, tmp_path, monkeypatch):
    trial, release, rec, _ = released
    (tmp_path / "private_rule.json").write_text(files.rule_json(release))
    monkeypatch.chdir(tmp_path)
    scope = {}
    exec(json.loads(files.rule_json(release))["apply_python"], scope)
    ok = trial.covariates_complete
    table = read_table(HOSPITAL).iloc[trial.rows[ok] - 1]
    np.testing.assert_array_equal(
        scope["recommend"](table.to_dict("records")) == "drug", (rec > 0)[ok]
    )


def test_nothing_analyst_only_in_the_downloads(released):
    trial, release, rec, analyst = released
    text = files.rule_json(release) + files.report_html(
        release, rule_effects(release.names, release.effects(), release.treated, release.control)
    )
    for word in (
        "clipped_share",
        "weights clipped",
        "diagnos",
        "n_iter",
        "grad_norm",
        "kappa",
        "IPW",
        "non-private rule",
    ):
        assert word not in text
    for number in (analyst.value_private, analyst.value_nonprivate):
        assert f"{number:.6g}" not in text
    assert analyst.agreement["concordance"] > 0.5  # the comparison itself is computed


def test_report_is_one_offline_page_with_escaped_user_text(released):
    _, release, _, _ = released
    html = files.report_html(
        release, rule_effects(release.names, release.effects(), release.treated, release.control)
    )
    assert not re.search(r"<script[^>]+src=", html) and not re.search(r"<link[^>]+href=", html)
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js inlined
    assert "=evil.csv" in html and "<h1>Private treatment rule (ε = 50)</h1>" in html  # typed title
    assert "e^50" in html


def test_csv_neutralises_formulas_and_keeps_numbers(released):
    trial, release, rec, _ = released
    ids = {
        "patient_id": np.array(
            ['=HYPERLINK("x")', "+1", "-2", "@SUM(A1)", "P5"] * (trial.n // 5)
            + ["P"] * (trial.n % 5),
            dtype=object,
        )
    }
    out = pd.read_csv(
        io.StringIO(files.rows_csv(release, trial, rec, ids)), dtype={"patient_id": str}
    )
    assert out["patient_id"].head(5).tolist() == [
        '\'=HYPERLINK("x")',
        "'+1",
        "'-2",
        "'@SUM(A1)",
        "P5",
    ]
    assert out["data_row"].tolist() == trial.rows.tolist()
    assert (out["score"] < 0).any()  # negative numbers are numbers, not neutralised text
    ok = trial.covariates_complete  # a row missing a covariate: no recommendation
    assert set(out["recommendation"][ok]) == {"drug", "placebo"}
    assert out["recommendation"][~ok].isna().all() and (~ok).any()
    np.testing.assert_array_equal((out["recommendation"] == "drug")[ok], (rec > 0)[ok])


@pytest.mark.parametrize(
    "cell,expected",
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-x", "'-x"),
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("ok", "ok"),
        (-1.5, -1.5),
    ],
)
def test_neutral(cell, expected):
    assert files.neutral(cell) == expected


def test_headers_are_neutralised_too(released):
    trial, release, rec, _ = released
    head = files.rows_csv(release, trial, rec, {"=cmd": np.zeros(trial.n)}).splitlines()[0]
    assert "'=cmd" in next(csv.reader([head]))


# --------------------------------------------------------------------------------------------
# Neighbouring files (privacy rules 8 and 10): two files that differ in one row give releases
# whose every published field except the noisy coefficients is identical.

SITES = ("A", "B", "C")


def neighbour_csv(change=None, n=60):
    """A small 1:1 trial with a categorical site; ``change`` replaces row 7's cells."""
    rng = np.random.default_rng(3)
    rows = [
        {
            "patient_id": f"P{i}",
            "age": str(30 + i % 50),
            "site": SITES[i % 3],
            "arm": "drug" if i % 2 else "placebo",
            "y": f"{rng.uniform(0, 10):.3f}",
        }
        for i in range(n)
    ]
    rows[7].update(change or {})
    head = "patient_id,age,site,arm,y\n"
    return (head + "".join(",".join(r.values()) + "\n" for r in rows)).encode()


def published(data, gamma_from="paper", d0=None):
    """Every published field of the page's release on ``data``, coefficients zeroed.

    The page's own calls: load_trial with the public levels (public n), γ from the page's
    choice, the pipeline's release, then the three downloads.
    """
    trial = compute.load_trial.__wrapped__(
        "digest", data, "arm", "y", ("age", "site"), (("site", SITES),), None, "drug", True
    )
    W = compute.weight_bound((0.0, 10.0), 0.5, 0.05)
    if gamma_from == "d0":
        gamma, where = compute.d0_gamma.__wrapped__(
            "d0",
            d0,
            trial.n,
            1.0,
            W,
            0.5,
            *trial.feature_bounds({"age": (18.0, 90.0)}),
            (0.0, 10.0),
            True,
        )
    else:
        gamma, _, where = compute.tuned_gamma.__wrapped__(
            "paper", "same as the trial", trial.n, 1.0, W
        )
    release, rec = page_release(data, trial, _settings(1.0, gamma, where, W))
    release = with_rule(release, intercept=0.0, coef=(0.0,) * len(release.coef))
    report = files.report_html(
        release, rule_effects(release.names, release.effects(), release.treated, release.control)
    )
    report = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "", report)
    header = files.rows_csv(release, trial, rec).splitlines()[0]
    return {
        "rule": release.to_dict(),
        "report": report,
        "csv header": header,
        "n, γ, Δ, W": (release.n, release.gamma, release.sensitivity, release.W),
    }


def _settings(eps, gamma, where, W):
    return dict(
        bounds={"age": (18.0, 90.0)},
        outcome_bounds=(0.0, 10.0),
        larger_is_better=True,
        eps=eps,
        gamma=gamma,
        gamma_source=where,
        W=W,
        propensity=0.5,
    )


NEIGHBOURS = {
    # item 1: a level held by one patient, a value outside the public levels
    "a rare site": {"site": "RARE_site_of_one_patient"},
    # item 2: a missing covariate, a missing outcome, a missing site (n stays the row count)
    "a missing age": {"age": "NA"},
    "a missing outcome": {"y": ""},
    "a missing site": {"site": ""},
}


@pytest.mark.parametrize("case", list(NEIGHBOURS))
def test_neighbouring_files_publish_the_same_fields(case):
    base, other = published(neighbour_csv()), published(neighbour_csv(NEIGHBOURS[case]))
    for field in base:
        assert base[field] == other[field], field
    rule = base["rule"]
    assert rule["n"] == 60 and rule["covariates"] == ["age", "site=B", "site=C"]
    assert "RARE" not in json.dumps(published(neighbour_csv(NEIGHBOURS["a rare site"])))


def test_the_neighbouring_check_has_teeth():
    """The comparison sees a change: another n, or levels read off the data, differ."""
    assert published(neighbour_csv()) != published(neighbour_csv(n=61))
    trial = compute.read_trial(
        neighbour_csv(NEIGHBOURS["a rare site"]),
        treatment="arm",
        outcome="y",
        covariates=["age", "site"],
        categorical=["site"],
    )
    assert "site=RARE_site_of_one_patient" in trial.covariates  # what the old page published


def test_neighbouring_files_with_a_public_d0_publish_the_same_fields():
    d0 = compute.load_trial.__wrapped__(
        "d0",
        neighbour_csv(n=80).replace(b"P", b"Q"),
        "arm",
        "y",
        ("age", "site"),
        (("site", SITES),),
        None,
        "drug",
        False,
    )
    base = published(neighbour_csv(), "d0", d0)
    other = published(neighbour_csv(NEIGHBOURS["a missing age"]), "d0", d0)
    assert base == other
    assert "analyst's assertion" in base["rule"]["gamma_source"]


def test_an_incomplete_row_gets_weight_zero_and_a_blank_recommendation(released):
    data = neighbour_csv({"age": "NA"})
    trial = compute.load_trial.__wrapped__(
        "d", data, "arm", "y", ("age", "site"), (("site", SITES),), None, "drug", True
    )
    assert trial.n == 60 and trial.n_incomplete == 1 and not trial.complete[7]
    B = trial.outcomes_for_fit((0.0, 10.0), True)
    assert B[7] == 0.0  # the worst bound: benefit 0, so weight 0
    release, rec = page_release(data, trial, _settings(1.0, 10.0, "t", 20.0))
    out = list(csv.DictReader(io.StringIO(files.rows_csv(release, trial, rec))))
    assert len(out) == 60 and out[7]["recommendation"] == "" and out[7]["score"] == ""
    assert out[7]["age"] == "" and out[7]["site=B"] == ""  # missing, never the fill value 0
    assert out[8]["recommendation"] in ("drug", "placebo") and out[8]["age"] != ""


# --------------------------------------------------------------------------------------------
# A hostile file's per-row CSV (items 6, 7 and 11)

HOSTILE = [
    "=cmd|' /C calc'!A0",
    "a\rb",
    "line\n=1+1",
    "  =SUM(A1)",
    "\uff1dHYPERLINK(1)",
    "+1",
    "-2",
    "@x",
    "\tx",
    "\r=x",
    "ok",
    "\u3000=x",
]


@pytest.fixture
def hostile():
    data = neighbour_csv()
    trial = compute.load_trial.__wrapped__(
        "d", data, "arm", "y", ("age", "site"), (("site", SITES),), None, "drug", True
    )
    release, rec = page_release(data, trial, _settings(1.0, 10.0, "t", 20.0))
    release = with_rule(release, treated="=drug\r\n", control="\uff0b1")
    ids = {
        "\uff1dcmd header": np.array(
            [HOSTILE[i % len(HOSTILE)] for i in range(trial.n)], dtype=object
        ),
        "\r\nsecond": np.array([" -x\n"] * trial.n, dtype=object),
    }
    return trial, release, rec, ids


def test_hostile_cells_stay_one_row_per_patient_and_are_neutralised(hostile):
    trial, release, rec, ids = hostile
    text = files.rows_csv(release, trial, rec, ids)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header, body = rows[0], rows[1:]
    assert len(body) == trial.n and all(len(r) == len(header) for r in body)
    formula = tuple("=+-@\t\r")
    import unicodedata

    def dangerous(cell):
        try:
            float(cell)  # a number (a negative score) is a number, not a formula
            return False
        except ValueError:
            return unicodedata.normalize("NFKC", cell).lstrip().startswith(formula)

    for r in rows:
        for cell in r:
            assert not dangerous(cell) or cell.startswith("'"), cell
    assert [r[1] for r in body] == [files.neutral(v) for v in ids["\uff1dcmd header"]]
    assert header[1] == "'\uff1dcmd header" and header[2] == "'\r\nsecond"
    assert [int(r[0]) for r in body] == trial.rows.tolist()


def test_file_columns_named_like_the_files_own_are_kept_apart(hostile):
    trial, release, rec, _ = hostile
    ids = {
        "score": np.arange(trial.n),
        "data_row": np.full(trial.n, "x", object),
        "=a": np.zeros(trial.n),
        "'=a": np.ones(trial.n),
    }
    out = list(csv.reader(io.StringIO(files.rows_csv(release, trial, rec, ids))))
    header = out[0]
    assert len(set(header)) == len(header)
    assert header.count("score") == 1 and "score (from the file)" in header
    assert [r[header.index("data_row")] for r in out[1:]] == [str(i) for i in trial.rows]


def test_a_not_private_release_says_so_in_every_row(hostile):
    trial, release, rec, _ = hostile
    void = with_rule(
        release,
        settings={**release.settings, "private": False, "title": "NOT PRIVATE treatment rule"},
    )
    rows = list(csv.reader(io.StringIO(files.rows_csv(void, trial, rec))))
    assert rows[0][0] == "NOT PRIVATE" and all(r[0].startswith("NOT PRIVATE") for r in rows[1:])
    assert "NOT PRIVATE" not in files.rows_csv(release, trial, rec)


def test_the_report_holds_no_file_name_unless_a_title_is_typed(released):
    _, release, _, _ = released
    untitled = dataclasses.replace(release, label="")
    html = files.report_html(
        untitled, rule_effects(release.names, release.effects(), release.treated, release.control)
    )
    assert "=evil.csv" not in html and "hospital_trial" not in html


def test_chart_labels_keep_quotes_and_escape_tags():
    fig = rule_effects(['say "hi"', "<b>x</b>"], [1.0, -1.0], 'a"', "b")
    assert 'say "hi"' in fig.data[0].y and "&lt;b&gt;x&lt;/b&gt;" in fig.data[0].y
    assert "&quot;" not in json.dumps(fig.to_plotly_json(), default=str)


def test_a_d0_with_other_levels_gets_the_trials_columns():
    d0_data = neighbour_csv({"site": "D"}, n=80)
    d0 = compute.load_trial.__wrapped__(
        "d0", d0_data, "arm", "y", ("age", "site"), (("site", SITES),), None, "drug", False
    )
    assert d0.covariates == ("age", "site=B", "site=C")


@pytest.mark.parametrize("k,text", [(1, "1 patient"), (2, "2 patients")])
def test_counts_agree_in_number(k, text):
    from dpcore_app.ui.upload import explain

    assert explain.patients(k) == text
    assert explain.patients(1, 1) == "1 of 1 patient"


# --------------------------------------------------------------------------------------------
# The public metadata table (items 1 and 9)


def test_the_table_reads_back_levels_bounds_and_what_is_missing():
    from dpcore_app.ui.upload import meta

    rows = {
        "age": {"lower": 18.0, "upper": 90.0},
        "site": {"type": "categorical", "levels": " A, B ,C"},
        "levels": {"lower": 1.0},
    }
    frame = meta.table(["age", "site", "levels"], "y", rows, guessed_categorical=("site",))
    assert list(frame.columns) == [
        "column",
        "type",
        "lower",
        "upper",
        "levels",
        "unit",
        "from",
        "problem",
    ]
    got = meta.read(frame, "y")
    assert got.categorical == {"site": ("A", "B", "C")} and got.bounds == {"age": (18.0, 90.0)}
    assert got.levels_ready and not got.complete  # the bounds of 'levels' and y are missing
    assert any("'levels'" in p for p in got.problems) and any("'y'" in p for p in got.problems)
    dup = meta.read(
        meta.table(["site"], "y", {"site": {"type": "categorical", "levels": "A, A"}}), "y"
    )
    assert not dup.levels_ready
    assert meta.rows_of(frame)["y"]["type"] == "outcome"


def test_the_table_fills_from_a_dictionary_and_from_the_data():
    from dpcore_app.ui.upload import meta

    d = json.loads((DEMO / "hospital_trial.json").read_text())
    rows = meta.from_dictionary(d, ["site", "age", "days_in_hospital"])
    got = meta.read(meta.table(["site", "age"], "days_in_hospital", rows), "days_in_hospital")
    assert got.complete and got.categorical == {"site": ("A", "B", "C")}
    filled = meta.from_data({}, {"age": (40.0, 40.0)}, {"site": ("A", "Z")})
    assert filled["age"]["upper"] == 41.0 and filled["site"]["levels"] == "A, Z"
    assert meta.read(meta.table(["age", "site"], "y", filled), "y", filled).from_data == (
        "age",
        "site",
    )


def test_a_data_range_left_in_the_table_keeps_the_release_not_private():
    """Privacy rule 2: the data's ranges, then a dictionary that does not describe every column,
    leave the undescribed column's data range in the table, and the release NOT PRIVATE; typing
    over it (the editor's rows differ from the kept ones) makes it typed."""
    from dpcore_app.ui.upload import meta

    d = json.loads((DEMO / "hospital_trial.json").read_text())
    d["columns"] = [c for c in d["columns"] if c["name"] != "frailty"]
    names = ["site", "age", "frailty"]
    rows = meta.from_data(
        {},
        {"age": (21.0, 89.0), "frailty": (0.01, 0.99), "days_in_hospital": (1.2, 19.8)},
        {"site": ("A", "B", "C")},
    )
    rows = {**rows, **meta.from_dictionary(d, [*names, "days_in_hospital"])}
    frame = meta.table(names, "days_in_hospital", rows)
    assert list(frame["from"]) == ["dictionary", "dictionary", "data (not private)", "dictionary"]
    assert meta.read(frame, "days_in_hospital", meta.rows_of(frame, rows)).from_data == ("frailty",)
    frame.loc[frame.column == "frailty", "upper"] = 1.0  # typed over: a public bound
    typed = meta.rows_of(frame, rows)
    assert typed["frailty"]["origin"] == {"lower": "data", "upper": "typed"}
    frame.loc[frame.column == "frailty", "lower"] = 0.0
    assert meta.read(frame, "days_in_hospital", meta.rows_of(frame, rows)).from_data == ()


def test_the_metadata_table_marks_each_rows_problem_and_counts_a_pending_edit():
    from dpcore_app.ui.upload import meta

    rows = {"age": {"type": "numeric", "lower": 90.0, "upper": 18.0}}
    problems = meta.dictionary_problems_by_column(
        [("column 'age'", "the dictionary's bounds was left out"), ("dictionary", "elsewhere")]
    )
    frame = meta.table(["age", "site"], "y", rows, ("site",), problems).set_index("column")
    assert "upper bound must be above" in frame.loc["age", "problem"]
    assert "the dictionary's bounds was left out" in frame.loc["age", "problem"]
    assert "type the public levels of 'site'" in frame.loc["site", "problem"]
    assert "enter public bounds" in frame.loc["y", "problem"]
    base = meta.table(["age"], "y", rows)
    edited = meta.with_edits(
        base,
        {"edited_rows": {"0": {"lower": 18.0, "upper": 90.0}, 1: {"lower": 0.0, "upper": 1.0}}},
    )
    now = meta.rows_of(edited, rows)
    assert meta.table(["age"], "y", now)["problem"].tolist() == ["", ""]
    assert meta.with_edits(base, None) is base


def test_the_per_row_file_writes_a_filled_cell_as_missing_and_its_indicator():
    """A public fill-in value stands in for a missing age in the fit; the per-row file shows the
    age as missing (empty), its indicator 1, and the row scored."""
    from dpcore import read_dictionary, read_trial
    from tests.dpcore.data.fill_trial import DICTIONARY, trial_csv

    data = trial_csv()
    d = read_dictionary(DICTIONARY)
    trial = read_trial(data, dictionary=d, unknown_levels="baseline")
    settings = dict(
        bounds=d.bounds,
        outcome_bounds=d.outcome_bounds,
        larger_is_better=True,
        W=20.0,
        propensity=0.5,
        eps=1.0,
        gamma=10.0,
        gamma_source="t",
    )
    release, rec = page_release(data, trial, settings)
    out = list(csv.DictReader(io.StringIO(files.rows_csv(release, release.made.trial, rec))))
    assert out[3]["age"] == "" and out[3]["age is missing"] == "1.0" and out[3]["score"] != ""
    assert out[5]["site=B"] == "" and out[5]["site is missing"] == "1.0"
    assert out[4]["age"] != "" and out[4]["age is missing"] == "0.0"
    assert out[7]["score"] == ""  # bmi has no fill: that row is not scored
