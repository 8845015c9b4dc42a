"""Dictionaries as people write them (tests/data/dictionaries): each loads to its expected
table or fails naming every problem with its fix; the check command lists them all."""

import json
from pathlib import Path

import numpy as np
import pytest

from dpcore.data import DictionaryError, read_dictionary, read_trial
from dpcore.data.dictionary.check import check_dictionary, schema, schema_problems

CORPUS = Path(__file__).resolve().parents[2] / "data" / "dictionaries"
DEMO = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"

# file -> the dictionary it reads as (a subset of its fields), or the problems it must name
# as (where, field, a phrase of the fix)
EXPECTED = {
    "top_level_roles.json": dict(
        treatment="arm",
        treated="drug",
        outcome="days",
        outcome_bounds=(0, 30),
        larger_is_better=False,
        propensity=0.5,
        bounds={"age": (18, 90)},
        categorical={"site": ["A", "B", "C"]},
        arms=None,
    ),
    "constant_propensity.json": dict(
        treatment="arm",
        treated="drug",
        arms=("drug", "placebo"),
        propensity=0.5,
        propensity_column=None,
        bounds={"age": (18, 90)},
    ),
    "agreeing_probability.json": dict(
        treated="drug", propensity=0.5, propensity_column=None, larger_is_better=False
    ),
    "units_and_meanings.json": dict(
        treated="zidovudine+didanosine",
        arms=("zidovudine+didanosine", "zidovudine"),
        outcome="cd420",
        outcome_bounds=(0, 1500),
        larger_is_better=True,
        propensity=0.5,
        bounds={"age": (12, 90), "wtkg": (30, 200)},
        units={"wtkg": "kg", "cd420": "cells/mm3"},
    ),
    "yes_no_synonyms.json": dict(
        treatment="treated",
        treated="Yes",
        arms=("Yes", "No"),
        larger_is_better=True,
        propensity=0.5,
        bounds={"smoker": (0, 1)},
        categorical={"diabetic": ["no", "yes"]},
    ),
    "spreadsheet_export.csv": dict(
        treated="drug, 10 mg",
        arms=("drug, 10 mg", "placebo"),
        larger_is_better=False,
        categorical={"site": ["A", "B", "C"]},
        bounds={"age": (18, 90)},
        units={"age": "years"},
    ),
    "bom_semicolon.csv": dict(
        treatment="arm",
        treated=1,
        arms=(1, -1),
        outcome_bounds=(4.0, 14.5),
        propensity=0.6667,
        larger_is_better=False,
        bounds={"bmi": (15, 50)},
    ),
    "missing_optional.csv": dict(
        treatment="arm", treated=None, outcome="days", outcome_bounds=None, bounds={}
    ),
    "frictionless.json": dict(
        treatment="arm",
        treated="drug",
        arms=("drug", "placebo"),
        outcome_bounds=(0, 30),
        bounds={"age": (18, 90), "smoker": (0, 1)},
        categorical={"site": ["A", "B", "C"]},
        missing_values=("NA", "-99"),
        covariates=["age", "site", "smoker"],
    ),
    "ratio_2to1.json": dict(treated="B", arms=("B", "A"), propensity=2 / 3),
    "treated_column.csv": dict(treated="drug", arms=("drug", "placebo")),
    "levels_semicolon.csv": dict(treatment="A", treated=1, arms=(1, -1)),
    "mixed_case.json": dict(
        treatment="arm", treated="1", arms=("1", "0"), outcome="y", bounds={"age": (18, 90)}
    ),
    "one_mistake_per_field.json": [
        ("column 'age'", "role", "use one of covariate"),
        ("column 'age'", "bounds", "swap them"),
        ("column 'sex'", "type", "use one of numeric"),
        ("column 'site'", "levels", "list each level once"),
        ("column 'days'", "'bound'", "bounds"),
        ("dictionary", "propensity", "divide it by 100"),
        ("dictionary", "larger_is_better", "larger_is_better = true"),
        ("dictionary", "treated", "treated = 'drug' or 'placebo'"),
    ],
    "disagreeing_probability.json": [("dictionary", "propensity", "remove the other")],
}


