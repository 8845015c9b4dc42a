import codecs
import importlib.util
import io
import json
import pathlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcore import DPOWL
from dpcore.data.csv_io import preview_csv, read_table
from dpcore.data.errors import TrialDataError
from dpcore.data.labels import column_labels
from dpcore.data.roles import guess_columns
from dpcore.data.trial import (
    MIN_ROWS_PER_ARM,
    Trial,
    read_trial,
)

DEMO = pathlib.Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"


def rows(n=24, arms=("1", "0"), sep=",", header="age,arm,y", seed=0):
    """A valid small trial as CSV text: age, arm (alternating labels), outcome y."""
    rng = np.random.default_rng(seed)
    body = "".join(f"{40 + i}{sep}{arms[i % 2]}{sep}{rng.normal():.6f}\n" for i in range(n))
    return header.replace(",", sep) + "\n" + body


def read(text, **kw):
    kw.setdefault("treatment", "arm")
    kw.setdefault("outcome", "y")
    kw.setdefault("incomplete", "drop")  # these tests read what a dropped row leaves
    data = text.encode("utf-8") if isinstance(text, str) else text
    return read_trial(data, **kw)


def error(text, **kw):
    with pytest.raises(TrialDataError) as info:
        read(text, **kw)
    msg = str(info.value)
    assert "\n" not in msg and "<" not in msg  # one plain-text line
    return msg


# --------------------------------------------------------------------------------------------
# Correct results


def test_basic_file_gives_arrays_and_names():
    t = read(rows())
    assert isinstance(t, Trial)
    assert t.X.shape == (24, 1) and t.covariates == ("age",)
    np.testing.assert_array_equal(t.X[:, 0], 40 + np.arange(24))
    np.testing.assert_array_equal(t.A, np.where(np.arange(24) % 2 == 0, 1.0, -1.0))
    assert t.arms == (1, 0) and t.treated == 1 and t.n_dropped == 0 and t.propensity is None
    assert (t.treatment, t.outcome, t.delimiter, t.encoding) == ("arm", "y", ",", "utf-8")


def test_trial_is_immutable():
    t = read(rows())
    with pytest.raises(ValueError):
        t.X[0, 0] = 1.0
    with pytest.raises(AttributeError):
        t.n_dropped = 3


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_other_delimiters_are_sniffed(sep):
    t = read(rows(sep=sep))
    assert t.delimiter == sep
    np.testing.assert_array_equal(t.X, read(rows()).X)
    np.testing.assert_array_equal(t.B, read(rows()).B)


def test_semicolon_file_with_decimal_commas():
    text = "age;arm;y\n" + "".join(f"{40 + i},5;{i % 2};{i % 7},25\n" for i in range(30))
    t = read(text)
    assert t.decimal == ","
    assert t.X[0, 0] == 40.5 and t.B[1] == 1.25


def test_excel_sep_line_names_the_delimiter():
    t = read("sep=;\r\n" + rows(sep=";").replace("\n", "\r\n"))
    assert t.delimiter == ";" and t.n == 24
    np.testing.assert_array_equal(t.B, read(rows()).B)


def test_bom_latin1_and_utf16_files_read_alike():
    text = rows(arms=("médicament", "placebo"))
    base = read(text.encode("utf-8"), treated="médicament")
    for data, enc, declared in [
        (codecs.BOM_UTF8 + text.encode("utf-8"), "utf-8", "utf-8"),
        (text.encode("latin-1"), "cp1252", "cp1252"),  # declared, never guessed
        (text.encode("utf-16"), "utf-16", "utf-8"),  # the byte-order mark says so
    ]:
        t = read(data, treated="médicament", encoding=declared)
        assert t.encoding == enc and t.covariates == ("age",)
        assert t.arms == ("médicament", "placebo")
        np.testing.assert_array_equal(t.A, base.A)
        np.testing.assert_array_equal(t.B, base.B)


