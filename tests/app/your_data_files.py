"""The files the Your data page's tests upload, as CSV bytes: small trials, a stand-in public
D0, and a trial with a text site column, with that file's public table and the ways one of its
rows changes."""

import numpy as np
import pytest


def trial_csv(n=40, arms=("1", "0"), sep=",", header=("age", "arm", "y"), extra=""):
    """A small trial as CSV bytes: an age, an arm (``arms`` in turn) and a normal outcome per
    row, separated by ``sep``, under ``header``, with ``extra`` at the end of every row."""
    rng = np.random.default_rng(1)
    body = "".join(
        f"{40 + i % 30}{sep}{arms[i % 2]}{sep}{rng.normal():.4f}{extra}\n" for i in range(n)
    )
    return (sep.join(header) + "\n" + body).encode()


def public_d0(n=400, seed=7):
    """A file with the paper demo's columns and none of its rows (a stand-in public D0)."""
    from dpcore.owl.simulate import PAPER_TRIAL

    s = PAPER_TRIAL.sample(n, rng=seed)
    lines = ["x1,x2,x3,x4,treatment,outcome"] + [
        ",".join(f"{v:.4f}" for v in x) + f",{int(a > 0)},{b:.4f}"
        for x, a, b in zip(s["X"], s["A"], s["B"])
    ]
    return ("\n".join(lines) + "\n").encode()


def site_csv(change=None, n=60, extra_columns=""):
    """patient_id, age, site (text), arm, y, response (a second outcome); row 7 may change."""
    rng = np.random.default_rng(3)
    rows = [
        [
            f"P{i}",
            str(30 + i % 50),
            "ABC"[i % 3],
            "drug" if i % 2 else "placebo",
            f"{rng.uniform(0, 10):.3f}",
            f"{rng.uniform():.2f}",
        ]
        for i in range(n)
    ]
    for j, v in (change or {}).items():
        rows[7][j] = v
    head = "patient_id,age,site,arm,y,response" + extra_columns + "\n"
    return (
        head + "".join(",".join(r) + "," * extra_columns.count(",") + "\n" for r in rows)
    ).encode()


#: The public table of ``site_csv``: bounds for age and y, the site's levels.
SITE_TABLE = {
    "age": {"lower": 18.0, "upper": 90.0},
    "site": {"type": "categorical", "levels": "A, B, C"},
    "y": {"lower": 0.0, "upper": 10.0},
}


#: One row of ``site_csv`` changed three ways: the neighbouring files the privacy tests compare.
EACH_NEIGHBOUR = pytest.mark.parametrize(
    "change",
    [{2: "RARE_one_patient"}, {1: "NA"}, {4: ""}],
    ids=["a rare site", "a missing age", "a missing outcome"],
)
