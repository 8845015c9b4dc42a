"""A short Python script that reproduces a release from the trial CSV and its data dictionary.

The script uses only ``dpcore``, repeats the release's public settings (ε, γ, W, C, h, the
split of the evaluation) and draws fresh noise: it has no seed, so running it is a new release
that spends ε again, and its first lines say so.
"""

from __future__ import annotations

import math

from .._validation import check_epsilon, check_real

__all__ = ["release_script"]


def release_script(*, csv_name, dictionary_name, epsilon, gamma, weight_bound, C=0.0,
                   huber_h=0.5, epsilon_eval=None, fit_share=0.8, split_seed=0,
                   rule_name="rule.json", version=None):
    """The text of a script that redoes a release on the same files.

    Parameters
    ----------
    csv_name, dictionary_name : str
        File names the script opens (the trial and its JSON or CSV dictionary).
    epsilon : float
        ε of the fit.
    gamma, weight_bound, C, huber_h
        The release's γ, W, C (a number or "worst-case") and Huber width.
    epsilon_eval : float, optional
        ε of the private evaluation on the held-out part; None for a release without one.
    fit_share, split_seed
        The public split of the evaluation.
    rule_name : str
        Where the script writes the rule file.
    version : str, optional
        The dpcore version named in the header (default: this one).

    Returns
    -------
    str
    """
    from .. import __version__

    epsilon = check_epsilon(epsilon)
    if math.isinf(epsilon):
        raise ValueError("a script reproduces private releases; ε = inf is not one")
    gamma = check_real(gamma, "gamma", low=0.0)
    W = check_real(weight_bound, "weight_bound", low=0.0)
    C = C if isinstance(C, str) else float(C)
    cost = epsilon if epsilon_eval is None else max(epsilon, check_epsilon(epsilon_eval, "epsilon_eval"))
    what = ("the rule" if epsilon_eval is None else
            f"the rule (ε = {epsilon:g}) on {fit_share:.0%} of the rows and its private "
            f"evaluation (ε_eval = {epsilon_eval:g}) on the other {1 - fit_share:.0%}")
    head = [
        "# RUNNING THIS SCRIPT IS A NEW PRIVATE RELEASE: it draws fresh noise and spends",
        f"# ε = {cost:g} again on the patients of {csv_name!r}. Record it in your privacy ledger.",
        f"# It redoes {what}",
        f"# with the public settings of the original release (dpcore {version or __version__}).",
        f"# Needs: pip install dpcore opendp, and {csv_name!r} and {dictionary_name!r} here.",
        "",
        "import dpcore",
        *(["from dpcore.owl.evaluation import fit_and_evaluate"] if epsilon_eval is not None else []),
        "from dpcore.owl.release import rule_from_dpowl, write_rule",
        "",
        f"dictionary = dpcore.read_dictionary({dictionary_name!r})",
        "# n is public: every row counts; a row missing a value gets weight 0 (never dropped).",
        f"trial = dpcore.read_trial({csv_name!r}, **dictionary.read_trial_kwargs(),",
        "                           incomplete='keep', unknown_levels='baseline')",
        "outcomes = trial.outcomes_for_fit(dictionary.outcome_bounds, dictionary.larger_is_better)",
        "propensity = dictionary.propensity if dictionary.propensity is not None else trial.propensity",
        "settings = dict(",
        f"    gamma={gamma!r}, weight_bound={W!r}, C={C!r}, huber_h={float(huber_h)!r},",
        "    feature_bounds=trial.feature_bounds(dictionary.bounds),",
        "    outcome_bounds=dictionary.outcome_bounds,",
        "    larger_is_better=dictionary.larger_is_better,",
        ")",
        "",
    ]
    if epsilon_eval is None:
        body = [
            f"model = dpcore.DPOWL(epsilon={epsilon!r}, **settings).fit(trial.X, trial.A, outcomes, propensity)",
            "rule = rule_from_dpowl(model, trial, gamma_source='as released')",
        ]
    else:
        body = [
            "# Each patient is in one part only, so the two parts cost the larger ε (parallel).",
            "model, evaluation, (fit_rows, _) = fit_and_evaluate(",
            "    trial.X, trial.A, outcomes, propensity, include=trial.complete,",
            f"    epsilon_fit={epsilon!r}, epsilon_eval={float(epsilon_eval)!r},",
            f"    fit_share={float(fit_share)!r}, split_seed={int(split_seed)!r},",
            "    min_propensity=dictionary.min_propensity, sampler='opendp', arms=trial.arms,",
            "    **settings,",
            ")",
            "rule = rule_from_dpowl(model, trial, n=len(fit_rows), gamma_source='as released',",
            "                       evaluation=evaluation.to_dict())",
            "print(evaluation.summary())",
        ]
    tail = [
        f"write_rule(rule, {rule_name!r})",
        f"print('wrote {rule_name}:', rule.settings['n'], 'patients,', len(rule.covariates), 'covariates')",
        "",
    ]
    return "\n".join(head + body + tail)