def test_quoted_fields_spaces_and_missing_words():
    text = ' age , "arm" ,y , site \n' + "".join(
        f' {40 + i} , "{"drug, 10 mg" if i % 2 else "placebo"}" ,{i % 5} , "x, y" \n'
        for i in range(30)
    )
    text += ' NA , placebo , 3 , z \n . ,"drug, 10 mg",2, z\n'
    t = read(text, treated="drug, 10 mg")
    assert t.arms == ("drug, 10 mg", "placebo")
    assert t.n == 30 and t.n_dropped == 2 and t.covariates == ("age",)


def test_missing_words_are_missing_in_a_label_column():
    lines = rows(n=40, arms=("drug", "placebo")).splitlines()
    lines[3] = "41, NA ,0.5"
    lines[4] = "42,n/a,0.5"
    t = read("\n".join(lines) + "\n")
    assert t.arms == ("drug", "placebo") and t.n_dropped == 2


def test_missing_values_are_dropped_and_counted():
    lines = rows(n=40).splitlines()
    lines[3] = "41,,0.5"  # missing arm
    lines[5] = ",1,0.5"  # missing covariate
    lines[7] = "44,0,NA"  # missing outcome
    t = read("\n".join(lines) + "\n")
    assert t.n == 37 and t.n_dropped == 3


def test_unused_columns_with_gaps_do_not_drop_rows():
    text = "age,arm,y,notes\n" + "".join(f"{i},{i % 2},{i % 3},\n" for i in range(30))
    t = read(text)
    assert t.n_dropped == 0 and t.covariates == (
        "age",
    )  # the empty column is not a default covariate


@pytest.mark.parametrize(
    "labels, treated, expected",
    [
        (("0", "1"), None, (1, 0)),
        (("-1", "1"), None, (1, -1)),
        (("1", "-1"), None, (1, -1)),
        (("TRUE", "FALSE"), None, (True, False)),
        (("placebo", "drug"), None, ("drug", "placebo")),
        (("Control", "Treated"), None, ("treated", "control")),  # as the reader keys them
        (("1", "2"), 2, (2, 1)),
        (("1", "2"), "1", (1, 2)),
        (("B", "A"), "A", ("a", "b")),
        (("0", "1"), 0, (0, 1)),
    ],
)
def test_treatment_codings(labels, treated, expected):
    t = read(rows(arms=labels), treated=treated)
    assert t.arms == expected and t.treated == expected[0]
    first_is_treated = str(labels[0]).lower() == str(expected[0]).lower()
    assert t.A[0] == (1.0 if first_is_treated else -1.0)
    assert set(np.unique(t.A)) == {-1.0, 1.0}


def test_per_row_propensity_column():
    text = "age,arm,y,ps\n" + "".join(f"{i},{i % 2},{i % 3},{0.3 + 0.01 * i}\n" for i in range(30))
    t = read(text, propensity="ps")
    np.testing.assert_allclose(t.propensity, 0.3 + 0.01 * np.arange(30))
    assert t.covariates == ("age",) and t.propensity_column == "ps"


def test_categorical_one_hot_drop_first_sorted_levels():
    text = "site,age,arm,y\n" + "".join(f"{'CAB'[i % 3]},{i},{i % 2},{i % 5}\n" for i in range(30))
    t = read(text, categorical=["site"])
    assert t.covariates == ("site=B", "site=C", "age")
    assert t.categories == {"site": ("A", "B", "C")}
    np.testing.assert_array_equal(t.X[:3, :2], [[0, 1], [0, 0], [1, 0]])
    # Public levels: the first one is the baseline, order as given.
    t2 = read(text, covariates=["age", "site"], categorical={"site": ["C", "A", "B"]})
    assert t2.covariates == ("age", "site=A", "site=B")
    np.testing.assert_array_equal(t2.X[:3, 1:], [[0, 0], [1, 0], [0, 1]])


