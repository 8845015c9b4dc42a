"""Neighbouring files (one row replaced) read the same everywhere else: parsing per cell.

docs/architecture.md, privacy rules 8 and 10: two CSV files that differ in one row must give
outputs whose every published field (n, arm labels, treated label, covariate names, levels,
the encoding of every other row) is identical; only the changed row's own values may move.
Each test here failed on the reader that decided encoding, types and quoting from the whole
file (issue 30).
"""

import json

import numpy as np
import pytest

from dpcore.data import TrialDataError, read_trial
from tests.dpcore.cli.commands import fit_command

N = 60


def trial_csv(arm=None, site=None, note=None, *, n=N):
    """A small trial: age, site, note (unused text), arm, y; overrides per row index."""
    rng = np.random.default_rng(1)
    lines = ["age,site,note,arm,y"]
    for i in range(n):
        a = (arm or {}).get(i, "True" if i % 2 else "False")
        s = (site or {}).get(i, f"0{1 + i % 3}")
        t = (note or {}).get(i, "ok")
        lines.append(f"{30 + i % 40},{s},{t},{a},{rng.normal():.5f}")
    return "\n".join(lines) + "\n"


DICT = {
    "treatment": "arm",
    "treated": "True",
    "outcome": "y",
    "outcome_bounds": [-5, 5],
    "larger_is_better": True,
    "propensity": 0.5,
    "columns": [
        {"name": "age", "role": "covariate", "type": "numeric", "bounds": [18, 90]},
        {"name": "site", "role": "covariate", "type": "categorical", "levels": ["01", "02", "03"]},
        {"name": "note", "role": "ignore", "type": "label"},
        {"name": "arm", "role": "treatment", "type": "label"},
        {"name": "y", "role": "outcome", "type": "numeric"},
    ],
}


def read(text, **kw):
    data = text.encode("latin-1") if kw.pop("latin1", False) else text.encode("utf-8")
    kw.setdefault("dictionary", DICT)
    return read_trial(data, incomplete="keep", unknown_levels="baseline", **kw)


def published(t):
    """Every field of a trial that a release publishes or is shaped by (no row values)."""
    return {
        "n": t.n,
        "arms": t.arms,
        "treated": t.treated,
        "covariates": t.covariates,
        "categories": {k: tuple(v) for k, v in t.categories.items()},
        "treatment": t.treatment,
        "outcome": t.outcome,
        "encoding": t.encoding,
        "delimiter": t.delimiter,
        "decimal": t.decimal,
    }


def assert_neighbours(t1, t2, row):
    """Identical published fields; every row but ``row`` (0-based) encoded identically."""
    assert published(t1) == published(t2)
    other = np.arange(t1.n) != row
    np.testing.assert_array_equal(t1.X[other], t2.X[other])
    np.testing.assert_array_equal(t1.A[other], t2.A[other])
    np.testing.assert_array_equal(t1.B[other], t2.B[other])
    np.testing.assert_array_equal(t1.complete[other], t2.complete[other])


# --------------------------------------------------------------------------------------------
# The four breaks, through read_trial


def test_true_false_arm_with_one_missing_value():
    base, gap = read(trial_csv()), read(trial_csv(arm={7: ""}))
    # labels read per cell: "True" is True in both files (it was 1 in one of them)
    assert base.treated is True and base.arms == (True, False)
    assert_neighbours(base, gap, 7)
    assert not gap.complete[7] and gap.complete.sum() == N - 1
    # without a dictionary the labels are read per cell, so one blank does not turn them to 1/0
    plain = dict(treatment="arm", outcome="y", covariates=["age"], incomplete="keep")
    a = read_trial(trial_csv().encode(), **plain)
    b = read_trial(trial_csv(arm={7: ""}).encode(), **plain)
    assert a.arms == b.arms == (True, False)


def test_dictionary_naming_treated_true_is_accepted_in_any_case():
    for treated in ("True", "TRUE", "true", True):
        t = read(trial_csv(arm={3: ""}), dictionary={**DICT, "treated": treated})
        assert t.A[1] == 1.0 and t.A[0] == -1.0
    levels = {
        **DICT,
        "columns": [
            c if c["name"] != "arm" else {**c, "levels": ["False", "True"]} for c in DICT["columns"]
        ],
    }
    t = read(trial_csv(arm={3: ""}), dictionary=levels)
    assert t.arms == ("True", "False") and t.A[1] == 1.0


