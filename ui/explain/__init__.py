"""Plain-language sentences built from the numbers on screen: shared ones in common, one
module per page."""

from .bounds import (
    CVAR_FORMULAS,
    SAMPLE_SIZE_FORMULA,
    WERM_FORMULAS,
    bound_verdict,
    coverage_sentence,
    rate_ratio_sentence,
    sample_size_caption,
)
from .common import attacker_sentence, eps_text
from .cvar import (
    CVAR_CAPTIONS,
    adaptive_sentence,
    cvar_regime_sentence,
    cvar_verdict,
    rule_tail_sentence,
)
from .owl import (
    GLOSSARY,
    OWL_FORMULAS,
    OWL_INTRO,
    PRACTICE,
    agreement_text,
    clinical_summary,
    coverage,
    eps_curve_caption,
    gap_text,
    intervals,
    n_curve_caption,
    noise_caption,
    out_of_100,
    owl_verdict,
    tuning_caption,
)
from .upload import release_statement, released_verdict, rule_sentence, upload_verdict

__all__ = [
    "intervals",
    "CVAR_CAPTIONS",
    "CVAR_FORMULAS",
    "GLOSSARY",
    "OWL_FORMULAS",
    "OWL_INTRO",
    "PRACTICE",
    "SAMPLE_SIZE_FORMULA",
    "WERM_FORMULAS",
    "adaptive_sentence",
    "agreement_text",
    "attacker_sentence",
    "bound_verdict",
    "clinical_summary",
    "coverage",
    "coverage_sentence",
    "cvar_regime_sentence",
    "cvar_verdict",
    "eps_curve_caption",
    "eps_text",
    "gap_text",
    "n_curve_caption",
    "noise_caption",
    "out_of_100",
    "owl_verdict",
    "rate_ratio_sentence",
    "release_statement",
    "released_verdict",
    "rule_sentence",
    "rule_tail_sentence",
    "sample_size_caption",
    "tuning_caption",
    "upload_verdict",
]