def test_the_corpus_is_complete():
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(EXPECTED)
    assert len(EXPECTED) >= 12


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_dictionary_loads_to_its_table_or_names_every_fix(name):
    expected = EXPECTED[name]
    if isinstance(expected, list):
        with pytest.raises(DictionaryError) as info:
            read_dictionary(CORPUS / name)
        found = info.value.problems
        for where, field, fix in expected:
            assert any(p.where == where and p.field == field and fix in p.fix for p in found), (
                where,
                field,
                [str(p) for p in found],
            )
        assert len(found) == len(expected), [str(p) for p in found]
        for where, _, _ in expected:
            assert where in str(info.value)  # the message names every problem's place
        # the valid parts stay usable
        partial = read_dictionary(CORPUS / name, strict=False)
        assert partial.problems == found and partial.treatment == "arm"
        return
    d = read_dictionary(CORPUS / name)
    assert d.problems == ()
    for key, want in expected.items():
        if key == "arms":
            got = d.column(d.treatment).levels
        elif key == "units":
            got = {c: d.column(c).unit for c in want}
        else:
            got = getattr(d, key)
        if key in ("propensity",) and want is not None:
            assert got == pytest.approx(want, abs=1e-4), key
        elif key == "bounds":
            assert got == {k: tuple(map(float, v)) for k, v in want.items()}
        elif key == "outcome_bounds" and want is not None:
            assert got == tuple(map(float, want))
        else:
            assert got == want, key
    # whatever form it came in, it writes and reads back as the same dictionary (a CSV cell
    # does not say whether "1" was a number or a text: the same label either way)
    assert read_dictionary(d.to_json()) == d
    assert read_dictionary(d.to_csv()).to_csv() == d.to_csv()


def test_a_trial_reads_with_a_csv_dictionary_naming_1_treated_among_minus_1_and_1():
    d = read_dictionary(CORPUS / "levels_semicolon.csv")
    rng = np.random.default_rng(0)
    text = "x1,A,B\n" + "".join(f"{rng.normal():.3f},{(-1, 1)[i % 2]},{i % 7}\n" for i in range(40))
    t = read_trial(text.encode(), dictionary=d, incomplete="keep")
    assert t.treated == 1 and t.arms == (1, -1)
    np.testing.assert_array_equal(t.A, np.where(np.arange(40) % 2 == 1, 1.0, -1.0))


def test_frictionless_missing_values_read_as_missing():
    d = read_dictionary(CORPUS / "frictionless.json")
    rows = "".join(
        f"p{i},{20 + i},{'ABC'[i % 3]},{'true' if i % 2 else 'false'},"
        f"{('placebo', 'drug')[i % 2]},{-99 if i == 3 else i % 9},\n"
        for i in range(40)
    )
    t = read_trial(
        ("patient_id,age,site,smoker,arm,days,notes\n" + rows).encode(),
        dictionary=d,
        incomplete="keep",
    )
    assert not t.complete[3] and t.complete.sum() == 39
    assert t.X[:, t.covariates.index("smoker")].tolist() == [float(i % 2) for i in range(40)]


def test_check_lists_what_a_release_still_needs_and_the_files_problems(tmp_path):
    d, problems, notes = check_dictionary(CORPUS / "missing_optional.csv")
    fields = {(p.where, p.field) for p in problems}
    assert {
        ("column 'arm'", "levels"),
        ("column 'days'", "bounds"),
        ("dictionary", "larger_is_better"),
        ("dictionary", "propensity"),
        ("column 'age'", "bounds"),
    } <= fields
    data = tmp_path / "t.csv"
    data.write_text("age,arm,day\n" + "".join(f"{30 + i},{i % 2},{i}\n" for i in range(20)))
    _, problems, _ = check_dictionary(CORPUS / "missing_optional.csv", data)
    assert any(p.where == "column 'days'" and "no such column" in p.message for p in problems)
    _, problems, notes = check_dictionary(DEMO / "hospital_trial.json", DEMO / "hospital_trial.csv")
    assert problems == [] and any("missing cell" in n for n in notes)