def test_numeric_categorical_levels():
    text = "grade,arm,y\n" + "".join(f"{1 + i % 3},{i % 2},{i % 5}\n" for i in range(30))
    t = read(text, categorical={"grade": [1, 2, 3]})
    assert t.covariates == ("grade=2", "grade=3")


def test_feature_bounds_follow_the_columns():
    text = "site,age,arm,y\n" + "".join(
        f"{'AB'[i % 2]},{i},{i // 2 % 2},{i % 5}\n" for i in range(40)
    )
    t = read(text, categorical={"site": ["A", "B"]})
    lo, hi = t.feature_bounds({"age": (18, 90)})
    np.testing.assert_array_equal(lo, [0, 18])
    np.testing.assert_array_equal(hi, [1, 90])
    with pytest.raises(TrialDataError, match="'age'"):
        t.feature_bounds({})


@pytest.mark.parametrize("kind", ["path", "str", "bytes", "binary file", "text file", "upload"])
def test_source_kinds(tmp_path, kind):
    text = rows()
    f = tmp_path / "trial.csv"
    f.write_text(text, encoding="utf-8")
    source = {
        "path": f,
        "str": str(f),
        "bytes": text.encode(),
        "binary file": open(f, "rb"),
        "text file": open(f, encoding="utf-8"),
        "upload": io.BytesIO(text.encode()),
    }[kind]
    if kind == "upload":
        source.read()  # an upload already read once still gives the whole file
    t = read_trial(source, treatment="arm", outcome="y")
    np.testing.assert_array_equal(t.B, read(text).B)


# --------------------------------------------------------------------------------------------
# Errors a user can act on


def test_unknown_column_lists_the_columns():
    msg = error(rows(), outcome="days")
    assert "no column named 'days'" in msg and "'age', 'arm', 'y'" in msg


def test_headerless_file_is_pointed_out():
    msg = error("\n".join(rows().splitlines()[1:]) + "\n")
    assert "add a header row" in msg


def test_unknown_delimiter_gives_one_column_hint():
    msg = error(rows().replace(",", ":"))
    assert "single column" in msg


def test_a_cell_that_is_not_a_number_is_missing_and_a_text_column_is_refused():
    text = rows().replace("\n45,", "\nforty-five,", 1)
    t = read(text, covariates=["age"])
    assert t.n == 23 and t.n_dropped == 1 and 6 not in t.rows
    kept = read(text, covariates=["age"], incomplete="keep")
    assert kept.n == 24 and not kept.complete[5] and kept.complete.sum() == 23
    text = "age,arm,y\n" + "".join(f"old,{i % 2},{i}\n" for i in range(24))
    msg = error(text, covariates=["age"])
    assert "covariate 'age' is not numeric" in msg and "'old'" in msg and "data row 1" in msg
    assert "categorical" in msg


def test_string_column_is_not_a_default_covariate_but_named_is_an_error():
    text = "site,age,arm,y\n" + "".join(f"{'AB'[i % 2]},{i},{i % 2},{i % 5}\n" for i in range(30))
    assert read(text).covariates == ("age",)
    assert "'site' is not numeric" in error(text, covariates=["site", "age"])


def test_non_numeric_outcome():
    assert read(rows().replace("\n41,0,", "\n41,0,good", 1)).n_dropped == 1
    msg = error("age,arm,y\n" + "".join(f"{i},{i % 2},good\n" for i in range(24)))
    assert "outcome 'y' is not numeric" in msg


def test_more_than_two_arms_says_how_to_pick_two():
    text = "age,arm,y\n" + "".join(f"{i},{'ABC'[i % 3]},{i % 4}\n" for i in range(45))
    msg = error(text)
    assert "3 arms ('a', 'b', 'c')" in msg and "filter the file" in msg


def test_one_arm_only():
    assert "one arm only ('1')" in error(rows(arms=("1", "1")))


