"""The analyst's flow in a notebook: a trial, its public dictionary, a private rule recorded in
the durable ledger, and a rule file that says what it cost.

Run from the repository's root: ``python examples/dictionary_to_ledger.py``. The ledger is a
temporary file here; leave ``path=`` out to use the dashboard's and the command line's.
"""

import tempfile
from pathlib import Path

from dpcore import DPOWL, PrivacyLedger, read_dictionary, read_trial, write_rule
from dpcore.owl.release import rule_from_dpowl

DEMO = Path(__file__).resolve().parents[1] / "dpcore_app" / "demo_data"
ledger_file = Path(tempfile.mkdtemp()) / "ledger.sqlite"

# 1. The public data dictionary fixes the roles, bounds, levels, design and direction.
d = read_dictionary(DEMO / "paper_trial.json")
trial = read_trial(DEMO / "paper_trial.csv", **{**d.read_trial_kwargs(), "incomplete": "keep"})

# 2. The dataset's ledger, keyed by the trial's rows: the same trial re-saved (other delimiter,
#    row order, column names, label case) is the same dataset, with the same cap. This file has
#    no other column, so the file's key (step 4) is the trial's.
ledger = PrivacyLedger.for_trial(trial, path=ledger_file, budget=3.0)

# 3. The release: gamma defaults to the paper's table scaled by W, as in the app and the CLI;
#    the release is recorded in the ledger before the rule is set (refused past the cap).
if d.larger_is_better is None:  # never a default: the dictionary says which outcome is better
    raise SystemExit("the dictionary must give larger_is_better (true or false)")
rule = DPOWL(
    epsilon=1.0,
    feature_bounds=trial.feature_bounds(d.bounds),
    outcome_bounds=d.outcome_bounds,
    larger_is_better=d.larger_is_better,
)
rule.fit_trial(trial, d.propensity, ledger=ledger)
print(
    f"gamma used: {rule.gamma_:.4g}; ledger: {ledger.entries[-1].mechanism}, "
    f"total epsilon = {ledger.total()[0]:g} of the cap {ledger.budget:g}"
)

# 4. The rule file, with the ledger's total; then recommendations for new patients.
released = rule_from_dpowl(rule, trial, ledger={"epsilon_total": ledger.total()[0]})
text = write_rule(released, None)
print(released.settings["title"])
print("recommendations:", list(released.recommend(DEMO / "paper_trial.csv")[:5]))
assert PrivacyLedger.for_file(DEMO / "paper_trial.csv", path=ledger_file).total() == ledger.total()
