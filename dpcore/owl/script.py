"""A short Python script that reproduces a release from the trial CSV and its data dictionary.

The script uses only ``dpcore``, repeats the release's public settings (ε, γ, W, C, h, the
split of the evaluation) and its design (a known ratio, a per-row propensity column or an
estimated propensity) and draws fresh noise: it has no seed, so running it is a new release that
spends ε again, and its first lines say so. It records that release in the durable privacy
ledger (``ledger=``), keyed by the file's rows as the original release was
(:meth:`dpcore.PrivacyLedger.for_file`), so it adds to the same total and meets the same cap.
"""

from __future__ import annotations

import math

from .._validation import check_epsilon, check_real
from ..privacy.composition import parallel_cost

__all__ = ["release_script"]


def release_script(
    *,
    csv_name,
    dictionary_name,
    epsilon,
    gamma,
    weight_bound,
    C=0.0,
    huber_h=0.5,
    epsilon_eval=None,
    fit_share=0.8,
    split_seed=0,
    rule_name="rule.json",
    version=None,
    propensity=None,
    min_propensity=None,
    not_private=(),
):
    """The text of a script that redoes a release on the same files and records it.

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
    propensity : float, "column", "logistic" or None
        The design: a known P(treated), the trial's per-row propensity column (named by the
        dictionary), or a propensity estimated by logistic regression (C must then be
        "worst-case"; no private evaluation). None takes the dictionary's randomization,
        else its propensity column.
    min_propensity : float, optional
        The public smallest propensity of a per-row column (the private evaluation needs it);
        None takes the dictionary's.
    not_private : sequence of str
        Why the original release had no guarantee (e.g. bounds read from the data): the
        script's release is then recorded as one without a guarantee (the dataset's total
        becomes ∞) and its rule file is titled NOT PRIVATE.

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
    if propensity == "logistic":
        if epsilon_eval is not None:
            raise ValueError(
                "the private evaluation needs a known randomization or a propensity "
                "column, not propensity='logistic'"
            )
        if C != "worst-case":
            raise ValueError(
                "an estimated propensity (propensity='logistic') needs C='worst-case' for pure ε-DP"
            )
    elif propensity not in (None, "column"):
        propensity = check_real(propensity, "propensity", low=0.0)
        if not 0.0 < propensity < 1.0:
            raise ValueError(
                f"propensity must be in (0, 1), 'column' or 'logistic', got {propensity!r}"
            )
    if min_propensity is not None:
        min_propensity = check_real(min_propensity, "min_propensity", low=0.0)
    void = [str(r) for r in not_private]
    parts = {"release": epsilon}
    if epsilon_eval is not None:
        parts = {"fit": epsilon, "evaluation": check_epsilon(epsilon_eval, "epsilon_eval")}
    cost = parallel_cost(parts)
    what = (
        "the rule"
        if epsilon_eval is None
        else f"the rule (ε = {epsilon:g}) on {fit_share:.0%} of the rows and its private "
        f"evaluation (ε_eval = {epsilon_eval:g}) on the other {1 - fit_share:.0%}"
    )
    spend = (
        f"# ε = {cost:g} again on the patients of {csv_name!r}; it records itself in the "
        "durable privacy ledger."
        if not void
        else f"# on the patients of {csv_name!r} WITHOUT A GUARANTEE (NOT PRIVATE: "
        f"{'; '.join(void)}): the ledger then says 'no guarantee' for this dataset."
    )
    if propensity is None:
        design = []  # the dictionary's randomization, else its propensity column
    elif propensity == "column":
        design = ['    propensity="column",  # the per-row propensity column']
    elif propensity == "logistic":
        design = ['    propensity="logistic",  # estimated on the same patients: C = "worst-case"']
    else:
        design = [f"    propensity={float(propensity)!r},  # the known randomization, P(treated)"]
    head = [
        "# RUNNING THIS SCRIPT IS A NEW PRIVATE RELEASE: it draws fresh noise and spends",
        spend,
        f"# It redoes {what}",
        f"# with the public settings of the original release (dpcore {version or __version__}).",
        "# Needs dpcore with OpenDP (python -m pip install -e '.[app]' in a checkout of dpcore),",
        f"# and {csv_name!r} and {dictionary_name!r} here.",
        "",
        "import dpcore",
        "from dpcore.owl.release import write_rule",
        "from dpcore.release import ReleasePlan, release",
        "",
        f"CSV, DICTIONARY = {csv_name!r}, {dictionary_name!r}",
        "# The durable privacy ledger: None is $DPCORE_LEDGER, else dpcore's default file (the",
        "# dashboard's, on the machine that runs it). Point it at the ledger the release was",
        "# recorded in, so that this release adds to the same total and meets the same cap.",
        "LEDGER = None",
        "",
        "dictionary = dpcore.read_dictionary(DICTIONARY)",
        "# The dataset is its patients: every row of the file as the reader reads it, so a",
        "# re-saved or re-coded copy of the file is the same dataset, with the same total.",
        "ledger = dpcore.PrivacyLedger.for_file(CSV, path=LEDGER)",
        "plan = ReleasePlan(",
        f"    epsilon={float(epsilon)!r},",
        *(
            [
                f"    epsilon_eval={float(epsilon_eval)!r},  # each patient in one part: parallel",
                f"    fit_share={float(fit_share)!r}, split_seed={int(split_seed)!r},",
            ]
            if epsilon_eval is not None
            else []
        ),
        f"    gamma={float(gamma)!r}, weight_bound={W!r}, C={C!r}, huber_h={float(huber_h)!r},",
        *design,
        *([f"    min_propensity={float(min_propensity)!r},"] if min_propensity is not None else []),
        *([f"    not_private={tuple(void)!r},"] if void else []),
        ")",
        "# n is public: every row counts; a row missing a value gets weight 0 (never dropped).",
        "# The release is recorded in the ledger before it is returned (refused past the cap).",
        "made = release(CSV, dictionary, plan, ledger=ledger)",
        f"write_rule(made.to_dict(), {rule_name!r})",
        "if made.evaluation is not None:",
        "    print(made.evaluation.summary())",
        f"print('wrote {rule_name}:', made.rule.settings['n'], 'patients,',"
        " len(made.rule.covariates), 'covariates')",
        "print('privacy ledger: ε =', ledger.total()[0], 'spent on this dataset in total')",
        "",
    ]
    return "\n".join(head)