def test_too_few_rows_per_arm():
    assert MIN_ROWS_PER_ARM == 10
    read(rows(n=20))
    msg = error(rows(n=19))
    assert "arm '0' has 9 rows" in msg and "at least 10" in msg
    lines = rows(n=22).splitlines()
    lines[2] = "41,0,"
    lines[4] = "43,0,"
    assert "after dropping 2 rows with missing values" in error("\n".join(lines))


def test_constant_outcome():
    text = "age,arm,y\n" + "".join(f"{i},{i % 2},3.5\n" for i in range(30))
    assert "same value in every row" in error(text)


@pytest.mark.parametrize(
    "value, hint", [("0", ""), ("1", ""), ("1.2", ""), ("-0.1", ""), ("50", "percentage")]
)
def test_propensity_outside_zero_one(value, hint):
    text = "age,arm,y,ps\n" + "".join(
        f"{i},{i % 2},{i % 3},{value if i == 7 else 0.5}\n" for i in range(30)
    )
    msg = error(text, propensity="ps")
    assert "strictly between 0 and 1" in msg and "data row 8" in msg and hint in msg


@pytest.mark.parametrize("data", [b"", b"   \n\n ", b"\xef\xbb\xbf"])
def test_empty_file(data):
    assert "empty" in error(data)


def test_header_only():
    assert "header ('age', 'arm', 'y') but no data rows" in error("age,arm,y\n")


@pytest.mark.parametrize(
    "data, what",
    [
        (b"PK\x03\x04" + bytes(200), "Excel .xlsx"),
        (b"\xd0\xcf\x11\xe0" + bytes(200), ".xls"),
        (b"%PDF-1.7\n" + bytes(200), "PDF"),
        (bytes(range(256)) * 4, "binary data"),
    ],
)
def test_not_a_csv(data, what):
    msg = error(data)
    assert what in msg and "CSV" in msg


def test_duplicate_column_names():
    msg = error(rows(header="age,arm,y").replace("age,arm,y", "y,arm,y "))
    assert "names 'y' more than once" in msg


def test_all_rows_dropped_names_the_column():
    text = "age,arm,y,bmi\n" + "".join(f"{i},{i % 2},{i % 3},NA\n" for i in range(30))
    msg = error(text, covariates=["age", "bmi"])
    assert "every one of the 30 rows" in msg and "'bmi'" in msg


def test_labels_that_need_a_treated_choice():
    assert "say which one is the treated arm" in error(rows(arms=("1", "2")))
    assert "say which one is the treated arm" in error(rows(arms=("A", "B")))
    msg = error(rows(arms=("drug", "placebo")), treated="active")
    assert "treated='active' is not an arm" in msg and "'drug'" in msg


def test_column_in_two_roles():
    assert "both as treatment and as outcome" in error(rows(), outcome="arm")
    assert "cannot also be a covariate" in error(rows(), covariates=["age", "y"])
    text = "site,age,arm,y\n" + "".join(f"{'AB'[i % 2]},{i},{i % 2},{i % 5}\n" for i in range(30))
    assert "not among the covariates" in error(text, covariates=["age"], categorical=["site"])


def test_infinite_covariate_is_a_missing_cell():
    text = rows().replace("\n45,", "\ninf,", 1)
    t = read(text)
    assert t.n_dropped == 1 and 6 not in t.rows


def test_ragged_rows():
    lines = rows(n=30).splitlines()
    lines[4] += ",7,8"
    assert "line 5 has 5 fields but the header names 3" in error("\n".join(lines))
    big = rows(n=8000)  # past the 64 KB sample
    lines = big.splitlines()
    lines[7000] += ",7"
    msg = error("\n".join(lines))
    assert "line 7001 has 4 fields but the header names 3" in msg


def test_category_outside_declared_levels():
    text = "site,age,arm,y\n" + "".join(f"{'ABD'[i % 3]},{i},{i % 2},{i % 5}\n" for i in range(30))
    msg = error(text, categorical={"site": ["A", "B", "C"]})
    assert "holds 'D' in data row 3" in msg and "'A', 'B', 'C'" in msg