def test_site_codes_with_one_x():
    base, odd = read(trial_csv()), read(trial_csv(site={11: "x"}))
    assert base.covariates == ("age", "site=02", "site=03")
    assert_neighbours(base, odd, 11)
    assert odd.X[11, 1:].tolist() == [0.0, 0.0]  # the baseline level, this row only
    # "1", "01" and "1.0" are one level: compared by value
    assert read(trial_csv(site={4: "1.0", 5: " 2 "})).X[4:6, 1:].tolist() == [[0, 0], [1, 0]]
    # numeric dictionary levels read the same cells
    num = {
        **DICT,
        "columns": [
            c if c["name"] != "site" else {**c, "levels": [1, 2, 3]} for c in DICT["columns"]
        ],
    }
    np.testing.assert_array_equal(read(trial_csv(site={11: "x"}), dictionary=num).X, odd.X)


@pytest.mark.parametrize("row", [0, 29, N - 1])
def test_latin1_byte_in_an_unused_column_is_refused_wherever_it_is(row):
    text = trial_csv(note={row: "café"})
    with pytest.raises(TrialDataError, match=rf"not valid utf-8: byte 0xE9 at line {row + 2}"):
        read(text, latin1=True)
    # declared, the file reads, and reads exactly as its neighbour without the accent
    assert_neighbours(
        read(trial_csv(), latin1=True, encoding="latin-1"),
        read(text, latin1=True, encoding="latin-1"),
        row,
    )
    assert_neighbours(read(trial_csv()), read(text), row)  # the same note in UTF-8


@pytest.mark.parametrize("row", [0, 29, N - 1])
def test_stray_quote_in_an_unused_column_is_refused_wherever_it_is(row):
    text = trial_csv(note={row: '"unclosed'})
    with pytest.raises(TrialDataError, match=rf"line {row + 2}: a quoted field is not closed"):
        read(text)
    # a properly quoted field with the delimiter inside changes nothing else
    assert_neighbours(read(trial_csv()), read(trial_csv(note={row: '"a, b"'})), row)


def test_n_is_the_physical_line_count():
    from dpcore.data.csv_io import read_cells

    levels = {
        **DICT,
        "columns": [
            c if c["name"] != "arm" else {**c, "levels": ["True", "False"]} for c in DICT["columns"]
        ],
    }
    for text in (
        trial_csv(),
        trial_csv(note={5: '"x, y"'}),
        trial_csv(arm={5: "maybe"}),
        trial_csv(site={5: "x"}, arm={6: ""}),
    ):
        assert read(text, dictionary=levels).n == N == read_cells(text.encode()).n
    # an arm outside the dictionary's two is a missing value of that row only
    assert_neighbours(
        read(trial_csv(), dictionary=levels),
        read(trial_csv(arm={5: "maybe"}), dictionary=levels),
        5,
    )


def test_a_cell_that_is_not_a_number_does_not_change_its_column():
    base, odd = read(trial_csv()), read(trial_csv(note={}, site={}).replace("\n31,", "\nold,", 1))
    assert_neighbours(base, odd, 1)
    assert not odd.complete[1]


