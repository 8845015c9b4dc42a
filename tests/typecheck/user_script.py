"""What a type checker sees of ``import dpcore``: a user's script, checked by ``mypy --strict``.

Not a test pytest runs (it only defines functions): CI checks it with

    python -m mypy --strict --follow-imports=silent examples tests/typecheck

``used_as_documented`` must type-check cleanly. ``mistakes`` makes errors a user could make;
each line carries ``# type: ignore[<code>]`` for the error mypy must report there. With
``--strict`` (which sets ``warn_unused_ignores``) an ignore that silences nothing is itself an
error, so mypy fails when dpcore's types stop catching one of the mistakes (as they did while
``from dpcore import X`` gave ``Any``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpcore import (
    DPOWL,
    PrivacyLedger,
    PrivatePlugInRule,
    Rule,
    empirical_cvar,
    fit_and_evaluate,
    load_rule,
    private_cvar,
    read_dictionary,
    read_trial,
    stored,
    write_rule,
)
from dpcore.owl.release import rule_from_dpowl, rule_from_plugin
from dpcore.owl.simulate import PAPER_TRIAL


@stored
def tail_error(n: int, tau: float = 0.05) -> float:
    """A function of public parameters whose result the shared store keeps."""
    return tau / n


def used_as_documented(path: str) -> str:
    sample = PAPER_TRIAL.sample(500, rng=0)
    model = DPOWL(
        epsilon=1.0,
        gamma=75.0,
        outcome_bounds=(-12.0, 12.0),
        feature_bounds=PAPER_TRIAL.feature_bounds,
        rng=1,
    )
    model = model.fit(sample["X"], sample["A"], sample["B"], propensity=0.5)
    treat: np.ndarray = model.predict(sample["X"][:5])
    value: float = model.score(sample["X"], sample["A"], sample["B"])
    coef: np.ndarray = model.coef_
    d = read_dictionary("dpcore_app/demo_data/actg175_trial.json")
    trial = read_trial(
        "dpcore_app/demo_data/actg175_trial.csv", **d.read_trial_kwargs(), incomplete="keep"
    )
    assert d.outcome_bounds is not None and d.larger_is_better is not None
    outcomes = trial.outcomes_for_fit(d.outcome_bounds, d.larger_is_better)
    fitted, evaluation, (fit_rows, _) = fit_and_evaluate(
        trial.X,
        trial.A,
        outcomes,
        0.5,
        epsilon_fit=1.0,
        epsilon_eval=1.0,
        include=trial.complete,
        gamma=250.0,
        weight_bound=3000.0,
        feature_bounds=trial.feature_bounds(d.bounds),
        outcome_bounds=d.outcome_bounds,
        larger_is_better=d.larger_is_better,
        arms=trial.arms,
    )
    rule: Rule = rule_from_dpowl(fitted, trial, n=len(fit_rows))
    plugin = PrivatePlugInRule(
        epsilon=1.0,
        feature_bounds=trial.feature_bounds(d.bounds),
        outcome_bounds=d.outcome_bounds,
        larger_is_better=d.larger_is_better,
        rng=1,
    ).fit_trial(trial)
    plugin_rule: Rule = rule_from_plugin(plugin, trial)
    score: np.ndarray = plugin.decision_function(trial.X) + plugin_rule.intercept
    text: str = write_rule(rule, path)
    arms: np.ndarray = load_rule(path).recommend(pd.DataFrame({"age": [40]}))
    ledger = PrivacyLedger(budget=3.0)
    ledger.record("DP-OWL rule", 1.0)
    spent, delta = ledger.total()
    losses = np.random.default_rng(2).uniform(0.0, 1.0, 1000)
    tail = private_cvar(losses, 0.05, epsilon=1.0, bound=1.0) - empirical_cvar(losses, 0.05)
    error: float = tail_error(100, tau=0.1)
    known: bool = tail_error.is_stored(100, tau=0.1)
    return (
        f"{error} {known} {treat} {value:.2f} {coef} {evaluation.summary()} {text[:1]} {arms} {spent + delta} "
        f"{tail} {score[:1]}"
    )


def mistakes(X: np.ndarray, A: np.ndarray, B: np.ndarray) -> None:
    # 1. a hyper-parameter of the wrong type (epsilon as text, from a form field)
    DPOWL(epsilon="1.0")  # type: ignore[arg-type]
    # 2. a misspelt keyword (outcome_bound for outcome_bounds)
    DPOWL(epsilon=1.0, outcome_bound=(0.0, 1.0))  # type: ignore[call-arg]
    # 3. predict's array of arms taken for one number
    choice: float = DPOWL().fit(X, A, B, 0.5).predict(X)  # type: ignore[assignment]
    # 4. fit without the propensity (never assumed: a 2:1 trial is not 1:1)
    DPOWL().fit(X, A, B)  # type: ignore[call-arg]
    # 5. a misspelt name from the package
    from dpcore import DPOwl  # type: ignore[attr-defined]

    # 6. a rule file's path as a number, and the evaluation's summary used as a number
    load_rule(3)  # type: ignore[arg-type]
    _, evaluation, _ = fit_and_evaluate(X, A, B, 0.5, epsilon_fit=1.0, epsilon_eval=1.0)
    evaluation.summary() + 1  # type: ignore[operator]
    # 7. a stored function called with what its signature does not take
    tail_error(100, level=0.95)  # type: ignore[call-arg]
    print(choice, DPOwl)