def test_no_covariates():
    assert "no covariates" in error("arm,y\n" + "".join(f"{i % 2},{i}\n" for i in range(30)))


def test_long_user_values_are_cut_in_messages():
    text = "site,arm,y\n" + "".join(f"{'A' if i else 'x' * 500},{i % 2},{i}\n" for i in range(24))
    msg = error(text, categorical={"site": ["A", "B"]})
    assert "x" * 40 + "…" in msg and "x" * 41 not in msg


def test_bad_arguments_are_type_errors(tmp_path):
    with pytest.raises(TypeError, match="io.StringIO"):
        read_trial(rows(), treatment="arm", outcome="y")
    with pytest.raises(TypeError, match="treatment"):
        read_trial(rows().encode(), treatment=3, outcome="y")
    with pytest.raises(TypeError, match="source"):
        read_trial(42, treatment="arm", outcome="y")
    with pytest.raises(TrialDataError, match="cannot open"):
        read_trial(tmp_path / "missing.csv", treatment="arm", outcome="y")


# --------------------------------------------------------------------------------------------
# Property tests


@st.composite
def written_trials(draw):
    """A valid frame and one way of writing it: delimiter, encoding, BOM, spaces, quotes, EOL."""
    n = draw(st.integers(20, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    sep = draw(st.sampled_from([",", ";", "\t", "|"]))
    enc = draw(st.sampled_from(["utf-8", "utf-8-sig", "cp1252", "utf-16"]))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    labels, treated = draw(
        st.sampled_from(
            [
                (("1", "0"), None),
                (("2", "1"), 2),
                (("drug", "placebo"), None),
                (("médicament", "contrôle"), "médicament"),
                (("1", "-1"), None),
            ]
        )
    )
    comma_decimal = sep != "," and draw(st.booleans())
    pad = draw(st.lists(st.sampled_from(["", " ", "  "]), min_size=4, max_size=4))
    quote = draw(st.booleans())
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 2)) * 10, 4)
    arm = rng.permutation(np.arange(n) % 2)
    y = np.round(rng.normal(size=n), 6)

    def cell(v, k):
        s = str(v).replace(".", ",") if comma_decimal and not isinstance(v, str) else str(v)
        if isinstance(v, str) and quote:
            s = f'"{s}"'
        return pad[k % 2] + s + pad[2 + k % 2]

    header = sep.join(cell(h, k) for k, h in enumerate(["x1", "arm", "x2", "y"]))
    body = [
        sep.join([cell(X[i, 0], 0), cell(labels[arm[i]], 1), cell(X[i, 1], 2), cell(y[i], 3)])
        for i in range(n)
    ]
    data = (eol.join([header, *body]) + eol).encode(enc)
    return (data, enc), treated, X, np.where(arm == 0, 1.0, -1.0), y


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(written_trials())
def test_any_way_of_writing_a_frame_reads_back_the_same(case):
    data, treated, X, A, y = case
    data, enc = data
    t = read_trial(data, treatment="arm", outcome="y", treated=treated, encoding=enc)
    np.testing.assert_allclose(t.X, X, rtol=1e-14)
    np.testing.assert_array_equal(t.A, A)
    np.testing.assert_allclose(t.B, y, rtol=1e-14)
    assert t.covariates == ("x1", "x2") and t.n_dropped == 0


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=3000))
def test_junk_bytes_only_raise_trial_data_errors(data):
    with pytest.raises(TrialDataError):
        read_trial(data, treatment="arm", outcome="y")


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=',;\t|\n\r" .-01aemrxyNA\ufeff', max_size=400))
def test_csv_like_junk_reads_or_raises_trial_data_errors(text):
    try:
        read_trial(text.encode(), treatment="arm", outcome="y")
    except TrialDataError as exc:
        assert "\n" not in str(exc)


# --------------------------------------------------------------------------------------------
# Helpers for a mapping screen