@pytest.mark.parametrize("sep", [",", ";"])
def test_numbers_are_the_same_bits_whichever_reader_reads_their_column(sep):
    """pandas' C reader (a column of numbers) and the per-cell reader (a column with one
    text cell) give every other cell the same float, to the last bit."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=500) * 10.0 ** rng.integers(-20, 20, 500)
    cells = [repr(float(v)) for v in x]
    if sep == ";":
        cells = [c.replace(".", ",") for c in cells]

    def text(odd):
        rows = [f"{c}{sep}{i % 2}{sep}{i % 5}" for i, c in enumerate(cells)]
        if odd:
            rows[100] = f"x{sep}1{sep}3"
        return ("age" + sep + "arm" + sep + "y\n" + "\n".join(rows) + "\n").encode()

    kw = dict(treatment="arm", outcome="y", covariates=["age"], incomplete="keep")
    a, b = read_trial(text(False), **kw), read_trial(text(True), **kw)
    other = np.arange(500) != 100
    assert (a.X[other, 0] == b.X[other, 0]).all() and (a.X[other, 0] == x[other]).all()
    assert not b.complete[100]


def test_normalised_cells_ignore_how_the_file_was_written():
    from dpcore.data.csv_io import normalised_cells

    text = trial_csv()
    variants = [
        text.encode("utf-8"),
        b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"),
        text.replace(",", ";").encode("utf-16"),
        text.replace(",", "\t").replace("ok", '"ok"').encode("utf-8"),
    ]
    cells = [normalised_cells(v, ["age", "arm", "y"]) for v in variants]
    assert all(c == cells[0] for c in cells)
    assert normalised_cells(b"a;b\n01;x\n1,0; NA \n") == {"a": ["1", "1"], "b": ["x", ""]}


# --------------------------------------------------------------------------------------------
# The same through the command line


def dpcore_fit(tmp_path, capsys, name, text, *, encoding="utf-8"):
    """``dpcore fit`` as a user runs it, in this process (``main`` is the console script).

    Each file gets a ledger of its own: in one ledger a neighbour shares rows with the file
    before it and is rightly charged that file's release too, which the rule file states."""
    from dpcore.cli import main

    data, dictionary = tmp_path / f"{name}.csv", tmp_path / "dict.json"
    data.write_bytes(text.encode(encoding))
    dictionary.write_text(json.dumps(DICT))
    out = tmp_path / f"{name}.rule.json"
    code = main(fit_command(data, dictionary, tmp_path / f"{name}.ledger.sqlite", out))
    err = capsys.readouterr().err
    return code, err, (json.loads(out.read_text()) if out.exists() else None)


def test_cli_neighbours_publish_the_same_fields(tmp_path, capsys):
    noisy = {"intercept", "coef", "created", "time", "timestamp"}
    files = {"base": trial_csv(), "gap": trial_csv(arm={7: ""}), "x": trial_csv(site={11: "x"})}
    rules = {}
    for name, text in files.items():
        code, err, rule = dpcore_fit(tmp_path, capsys, name, text)
        assert code == 0, err
        rules[name] = {k: v for k, v in rule.items() if k not in noisy}
    assert rules["base"] == rules["gap"] == rules["x"]
    assert "'True'" in rules["base"]["rule"] and rules["base"]["n"] == N
    code, err, rule = dpcore_fit(tmp_path, capsys, "quote", trial_csv(note={29: '"unclosed'}))
    assert code == 1 and rule is None and "line 31" in err and "Traceback" not in err
    code, err, rule = dpcore_fit(
        tmp_path, capsys, "latin", trial_csv(note={29: "café"}), encoding="latin-1"
    )
    assert code == 1 and rule is None and "not valid utf-8" in err


FORMS = [
    "1",
    "01",
    "+1",
    "-0",
    "1.",
    ".5",
    "5.",
    "1e5",
    "1E5",
    "1e+05",
    "1.5e-3",
    "1e500",
    "inf",
    "-inf",
    "Infinity",
    "1_000",
    "0x10",
    "1 ",
    "1e",
    "e5",
    "--1",
    "1.2.3",
    "1d5",
    "NaN",
    "nan",
    "NA",
    "9999999999999999999999",
    "-9223372036854775809",
    "1.0e-400",
    "+.5",
    "-.5e1",
    "00.5",
    "3,5",
    "yes",
]


@pytest.mark.parametrize("sep", [",", ";"])
def test_the_chunked_reader_reads_each_form_as_the_per_cell_reader(sep):
    """A column pandas reads as numbers gives each cell what parse_numbers gives its text."""
    from dpcore.data.csv_io import parse_numbers, read_cells

    forms = [f for f in FORMS if sep != "," or "," not in f]
    for form in forms:
        data = f"a{sep}b\n{form}{sep}1\n2{sep}1\n".encode()
        fast = read_cells(data, numeric={"a": False})
        text = read_cells(data)
        want = parse_numbers(text.cells["a"], text.decimal)
        want = np.where(np.isfinite(want), want, np.nan)
        np.testing.assert_array_equal(fast.numbers["a"], want, err_msg=form)
        assert fast.present["a"].tolist() == [c is not None for c in text.cells["a"]], form