def test_dictionary_check_command(tmp_path, capsys):
    from dpcore.cli import main

    assert (
        main(
            [
                "dictionary",
                "check",
                str(DEMO / "actg175_trial.json"),
                "--data",
                str(DEMO / "actg175_trial.csv"),
            ]
        )
        == 0
    )
    assert "ok:" in capsys.readouterr().out
    assert main(["dictionary", "check", str(CORPUS / "one_mistake_per_field.json")]) == 1
    out = capsys.readouterr().out
    assert out.count("problem ") >= 8 and "swap them" in out and "Traceback" not in out


def test_the_schema_ships_in_the_package_and_agrees_with_the_demo_files():
    s = schema()
    assert s["type"] == "object" and "columns" in s["properties"]
    for name in ("actg175_trial", "actg175_four_arms", "hospital_trial", "paper_trial"):
        assert schema_problems(json.loads((DEMO / f"{name}.json").read_text())) == []
    pytest.importorskip("jsonschema")
    bad = schema_problems({"columns": [{"role": "covariate"}], "outcome_bounds": [1]})
    assert {p.where for p in bad} >= {"schema: columns/0", "schema: outcome_bounds"}


def test_the_documented_examples_read_and_agree():
    import re

    doc = (Path(__file__).resolve().parents[3] / "docs" / "dictionary.md").read_text()
    blocks = re.findall(r"```(json|csv)\n(.*?)```", doc, flags=re.S)
    read = [
        read_dictionary(text)
        for kind, text in blocks
        if "treatment" in text and ("columns" in text or "fields" in text or "design" in text)
    ]
    assert len(read) == 3
    full_json, full_csv, frictionless = read
    from dataclasses import replace

    assert replace(full_json, dataset="", description="") == full_csv
    assert full_json.treated == frictionless.treated == "drug"
    assert full_json.propensity == pytest.approx(2 / 3, abs=1e-4)
    assert full_json.missing_values == ("-99",) and frictionless.missing_values == ("NA", "-99")
    snippet = next(
        text
        for kind, text in blocks
        if text.startswith("column,role,type,lower,upper,levels,treated")
    )
    assert read_dictionary(snippet, strict=False).treated == "drug"


def synthetic_file(d, n=60, odd_row=None):
    """A file with the dictionary's columns (values inside its public entries); the cells of
    ``odd_row`` are replaced by text no column can read (and its arm by an unknown label)."""
    rng = np.random.default_rng(11)
    arms = d.column(d.treatment).levels or (d.treated, "control")
    cols = {}
    for c in d.columns:
        if c.role == "treatment":
            cols[c.name] = [str(arms[i % 2]) for i in range(n)]
        elif c.type == "categorical" or (c.type == "binary" and c.levels):
            cols[c.name] = [str(c.levels[i % len(c.levels)]) for i in range(n)]
        elif c.type == "binary":
            cols[c.name] = [str(i % 2) for i in range(n)]
        elif c.role in ("covariate", "outcome", "propensity") and c.type == "numeric":
            lo, hi = c.bounds or (0.0, 1.0)
            cols[c.name] = [f"{v:.4f}" for v in rng.uniform(lo, hi, n)]
        else:
            cols[c.name] = [f"t{i}" for i in range(n)]
    if odd_row is not None:
        for name in cols:
            cols[name][odd_row] = "??"
    import csv
    import io

    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    w.writerows(zip(*cols.values()))
    return out.getvalue().encode()


@pytest.mark.parametrize(
    "name",
    [n for n, e in sorted(EXPECTED.items()) if isinstance(e, dict) and n != "missing_optional.csv"],
)
def test_neighbouring_files_through_each_dictionary_shape(name):
    """One row replaced by unreadable cells: n, arms, names, levels and every other row stay."""
    d = read_dictionary(CORPUS / name)
    kw = dict(dictionary=d, incomplete="keep", unknown_levels="baseline")
    a = read_trial(synthetic_file(d), **kw)
    b = read_trial(synthetic_file(d, odd_row=7), **kw)
    for field in ("n", "arms", "treated", "covariates", "categories", "treatment", "outcome"):
        assert getattr(a, field) == getattr(b, field), field
    other = np.arange(a.n) != 7
    np.testing.assert_array_equal(a.X[other], b.X[other])
    np.testing.assert_array_equal(a.A[other], b.A[other])
    np.testing.assert_array_equal(a.B[other], b.B[other])
    assert a.complete.all() and not b.complete[7] and b.complete[other].all()