@pytest.mark.parametrize(
    "columns, expected",
    [
        (
            ["x1", "x2", "x3", "x4", "treatment", "outcome"],
            {
                "treatment": "treatment",
                "outcome": "outcome",
                "propensity": None,
                "covariates": ["x1", "x2", "x3", "x4"],
            },
        ),
        (
            ["patient_id", "site", "age", "arm", "days_in_hospital"],
            {
                "treatment": "arm",
                "outcome": "days_in_hospital",
                "propensity": None,
                "covariates": ["site", "age"],
            },
        ),
        (
            ["Unnamed: 0", "A", "Y", "PS", "bmi"],
            {"treatment": "A", "outcome": "Y", "propensity": "PS", "covariates": ["bmi"]},
        ),
        (
            ["trt_group", "p_treat", "response score", "Age (years)"],
            {
                "treatment": "trt_group",
                "outcome": "response score",
                "propensity": "p_treat",
                "covariates": ["Age (years)"],
            },
        ),
        (
            ["a1", "a2"],
            {"treatment": None, "outcome": None, "propensity": None, "covariates": ["a1", "a2"]},
        ),
    ],
)
def test_guess_columns(columns, expected):
    assert guess_columns(columns) == expected


def test_preview_reads_the_head_without_converting_or_consuming():
    text = "arm;y ;site\n" + "".join(f"drug;{i},5; B \n" for i in range(20000))
    f = io.BytesIO(text.encode())
    p = preview_csv(f, n_rows=3)
    assert p.columns == ("arm", "y", "site") and p.delimiter == ";" and p.decimal == ","
    assert p.rows == (("drug", "0,5", "B"), ("drug", "1,5", "B"), ("drug", "2,5", "B"))
    assert f.tell() == 0
    with pytest.raises(TrialDataError, match="empty"):
        preview_csv(b"")


# --------------------------------------------------------------------------------------------
# Demo data


def demo(name, **override):
    d = json.loads((DEMO / f"{name}.json").read_text(encoding="utf-8"))
    cols = {c["name"]: c for c in d["columns"]}
    kw = dict(
        treatment=d["treatment"],
        outcome=d["outcome"],
        treated=d["treated"],
        covariates=[n for n, c in cols.items() if c["role"] == "covariate"],
        categorical={n: c["levels"] for n, c in cols.items() if c["type"] == "categorical"},
    )
    kw.update(override)
    kw.setdefault("incomplete", "drop")
    return d, cols, read_trial(DEMO / f"{name}.csv", **kw)


def contrast(name, t):
    """The design's f(x) on the trial's covariates (truth, known for demo data only)."""
    X = dict(zip(t.covariates, t.X.T))
    if name == "paper_trial":
        x = [X["x1"], X["x2"], X["x3"], X["x4"]]
    else:
        x = [(X["age"] - 40) / 40, X["biomarker"], X["severity"] / 10, X["frailty"]]
    return 1 + x[0] + x[1] - 1.8 * x[2] - 2.2 * x[3]


def fitted_agreement(name, **override):
    d, cols, t = demo(name, **override)
    bounds = t.feature_bounds({n: c["bounds"] for n, c in cols.items() if "bounds" in c})
    rule = DPOWL(
        epsilon=np.inf,
        feature_bounds=bounds,
        outcome_bounds=d["outcome_bounds"],
        larger_is_better=d["larger_is_better"],
    )
    rule.fit(t.X, t.A, t.B, propensity=d["propensity"])
    return np.mean(rule.predict(t.X) == np.where(contrast(name, t) > 0, 1, -1))


