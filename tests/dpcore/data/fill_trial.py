"""A trial with missing cells and the dictionary that gives them public fill-in values."""

import numpy as np

DICTIONARY = {
    "treatment": "arm",
    "treated": "drug",
    "randomization": "1:1",
    "outcome": "y",
    "larger_is_better": True,
    "columns": [
        {"name": "age", "bounds": [18, 90], "missing": {"fill": 50}},
        {"name": "site", "type": "categorical", "levels": ["A", "B", "C"], "fill": "B"},
        {"name": "bmi", "bounds": [15, 45]},
        {"name": "arm", "role": "treatment", "levels": ["drug", "placebo"]},
        {"name": "y", "role": "outcome", "bounds": [0, 10]},
    ],
}


def trial_csv(change=None, n=200):
    """The trial as CSV bytes: ``n`` rows, some ages, sites and BMIs missing; ``change`` (column:
    cell) rewrites row 11."""
    rng = np.random.default_rng(4)
    rows = [
        {
            "age": "" if i % 10 == 3 else str(20 + i % 60),
            "site": "" if i % 13 == 5 else "ABC"[i % 3],
            "bmi": "" if i % 50 == 7 else f"{rng.uniform(18, 40):.1f}",
            "arm": "drug" if i % 2 else "placebo",
            "y": f"{rng.uniform(0, 10):.2f}",
        }
        for i in range(n)
    ]
    rows[11].update(change or {})
    head = "age,site,bmi,arm,y\n"
    return (head + "".join(",".join(r.values()) + "\n" for r in rows)).encode()
