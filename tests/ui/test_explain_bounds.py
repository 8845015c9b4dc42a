"""Sentences of the Theory bounds page against the numbers they are built from."""

import math

from ui import explain

TERMS = {"T1": 1.0, "T2": 16.0, "T3": 3.0, "G": 0.0, "total": 20.0}


def test_coverage_statuses():
    cov = lambda share, lo, hi: {"share": share, "lo": lo, "hi": hi, "draws": 2000}
    assert explain.coverage_sentence("printed", cov(1.0, 0.998, 1.0), 0.05)[0] == "holds"
    status, text = explain.coverage_sentence("printed", cov(0.94, 0.93, 0.951), 0.05)
    assert status == "unclear" and "within Monte-Carlo error" in text
    status, text = explain.coverage_sentence("printed", cov(0.8, 0.78, 0.82), 0.05)
    assert status == "violated" and "80.0% of 2000" in text and "at least 95%" in text


def test_verdict_shares_and_ratio():
    text = explain.bound_verdict(1.0, TERMS, 2.0, 0.05)
    assert "privacy-noise term is 80% of the bound" in text and "largest" not in text
    assert "at most 20 with probability 95%" in text and "10 times the measured value" in text
    other = dict(TERMS, T2=2.0, T3=17.0)
    assert "the Huber-to-hinge term is the largest" in explain.bound_verdict(1.0, other, 2.0, 0.05)
    assert "no worse than the comparison rule" in explain.bound_verdict(1.0, TERMS, -0.1, 0.05)
    flat = explain.bound_verdict(math.inf, dict(TERMS, T2=0.0, total=4.0), 1.0, 0.1)
    assert flat.startswith("Without privacy") and "the Huber-to-hinge term is 75%" in flat
    assert "probability 90%" in flat


def test_rate_ratio_sentence():
    assert "the same order" in explain.rate_ratio_sentence(0.4, 0.7)
    assert "constants matter" in explain.rate_ratio_sentence(0.05, 0.7)
