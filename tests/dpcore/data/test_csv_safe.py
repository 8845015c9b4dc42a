"""One formula guard for every CSV the project writes (issue 30, item 5)."""

import csv
import io

import pandas as pd
import pytest

from dpcore.data.csv_safe import neutral, write_csv

HOSTILE = ["=1+2", "+1", "-x", "@SUM(A1)", "\tx", "\rx", " =cmd", "\uff1dcmd", "\u2212x"]
# Invisible before the prefix (issue 37): a zero-width space, a byte-order mark, a word joiner,
# a zero-width joiner, a no-break space, and a mix of them with spaces.
HIDDEN = ["\u200b=1+2", "\ufeff=cmd", "\u2060-1", "\u200d@SUM(A1)", "\xa0=1", " \u200b \ufeff=x"]


@pytest.mark.parametrize("cell", HOSTILE)
def test_every_formula_start_gets_a_quote(cell):
    assert neutral(cell) == "'" + cell


@pytest.mark.parametrize("cell", HIDDEN)
def test_invisible_characters_before_a_formula_prefix_do_not_hide_it(cell):
    assert neutral(cell) == "'" + cell
    assert neutral(cell, keep_numbers=True) == "'" + cell  # not a number either


@pytest.mark.parametrize("cell", ["plain", "", "a=b", 1.5, -1.5, -3, None, True, "\u200bok"])
def test_other_cells_and_numbers_are_untouched(cell):
    assert neutral(cell) == cell


def test_write_csv_guards_cells_headers_and_categories_and_quotes_line_ends():
    frame = pd.DataFrame(
        {
            "=h": ["=x", "a\rb", "c\nd"],
            "n": [-1.0, 2.0, -3.5],
            "cat": pd.Categorical(["@a", "b", "@a"]),
        }
    )
    text = write_csv(frame)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["'=h", "n", "cat"]
    assert [r[0] for r in rows[1:]] == ["'=x", "a\rb", "c\nd"]  # one row per record
    assert [r[1] for r in rows[1:]] == ["-1.0", "2.0", "-3.5"]  # numbers stay numbers
    assert [r[2] for r in rows[1:]] == ["'@a", "b", "'@a"]
    assert frame.iloc[0, 0] == "=x"  # the caller's frame is not changed
    with pytest.raises(ValueError, match="QUOTE_NONE"):
        write_csv(frame, quoting=csv.QUOTE_NONE)


def test_the_dictionary_csv_is_guarded(tmp_path):
    import json
    from pathlib import Path

    from dpcore.data.dictionary.read import read_dictionary

    demo = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data" / "paper_trial.json"
    d = json.loads(demo.read_text())
    d["description"] = "=HYPERLINK(1)"
    for c in d.get("columns", []):
        c["unit"] = "=cmd|x"
    (tmp_path / "d.json").write_text(json.dumps(d))
    text = read_dictionary(tmp_path / "d.json").to_csv()
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert "=cmd|x" not in cells and "'=cmd|x" in cells
    assert not any(c.startswith(("=", "+", "@")) for c in cells)


def test_the_dictionary_csv_quotes_a_bare_carriage_return(tmp_path):
    """A dictionary cell holding a bare CR stays one cell for a reader that takes CR as a line
    end (Python's universal newlines, spreadsheets): the page's "Download this dictionary
    (CSV)" cannot split a row."""
    import json
    from pathlib import Path

    from dpcore.data.dictionary.read import read_dictionary

    demo = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data" / "paper_trial.json"
    d = json.loads(demo.read_text())
    d["columns"][0]["meaning"] = "first line\r=second line"
    (tmp_path / "d.json").write_text(json.dumps(d))
    text = read_dictionary(tmp_path / "d.json").to_csv()
    strict = list(csv.reader(io.StringIO(text, newline="")))
    universal = list(csv.reader(io.StringIO(text)))  # CR read as a line end outside quotes
    assert len(universal) == len(strict) and [len(r) for r in universal] == [len(r) for r in strict]
    assert "first line\r=second line" in [c for row in strict for c in row]
    assert read_dictionary(text).columns[0].meaning == "first line\r=second line"


def test_every_csv_writer_of_the_project_goes_through_the_guard():
    """A new ``to_csv``/``csv.writer`` in the package, the dashboard or its pages must use
    dpcore.data.csv_safe (demo-data builders and benchmarks write public data only)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    allowed = {  # file: why its writer is guarded
        "dpcore/data/csv_safe.py": "the guard itself",
        "dpcore/data/dictionary/model.py": "Dictionary.to_csv: every cell through neutral()",
        "dpcore_app/ui/upload/files.py": "rows_csv: every text cell and header through neutral()",
        "dpcore_app/ui/upload/dictionary_panels.py": "calls Dictionary.to_csv, guarded above",
    }
    found = []
    for folder in ("dpcore", "dpcore_app"):
        for path in (root / folder).rglob("*.py"):
            if path.parent.name == "demo_data":  # the scripts that wrote the shipped demo files
                continue
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            for m in re.finditer(r"\.to_csv\(|csv\.writer\(|csv\.DictWriter\(", text):
                line = text[: m.start()].count("\n") + 1
                if rel not in allowed and "def to_csv" not in text.splitlines()[line - 1]:
                    found.append(f"{rel}:{line}")
    assert found == []
