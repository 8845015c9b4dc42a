"""How to apply a rule file without dpcore: the recipe in words and in plain Python.

Every rule file carries them verbatim (``apply``, ``apply_python``, ``apply_dpcore``;
:func:`dpcore.owl.rule_file.rule_to_dict`), so that a reader with only the file and numpy can
recommend an arm for new patients. Both formats build the covariates the same way (one-hot
levels, public fills, clipping to the public bounds); they differ in the score: one linear
score for two arms, one per compared arm for K arms.
"""

from __future__ import annotations

__all__ = [
    "APPLY_DPCORE",
    "APPLY_PYTHON",
    "APPLY_RECIPE",
    "K_APPLY_PYTHON",
    "K_APPLY_RECIPE",
    "PYTHON_DESIGN",
]

#: The covariates of a rule file, in words (both formats).
_DESIGN_RECIPE = [
    "For each patient, build x in the order of 'covariates': a numeric covariate is its value;",
    "a one-hot column 'col=level' is 1 when the patient's 'col' equals 'level', else 0.",
    "A column listed in 'fill' that the patient is missing takes its fill value there, and the",
    "covariate 'col is missing' is 1 (0 when the patient has a value).",
    "Clip each x_j to [lower_j, upper_j] (the public bounds).",
]
#: How to apply a two-arm rule without dpcore; written into the file verbatim.
APPLY_RECIPE = [
    *_DESIGN_RECIPE,
    "score = intercept + sum_j coef_j * x_j.",
    "Recommend 'treated' when score > 0, otherwise 'control' (a score of exactly 0 goes to control).",
]
#: How to apply a K-arm rule without dpcore.
K_APPLY_RECIPE = [
    *_DESIGN_RECIPE,
    "For each entry of 'scores': score = intercept + sum_j coef_j * x_j.",
    "Recommend the 'reference' arm when every score is <= 0; otherwise the 'arm' of the largest "
    "score (the first listed on ties).",
]

#: The design matrix of a rule file's covariates, in plain Python (both rule formats).
PYTHON_DESIGN = """import json, numpy as np
RULE_FILE = "private_rule.json"  # this file, by the name it was saved under
rule = json.load(open(RULE_FILE))
fill = rule.get("fill", {})
def missing(v):
    return v is None or v != v or str(v).strip() == ""
def cell(r, c):  # the patient's value of column c, its public fill when missing
    return fill[c] if c in fill and missing(r.get(c)) else r[c]
def x(r, c):
    if c.endswith(" is missing") and c[: -len(" is missing")] in fill:
        return float(missing(r.get(c[: -len(" is missing")])))
    if c in rule["one_hot"]:
        col, level = c.split("=", 1)
        return float(str(cell(r, col)).strip() == level)
    return float(cell(r, c))
def design(rows):  # rows: list of dicts {column: value}, or a pandas DataFrame's records
    X = np.array([[x(r, c) for c in rule["covariates"]] for r in rows])
    return np.clip(X, rule["lower"], rule["upper"])
"""
APPLY_PYTHON = (
    PYTHON_DESIGN
    + """def recommend(rows):
    score = rule["intercept"] + design(rows) @ np.array(rule["coef"])
    return np.where(score > 0, rule["treated"], rule["control"])"""
)
K_APPLY_PYTHON = (
    PYTHON_DESIGN
    + """def recommend(rows):
    x = design(rows)
    s = np.column_stack([k["intercept"] + x @ np.array(k["coef"]) for k in rule["scores"]])
    best = s.argmax(axis=1)
    arms = np.array([k["arm"] for k in rule["scores"]], dtype=object)[best]
    return np.where(s.max(axis=1) > 0, arms, rule["reference"])"""
)
#: The same with dpcore (both formats).
APPLY_DPCORE = """import dpcore
rule = dpcore.load_rule("private_rule.json")  # this file, by the name it was saved under
print(rule.recommend("new_patients.csv"))  # the arm labels, one per row"""
