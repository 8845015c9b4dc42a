"""A short Python script that reproduces a release from the trial CSV and its data dictionary.

The script uses only ``dpcore``: it writes out the release's plan (:class:`dpcore.release.
ReleasePlan`: ε, γ, W, C, h, the split of the evaluation, the design) and calls the one release
function. Without a seed it draws fresh noise, so running it is a new release that spends ε
again, and its first lines say so. It records that release in the durable privacy
ledger (``ledger=``), keyed by the file's rows as the original release was
(:meth:`dpcore.PrivacyLedger.for_file`), so it adds to the same total and meets the same cap.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from .._version import __version__

if TYPE_CHECKING:
    from .plan import ReleasePlan

__all__ = ["release_script"]

#: A comment beside a plan's setting in the script.
_NOTES = {
    "epsilon_eval": "each patient in one part: parallel",
    "propensity": "the design (a known P(treated), 'column' or 'logistic')",
}


def release_script(
    plan: ReleasePlan,
    *,
    csv_name: str,
    dictionary_name: str,
    rule_name: str = "rule.json",
    version: str | None = None,
) -> str:
    """The text of a script that redoes a release of ``plan`` on the same files and records it.

    The script builds the same :class:`dpcore.release.ReleasePlan` (every setting that is not
    the default, written out) and calls :func:`dpcore.release.release`, as the page and
    ``dpcore fit`` do: the same files and plan make the same release.

    Parameters
    ----------
    plan : ReleasePlan
        The release's public settings. A plan with a seed is reproduced exactly (NOT
        PRIVATE); without one, the script draws fresh noise and spends ε again.
    csv_name, dictionary_name : str
        File names the script opens (the trial and its JSON or CSV dictionary).
    rule_name : str
        Where the script writes the rule file.
    version : str, optional
        The dpcore version named in the header (default: this one).

    Returns
    -------
    str
    """
    if math.isinf(plan.epsilon):
        raise ValueError("a script reproduces private releases; ε = inf is not one")
    void = list(plan.not_private)
    what = (
        "the rule"
        if plan.epsilon_eval is None
        else f"the rule (ε = {plan.epsilon:g}) on {plan.fit_share:.0%} of the rows and its "
        f"private evaluation (ε_eval = {plan.epsilon_eval:g}) on the other "
        f"{1 - plan.fit_share:.0%}"
    )
    spend = (
        f"# ε = {plan.cost:g} again on the patients of {csv_name!r}; it records itself in the "
        "durable privacy ledger."
        if not void
        else f"# on the patients of {csv_name!r} WITHOUT A GUARANTEE (NOT PRIVATE: "
        f"{'; '.join(void)}): the ledger then says 'no guarantee' for this dataset."
    )
    first = (
        "# RUNNING THIS SCRIPT IS A NEW PRIVATE RELEASE: it draws fresh noise and spends"
        if plan.seed is None
        else f"# RUNNING THIS SCRIPT REPEATS A SEEDED RELEASE (seed {plan.seed}): the same noise,"
    )
    settings = []
    for f in dataclasses.fields(plan):
        value = getattr(plan, f.name)
        if f.name != "epsilon" and value == f.default:
            continue
        note = _NOTES.get(f.name)
        settings.append(f"    {f.name}={value!r}," + (f"  # {note}" if note else ""))
    head = [
        first,
        spend,
        f"# It redoes {what}",
        f"# with the public settings of the original release (dpcore {version or __version__}).",
        "# Needs dpcore with OpenDP (python -m pip install -e '.[app]' in a checkout of dpcore),",
        f"# and {csv_name!r} and {dictionary_name!r} here.",
        "",
        "import dpcore",
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
        *settings,
        ")",
        "# n is public: every row counts; a row missing a value gets weight 0 (never dropped).",
        "# The release is recorded in the ledger before it is returned (refused past the cap).",
        "made = release(CSV, dictionary, plan, ledger=ledger)",
        f"dpcore.write_rule(made.to_dict(), {rule_name!r})",
        "if made.evaluation is not None:",
        "    print(made.evaluation.summary())",
        f"print('wrote {rule_name}:', made.rule.settings['n'], 'patients,',"
        " len(made.rule.covariates), 'covariates')",
        "print('privacy ledger: ε =', ledger.total()[0], 'spent on this dataset in total')",
        "",
    ]
    return "\n".join(head)
