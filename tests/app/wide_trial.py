"""A wide 2:1 trial whose treated arm sorts second, with an identifier and post-randomization
columns, and its public dictionary."""

import numpy as np

DICTIONARY = {
    "dataset": "wide_trial.csv",
    "treatment": "arm",
    "treated": "verum",
    "randomization": "2:1",
    "outcome": "weight_g",
    "larger_is_better": True,
    "columns": [
        {"name": "record", "role": "identifier", "type": "label"},
        {"name": "age", "role": "covariate", "type": "numeric", "bounds": [18, 90]},
        {"name": "parity", "role": "covariate", "type": "numeric", "bounds": [0, 10]},
        {"name": "arm", "role": "treatment", "levels": ["comparator", "verum"]},
        {"name": "weight_g", "role": "outcome", "bounds": [0, 6000], "unit": "g"},
        {"name": "postop_pain", "role": "ignore", "type": "numeric"},
        {"name": "postop_nausea", "role": "ignore", "type": "numeric"},
    ],
}


def wide_trial(n=60):
    """A 2:1 trial whose treated arm sorts second, with post-randomization columns."""
    rng = np.random.default_rng(5)
    rows = [
        f"{i},{30 + i % 40},{i % 4},{'verum' if i % 3 else 'comparator'},"
        f"{3000 + rng.normal(0, 400):.0f},{rng.integers(0, 10)},{rng.integers(0, 2)}\n"
        for i in range(n)
    ]
    return ("record,age,parity,arm,weight_g,postop_pain,postop_nausea\n" + "".join(rows)).encode()
