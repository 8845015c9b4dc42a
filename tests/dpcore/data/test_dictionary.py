"""The public data dictionary: both formats, round trips, errors, and nothing read off the data."""

import json
from pathlib import Path

import pytest

from dpcore import Dictionary, read_dictionary, read_trial
from dpcore.data.dictionary import DictionaryError

DEMO = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"
HEADER = "column,role,type,lower,upper,levels,unit\n"


@pytest.mark.parametrize("name", ["hospital_trial", "paper_trial"])
def test_demo_dictionaries_read_and_round_trip_through_json_and_csv(name):
    d = read_dictionary(DEMO / f"{name}.json")
    assert isinstance(d, Dictionary)
    raw = json.loads((DEMO / f"{name}.json").read_text())
    assert d.treatment == raw["treatment"] and d.outcome == raw["outcome"]
    assert d.outcome_bounds == tuple(raw["outcome_bounds"])
    assert d.larger_is_better is raw["larger_is_better"] and d.propensity == raw["propensity"]
    assert d.treated == raw["treated"]
    assert read_dictionary(d.to_json()) == d
    assert read_dictionary(d.to_csv()) == d
    assert read_dictionary(d.to_csv().encode()) == d
    assert read_dictionary(read_dictionary(d.to_csv()).to_json()) == d


def test_hospital_dictionary_gives_read_trial_its_arguments():
    d = read_dictionary((DEMO / "hospital_trial.json").read_bytes())
    kw = d.read_trial_kwargs()
    assert kw["categorical"] == {"site": ["A", "B", "C"]} and kw["treated"] == "drug"
    trial = read_trial(DEMO / "hospital_trial.csv", **kw)
    assert trial.covariates[:2] == ("site=B", "site=C")
    lower, upper = trial.feature_bounds(d.bounds)
    assert list(lower) == [0, 0, 40, 0, 0, 0] and list(upper) == [1, 1, 80, 1, 10, 1]


def test_csv_table_reads_design_rows_binary_columns_and_levels():
    text = (
        HEADER + "age,covariate,numeric,18,90,,years\n"
        "smoker,covariate,binary,,,,\n"
        "stage,covariate,categorical,,,I|II|III,\n"
        "arm,treatment,label,,,1|2,\n"
        "y,outcome,numeric,0,1.5,,mmol/l\n"
        "treated,design,,,,2,\n"
        "propensity,design,,,,0.6666666666666666,\n"
        "larger_is_better,design,,,,false,\n"
    )
    d = read_dictionary(text)
    assert d.bounds == {"age": (18.0, 90.0), "smoker": (0.0, 1.0)}
    assert d.categorical == {"stage": ["I", "II", "III"]}
    assert d.treated == 2 and d.column("arm").levels == (2, 1)
    assert d.propensity == 2 / 3 and d.larger_is_better is False
    assert d.outcome_bounds == (0.0, 1.5) and d.column("y").unit == "mmol/l"
    assert read_dictionary(d.to_csv()) == d and read_dictionary(d.to_json()) == d


def test_a_decimal_comma_reads_in_bounds_and_probabilities_of_both_formats():
    """A European spreadsheet writes 18,5 and 0,5: one comma and no dot is a decimal comma, in
    a CSV table's bounds and in a JSON dictionary's design probabilities alike."""
    text = (
        HEADER + 'bmi,covariate,numeric,"18,5",40,kg/m2\n'
        "arm,treatment,label,,,a|b,\n"
        'y,outcome,numeric,"0,5","2,5",\n'
        'propensity,design,,,,"0,6",\n'
    )
    d = read_dictionary(text)
    assert d.bounds["bmi"] == (18.5, 40.0)
    assert d.outcome_bounds == (0.5, 2.5) and d.propensity == 0.6
    spec = json.loads(d.to_json())
    spec["propensity"] = "0,75"
    assert read_dictionary(json.dumps(spec)).propensity == 0.75
    spec["propensity"] = "0,5,1"  # two commas: not a number
    with pytest.raises(DictionaryError, match="propensity must be a number between 0 and 1"):
        read_dictionary(json.dumps(spec))


def test_table_has_the_editor_columns():
    d = read_dictionary(DEMO / "hospital_trial.json")
    t = d.table()
    assert list(t.columns[:7]) == ["column", "role", "type", "lower", "upper", "levels", "unit"]
    assert t.set_index("column").loc["site", "levels"] == "A|B|C"
    assert t.set_index("column").loc["arm", "levels"] == "drug|placebo"


def test_a_dictionary_never_fills_bounds_or_levels_it_was_not_given():
    d = read_dictionary(
        HEADER + "age,covariate,numeric,,,,\narm,treatment,label,,,,\ny,outcome,numeric,,,,\n"
    )
    assert d.bounds == {} and d.outcome_bounds is None and d.column("arm").levels is None
    assert d.missing_bounds == ["age", "y"]
    filled = d.with_bounds(age=(0, 120), y=(0, 10))
    assert filled.bounds == {"age": (0.0, 120.0)} and filled.outcome_bounds == (0.0, 10.0)