@pytest.mark.parametrize("name", ["paper_trial", "hospital_trial"])
def test_demo_files_match_their_dictionaries(name):
    d, cols, t = demo(name)
    header = (DEMO / f"{name}.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header == list(cols)
    assert (DEMO / f"{name}.csv").stat().st_size < 200_000
    assert set(t.arms) == set(cols[d["treatment"]]["levels"]) and t.treated == d["treated"]
    for n, c in cols.items():
        if "bounds" in c and c["role"] == "covariate":
            x = t.X[:, t.covariates.index(n)]
            assert c["bounds"][0] <= x.min() and x.max() <= c["bounds"][1]
    lo, hi = d["outcome_bounds"]
    assert np.mean((t.B >= lo) & (t.B <= hi)) > 0.99
    # The randomization share is what the dictionary says, within 3 standard errors.
    p = d["propensity"]
    assert abs(np.mean(t.A > 0) - p) < 3 * np.sqrt(p * (1 - p) / t.n)


def test_hospital_demo_has_the_awkward_parts():
    d, cols, t = demo("hospital_trial")
    assert t.arms == ("drug", "placebo") and d["larger_is_better"] is False
    assert t.covariates[:2] == ("site=B", "site=C")
    assert 0.01 < t.n_dropped / (t.n + t.n_dropped) < 0.03


@pytest.mark.parametrize("name", ["paper_trial", "hospital_trial"])
def test_demo_round_trip_fits_the_true_rule(name):
    assert fitted_agreement(name) > 0.75


def test_demo_generator_is_deterministic(tmp_path):
    spec = importlib.util.spec_from_file_location("make_demo_data", DEMO / "make_demo_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write(tmp_path)
    for name in (
        "paper_trial.csv",
        "paper_trial.json",
        "hospital_trial.csv",
        "hospital_trial.json",
    ):
        assert (tmp_path / name).read_bytes() == (DEMO / name).read_bytes(), name


# --------------------------------------------------------------------------------------------
# The checks above can fail: deliberate breaks are caught


def test_swapping_the_treated_arm_is_caught():
    assert fitted_agreement("paper_trial", treated=0) < 0.3
    assert fitted_agreement("hospital_trial", treated="placebo") < 0.6


BREAKS = {
    "treated default flipped": (
        "columns.default_treated",
        lambda labels: sorted(labels, key=str)[0],
        lambda: test_treatment_codings(("0", "1"), None, (1, 0)),
    ),
    "no delimiter sniffing": (
        "csv_lines.header_delimiter",
        lambda line: ",",
        lambda: test_other_delimiters_are_sniffed(";"),
    ),
    "baseline level not sorted": (
        "columns.level_order",
        lambda v: (0, 0, "") if v == "B" else (1, 0, str(v)),
        test_categorical_one_hot_drop_first_sorted_levels,
    ),
    "other minimum per arm": ("trial.MIN_ROWS_PER_ARM", 20, test_too_few_rows_per_arm),
    "NA words not missing": (  # every module that imported the words by name
        ("cells.NA_TOKENS", "columns.NA_TOKENS", "csv_columns.NA_TOKENS"),
        frozenset([""]),
        test_missing_words_are_missing_in_a_label_column,
    ),
    "cells not stripped": (
        "csv_lines.normalise_cell",
        lambda v: v or None,
        test_quoted_fields_spaces_and_missing_words,
    ),
}


@pytest.mark.parametrize("broken", list(BREAKS))
def test_a_broken_reader_fails_the_checks(monkeypatch, broken):
    import importlib
    import sys

    target, replacement, check = BREAKS[broken]
    targets = (target,) if isinstance(target, str) else target
    check()  # passes on the real reader
    for t in targets:
        module, name = t.split(".")
        monkeypatch.setattr(importlib.import_module(f"dpcore.data.{module}"), name, replacement)
    if len(targets) > 1:  # a value imported by name: the break reaches every module holding it
        kept = [
            m
            for m, held in list(sys.modules.items())
            if m.startswith("dpcore.") and getattr(held, name, replacement) is not replacement
        ]
        assert not kept, f"{name} is also held by {kept}"
    with pytest.raises((AssertionError, TrialDataError)):
        check()


def test_rows_join_the_trial_back_to_the_file():
    text = rows(24).replace("\n41,", "\n,", 1)  # data row 2 loses its age
    trial = read(text)
    assert trial.n_dropped == 1 and trial.rows.tolist() == [1] + list(range(3, 25))
    table = read_table(text.encode())
    np.testing.assert_array_equal(table["age"].to_numpy()[trial.rows - 1], trial.X[:, 0])


def test_column_labels_read_like_read_trial():
    assert column_labels(b"arm;y\n drug ;1\nplacebo;2\nNA;3\n", "arm") == ("drug", "placebo")
    assert column_labels(b"arm;y\nPLACEBO;1\nplacebo;2\nDrug;3\n", "arm") == ("drug", "placebo")


def test_arm_labels_without_a_list_do_not_depend_on_a_rows_spelling():
    """Neighbouring files (the first patient's arm written PLACEBO or placebo) publish the same
    labels: each spelled as the reader normalises it, never as some row spells it."""
    base = [f"{i},{'drug' if i % 2 else 'placebo'},{i % 5}" for i in range(40)]
    loud = ["age,arm,y", "0,PLACEBO,0", *base[1:]]
    quiet = ["age,arm,y", *base]
    a, b = (read("\n".join(lines) + "\n") for lines in (loud, quiet))
    assert a.arms == b.arms == ("drug", "placebo") and a.treated == b.treated == "drug"
    assert column_labels(rows(24).encode(), "arm") == (0, 1)
    with pytest.raises(TrialDataError, match="columns are 'age', 'arm', 'y'"):
        column_labels(rows(24).encode(), "group")


# --------------------------------------------------------------------------------------------
# Public n and public levels (privacy rule 8)


def _with_site(change=None, n=30):
    lines = ["age,site,arm,y"] + [f"{40 + i},{'ABC'[i % 3]},{i % 2},{i % 7}" for i in range(n)]
    if change:
        lines[4] = change
    return "\n".join(lines) + "\n"


def test_keep_incomplete_rows_gives_the_files_row_count():
    t = read(
        _with_site("NA,B,1,3"),
        covariates=["age", "site"],
        categorical={"site": ["A", "B", "C"]},
        incomplete="keep",
        unknown_levels="baseline",
    )
    assert t.n == 30 and t.n_dropped == 0 and t.n_incomplete == 1
    assert not t.complete[3] and t.complete.sum() == 29 and not t.covariates_complete[3]
    assert t.rows.tolist() == list(range(1, 31))
    np.testing.assert_array_equal(t.outcomes_for_fit((0, 10))[3], 0.0)
    np.testing.assert_array_equal(t.outcomes_for_fit((0, 10), larger_is_better=False)[3], 10.0)
    np.testing.assert_array_equal(t.outcomes_for_fit((0, 10))[t.complete], t.B[t.complete])
    dropped = read(
        _with_site("NA,B,1,3"), covariates=["age", "site"], categorical={"site": ["A", "B", "C"]}
    )
    assert dropped.n == 29 and dropped.n_dropped == 1 and dropped.complete is None


def test_a_missing_outcome_keeps_the_rows_covariates():
    t = read(
        _with_site("43,B,1,"),
        covariates=["age", "site"],
        categorical={"site": ["A", "B", "C"]},
        incomplete="keep",
    )
    assert not t.complete[3] and t.covariates_complete[3] and t.X[3].tolist() == [43, 1, 0]


def test_a_value_outside_the_public_levels_reads_as_the_baseline():
    kw = dict(covariates=["age", "site"], categorical={"site": ["A", "B", "C"]})
    t = read(_with_site("43,RARE,1,3"), unknown_levels="baseline", **kw)
    assert t.covariates == ("age", "site=B", "site=C") and t.X[3].tolist() == [43, 0, 0]
    assert "not one of its levels" in error(_with_site("43,RARE,1,3"), **kw)


def test_bad_modes_are_refused():
    with pytest.raises(ValueError, match="incomplete"):
        read(rows(), incomplete="impute")
    with pytest.raises(ValueError, match="unknown_levels"):
        read(rows(), unknown_levels="other")
