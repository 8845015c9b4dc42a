"""A "public" D0 for Algorithm 2 is never the trial (privacy rule 8): a copy of the trial's
rows re-cased, re-coded or re-written is refused as the trial itself is."""

import pathlib

import pytest

from dpcore.data.errors import TrialDataError
from dpcore_app.ui.common.demos import Source, file_digest
from dpcore_app.ui.upload import compute

HOSPITAL = (
    pathlib.Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data" / "hospital_trial.csv"
)
COLUMNS = ["arm", "days_in_hospital", "site", "age", "biomarker", "severity", "frailty"]


def source(name, data):
    return Source(name, data, file_digest(data))


def edited(change):
    """The trial's file with every cell of its data rows passed through ``change``."""
    header, *rows = HOSPITAL.read_text().splitlines()
    lines = [header, *(",".join(map(change, r.split(","))) for r in rows[:50])]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize(
    "change",
    [str.upper, str.lower, lambda c: c + "00" if "." in c else c],
    ids=["upper-case labels", "lower-case labels", "12.400 for 12.4"],
)
def test_a_d0_copy_of_the_trial_s_rows_re_cased_or_re_written_is_refused(change, monkeypatch):
    # The page's session cache needs a running app; the function under it is what is checked.
    monkeypatch.setattr(compute, "row_hashes", compute.row_hashes.__wrapped__)
    trial = source("hospital_trial.csv", HOSPITAL.read_bytes())
    copy = source("d0.csv", edited(change))
    with pytest.raises(TrialDataError, match="D0 shares 50 rows with the trial"):
        compute.check_d0(trial, copy, COLUMNS)
    compute.check_d0(trial, source("d0.csv", edited(lambda c: c + "9")), COLUMNS)  # other rows
