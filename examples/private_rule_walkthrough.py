"""A private treatment rule from a trial CSV, as in a notebook (run: python examples/...py).

Reads the 2:1 demo trial with its public data dictionary, cross-validates a non-private
baseline and the private rule in a scikit-learn Pipeline, fits the rule, writes and reloads the
rule file, and applies it to new patients. Needs the ``sklearn`` extra.

Privacy: cross-validation on the sensitive trial spends epsilon at every fold and reads scores
off the data; it is done here on a demo trial to show the API. On a real trial, choose gamma on
public data (Algorithm 2, ``dpcore.tune_gamma``) and fit once.
"""

# %% Read the trial and its dictionary (public metadata: bounds, levels, design)
import json
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import config_context
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

import dpcore
from dpcore import DPOWL, read_trial

DEMO = Path(__file__).resolve().parents[1] / "dpcore_app" / "demo_data"
meta = json.loads((DEMO / "hospital_trial.json").read_text())
covariates = [c["name"] for c in meta["columns"] if c["role"] == "covariate"]
levels = {c["name"]: c["levels"] for c in meta["columns"] if c.get("type") == "categorical"}
# Rows with a missing value are dropped here, for cross-validation on a demo. A release keeps
# them (incomplete="keep": n is the file's public row count, their weight 0), as `dpcore fit` does.
trial = read_trial(
    DEMO / "hospital_trial.csv",
    treatment=meta["treatment"],
    outcome=meta["outcome"],
    covariates=covariates,
    treated=meta["treated"],
    categorical=levels,
)
bounds = trial.feature_bounds({c["name"]: c["bounds"] for c in meta["columns"] if "bounds" in c})
X = pd.DataFrame(np.asarray(trial.X), columns=list(trial.covariates))
print(f"{trial.n} patients, arms {trial.arms}, P(treated) = {meta['propensity']:.3f}")

# %% Cross-validate: a non-private baseline (epsilon = inf) and the private rule
settings = dict(
    gamma=20.0,
    feature_bounds=bounds,
    outcome_bounds=tuple(meta["outcome_bounds"]),
    larger_is_better=meta["larger_is_better"],
)
design = {"B": np.asarray(trial.B), "propensity": meta["propensity"]}
scores = {}
with warnings.catch_warnings(), config_context(enable_metadata_routing=True):
    warnings.simplefilter("ignore")  # clipping notices: analyst-only diagnostics
    for label, eps in (("non-private", np.inf), ("private, epsilon = 1", 1.0)):
        pipe = make_pipeline(FunctionTransformer(), DPOWL(epsilon=eps, rng=0, **settings))
        scores[label] = cross_val_score(pipe, X, trial.A, params=design, cv=3, error_score="raise")
for label, s in scores.items():
    print(f"{label:>22}: IPW value of the benefit (20 - days) {s.mean():.2f} (3 folds)")
treat_all = dpcore.ipw_value(
    np.ones(trial.n), trial.A, 20 - np.asarray(trial.B), meta["propensity"]
)
print(f"{'treat everyone':>22}: {treat_all:.2f}")
# With W = 60 (a 2:1 trial, stays in [0, 20]) and 1,181 patients the noise at epsilon = 1 is
# large: compare the private rule's value with treating everyone.

# %% Fit the private rule once, on the whole trial
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    rule = DPOWL(epsilon=1.0, rng=1, **settings).fit_trial(trial, propensity=meta["propensity"])
print("released coefficients:", np.round(rule.coef_, 3), "dpcore", dpcore.__version__)

# %% Write and reload the rule file (dpcore.owl.rule_file), then apply it to new patients
new_rows = pd.read_csv(DEMO / "hospital_trial.csv").dropna().head(5)
try:
    from dpcore import load_rule, write_rule
    from dpcore.owl.release import rule_from_dpowl
except ImportError:  # the rule-file module is not in this version of dpcore
    encoded = pd.DataFrame(np.asarray(trial.X[:5]), columns=list(trial.covariates))
    print("recommendations:", rule.recommend(encoded).tolist())
else:
    path = Path(tempfile.mkdtemp()) / "rule.json"
    write_rule(rule_from_dpowl(rule, trial, propensity=meta["propensity"]), path)
    reloaded = load_rule(path)
    print("recommendations:", list(reloaded.recommend(new_rows)))
