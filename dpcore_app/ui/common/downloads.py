"""CSV downloads of the teaching pages: a table written through the project's formula guard, and
one whose first ``#`` lines carry the settings that produced it and a short data dictionary of
its columns (:data:`DICTIONARY`), so a file read months later says what it holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dpcore.data.csv_safe import write_csv

if TYPE_CHECKING:
    import pandas as pd

DICTIONARY = {
    "n": "patients in the simulated trial",
    "epsilon": "privacy budget ε (inf: the non-private fit)",
    "gamma": "regularization γ in use",
    "rep": "repetition: one simulated trial",
    "accuracy": "% of new patients given their truly better treatment",
    "value": "average outcome under the rule (outcome units)",
    "value_paper": "the same on the authors' test-shifted scale",
    "concordance": "% agreement with the non-private rule at the same γ",
    "kappa": "Cohen's κ of that agreement",
    "disagreement": "% of new patients a second release of the same trial (fresh noise) treats "
    "otherwise",
    "noise_norm": "length of the added noise (scaled space)",
    "clipped_share": "share of weights clipped at W",
    "_same_gamma": "suffix: the noiseless rule at the same γ",
    "_mean/_sd/_se/_lo/_hi": "suffixes: mean, standard deviation, standard error, 95% interval over reps",
    "reps": "repetitions behind a summary row",
}


def csv(df: pd.DataFrame, **to_csv: Any) -> str:
    """A teaching table as CSV text, through the project's formula guard (every CSV it writes)."""
    return write_csv(df, None, **to_csv)


def with_settings(
    df: pd.DataFrame, settings: Mapping[str, Any], dictionary: Mapping[str, str] = DICTIONARY
) -> str:
    """A CSV whose first lines (# comments) give the settings and a data dictionary."""
    head = ["# settings"] + [f"# {k} = {v}" for k, v in settings.items()]
    used = [
        (k, v)
        for k, v in dictionary.items()
        if k.startswith("_") and any(k.split("/")[0] in c for c in df.columns) or k in df.columns
    ]
    head += ["# data dictionary"] + [f"# {k}: {v}" for k, v in used]
    return "\n".join(head) + "\n" + write_csv(df)