@pytest.mark.parametrize(
    "text, match",
    [
        (HEADER + "age,covariate,numeric,18,,,\n", "one bound only"),
        (HEADER + "age,covariate,numeric,90,18,,\n", "lower < upper"),
        (HEADER + "age,covariate,numeric,eighteen,90,,\n", "not a number"),
        (HEADER + "age,covarite,numeric,18,90,,\n", "role 'covarite'"),
        (HEADER + "age,covariate,decimalish,18,90,,\n", "type 'decimalish'"),
        (HEADER + "site,covariate,categorical,,,,\n", "needs its public levels"),
        (HEADER + "site,covariate,categorical,,,A|A,\n", "distinct"),
        (HEADER + "a,treatment,label,,,x,\n", "at least two arms"),
        (HEADER + "a,treatment,label,,,x|y|z,\narm_probabilities,design,,,,0.5|0.5,\n", "3 arms"),
        (HEADER + "a,outcome,numeric,0,1,,\nb,outcome,numeric,0,1,,\n", "one column can"),
        (HEADER + "age,covariate,numeric,0,1,,\nage,covariate,numeric,0,1,,\n", "more than once"),
        (HEADER + "x,covariate,binary,0,2,,\n", "binary"),
        (HEADER + "propensity,design,,,,1.5,\n", "strictly between 0 and 1"),
        (HEADER + "seed,design,,,,3,\n", "design key 'seed'"),
        ("column,type\nage,numeric\n", "'role' are missing"),
        ("column,role,type,colour\n", "unknown dictionary column"),
        ("", "empty"),
        ('{"columns": [}', "not valid JSON"),
        ('{"dataset": "x"}', "'columns' list"),
        ('{"columns": [{"name": "a", "bound": [0, 1]}]}', "unknown keys"),
        (
            '{"outcome_bounds": [0, 1], "outcome": "y", "columns": [{"name": "y", "role": "outcome", '
            '"bounds": [0, 2]}]}',
            "differ",
        ),
        (
            '{"treated": "x", "columns": [{"name": "a", "role": "treatment", "type": "label", '
            '"levels": ["d", "p"]}]}',
            "not one of the levels",
        ),
        ('{"larger_is_better": "maybe", "columns": []}', "true or false"),
    ],
)
def test_malformed_dictionaries_get_a_message_naming_the_entry(text, match):
    with pytest.raises(DictionaryError, match=match):
        read_dictionary(text)


def test_bad_source_types_and_missing_files():
    with pytest.raises(TypeError, match="source must be"):
        read_dictionary(3.5)
    with pytest.raises(DictionaryError, match="cannot open"):
        read_dictionary("no_such_file.json")
    with pytest.raises(DictionaryError, match="no treatment"):
        read_dictionary(HEADER + "age,covariate,numeric,0,1,,\n").read_trial_kwargs()


def test_read_trial_takes_its_roles_and_levels_from_a_dictionary():
    d = read_dictionary(DEMO / "hospital_trial.json")
    by_dict = read_trial(DEMO / "hospital_trial.csv", dictionary=d, incomplete="keep")
    by_hand = read_trial(DEMO / "hospital_trial.csv", **d.read_trial_kwargs(), incomplete="keep")
    assert by_dict.covariates == by_hand.covariates and by_dict.arms == ("drug", "placebo")
    assert (by_dict.X == by_hand.X).all() and by_dict.n == 1200
    # An explicit argument wins over the dictionary's; the path form works too.
    only_age = read_trial(
        DEMO / "hospital_trial.csv", dictionary=DEMO / "hospital_trial.json", covariates=["age"]
    )
    assert only_age.covariates == ("age",)
    with pytest.raises(TypeError, match="treatment"):
        read_trial(DEMO / "hospital_trial.csv", outcome="days_in_hospital")


def test_table_schema_true_and_false_values_are_a_binary_columns_levels():
    """Frictionless ``trueValues``/``falseValues`` (``Y``/``N``): the column's two levels, false
    first, read as the file writes them; several values per side cannot be two levels."""
    import io

    from dpcore import read_trial

    fields = [
        {"name": "age", "type": "integer", "role": "covariate"},
        {"name": "smoker", "type": "boolean", "trueValues": ["Y"], "falseValues": ["N"]},
        {"name": "arm", "type": "string", "constraints": {"enum": ["drug", "placebo"]}},
        {"name": "y", "type": "number", "constraints": {"minimum": 0, "maximum": 10}},
    ]
    fields[1]["role"], fields[2]["role"], fields[3]["role"] = "covariate", "treatment", "outcome"
    schema = {"fields": fields, "treatment": "arm", "treated": "drug", "outcome": "y"}
    d = read_dictionary(schema)
    assert not d.problems and d.column("smoker").levels == ("N", "Y")
    csv = "age,smoker,arm,y\n" + "".join(
        f"{30 + i},{'Y' if i % 3 else 'N'},{'drug' if i % 2 else 'placebo'},{i % 7}\n"
        for i in range(40)
    )
    trial = read_trial(io.StringIO(csv), dictionary=d)
    smoker = trial.X[:, list(trial.covariates).index("smoker=Y")]
    assert smoker.tolist() == [float(i % 3 != 0) for i in range(40)]
    fields[1]["trueValues"] = ["Y", "yes"]
    problems = read_dictionary(schema, strict=False).problems
    assert any("one value read as false, one as true" in str(p) for p in problems)
