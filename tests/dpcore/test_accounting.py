"""GDP accounting (spec cvar.md §4.2, §5.5) and the session privacy ledger."""

import dataclasses
from datetime import datetime, timezone

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpcore.privacy.accounting import (
    BudgetExceededError,
    LedgerEntry,
    PrivacyLedger,
    gdp_compose,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
)


@pytest.mark.parametrize("eps,delta,mu", [(1.0, 1e-5, 0.2681), (0.5, 1e-6, 0.1241),
                                          (2.0, 1e-5, 0.5016), (0.1, 1e-5, 0.0325)])
def test_calibrated_mu_matches_the_spec_and_inverts_delta(eps, delta, mu):
    m = gdp_mu(eps, delta)
    assert m == pytest.approx(mu, abs=1e-4)
    assert gdp_delta(eps, m) == pytest.approx(delta, rel=1e-10, abs=1e-16)
    assert gdp_epsilon(m, delta) == pytest.approx(eps, rel=1e-10)


@pytest.mark.parametrize("T,z,eps", [(1, 1.0, 4.3772), (500, 30.0, 3.1246), (200, 5.0, 15.4562)])
def test_composed_gaussian_epsilon_matches_the_spec(T, z, eps):
    assert gdp_epsilon(gdp_compose(*[1.0 / z] * T), 1e-5) == pytest.approx(eps, abs=1e-4)


def test_exact_calibration_beats_the_classic_gaussian_multiplier():
    # sigma/Delta for one release at (1, 1e-5): exact 1/mu = 3.731 against sqrt(2 ln(1.25/delta)).
    assert 1.0 / gdp_mu(1.0, 1e-5) == pytest.approx(3.731, abs=1e-3)
    assert np.sqrt(2 * np.log(1.25 / 1e-5)) == pytest.approx(4.845, abs=1e-3)


def test_gdp_delta_is_the_tradeoff_of_two_gaussians():
    """Independent check: delta(eps) = sup_S P(N(mu,1) in S) - e^eps P(N(0,1) in S), attained
    by S = {z > t}, maximised numerically over t."""
    mu, eps = 0.7, 0.4
    t = np.linspace(-10, 10, 200_001)
    hockey = np.max(stats.norm.sf(t - mu) - np.exp(eps) * stats.norm.sf(t))
    assert gdp_delta(eps, mu) == pytest.approx(hockey, rel=1e-8)


@given(st.floats(0.01, 5.0), st.floats(1e-9, 0.1))
def test_calibration_round_trip(eps, delta):
    assert gdp_delta(eps, gdp_mu(eps, delta)) == pytest.approx(delta, rel=1e-8)


def test_prv_accountant_agrees_with_the_closed_form():
    prv = pytest.importorskip("prv_accountant")
    T, z = 500, 30.0
    acc = prv.PRVAccountant(prvs=[prv.GaussianMechanism(noise_multiplier=z)],
                            max_self_compositions=[T], eps_error=1e-3, delta_error=1e-10)
    lo, _, hi = acc.compute_epsilon(delta=1e-5, num_self_compositions=[T])
    assert lo - 1e-3 <= gdp_epsilon(np.sqrt(T) / z, 1e-5) <= hi + 1e-3


@pytest.mark.parametrize("bad,exc", [(0.0, ValueError), (-1.0, ValueError), (np.nan, ValueError),
                                     ("1", TypeError)])
def test_calibration_rejects_bad_epsilon(bad, exc):
    with pytest.raises(exc, match="epsilon"):
        gdp_mu(bad, 1e-5)


# --------------------------------------------------------------------------------------------
# Ledger


def test_ledger_records_entries_and_composes():
    ledger = PrivacyLedger()
    assert ledger.total() == (0.0, 0.0) and ledger.entries == ()
    before = datetime.now(timezone.utc)
    ledger.record("private CVaR", 0.5)
    ledger.record("DP-GD", 1.0, delta=1e-5)
    eps, delta = ledger.total()
    assert eps == pytest.approx(1.5) and delta == pytest.approx(1e-5)
    first, second = ledger.entries
    assert (first.mechanism, first.epsilon, first.delta) == ("private CVaR", 0.5, 0.0)
    assert second.mechanism == "DP-GD" and isinstance(second, LedgerEntry)
    assert before <= first.timestamp <= second.timestamp and first.timestamp.tzinfo is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.epsilon = 0.0
    assert isinstance(ledger.entries, tuple)


def test_budget_refusal_names_budget_spent_and_request_and_records_nothing():
    ledger = PrivacyLedger(budget=1.0)
    ledger.record("a", 0.7)
    with pytest.raises(BudgetExceededError, match=r"epsilon=1\b.*0\.7 already spent.*0\.4 requested"):
        ledger.record("b", 0.4)
    assert len(ledger.entries) == 1 and ledger.total() == (0.7, 0.0)
    assert issubclass(BudgetExceededError, ValueError)
    ledger.record("c", 0.3)  # exactly the budget is allowed, despite 0.7 + 0.3 rounding
    assert ledger.total()[0] == pytest.approx(1.0)


@pytest.mark.parametrize("eps,delta,exc,word", [
    (0.0, 0.0, ValueError, "epsilon"), (-1.0, 0.0, ValueError, "epsilon"),
    (np.inf, 0.0, ValueError, "epsilon"), (np.nan, 0.0, ValueError, "epsilon"),
    ("1", 0.0, TypeError, "epsilon"), (1.0, -0.1, ValueError, "delta"),
    (1.0, 1.0, ValueError, "delta"), (1.0, np.nan, ValueError, "delta"),
])
def test_ledger_validation(eps, delta, exc, word):
    ledger = PrivacyLedger()
    with pytest.raises(exc, match=word):
        ledger.record("m", eps, delta)
    assert ledger.entries == ()


def test_ledger_rejects_bad_names_and_budgets():
    with pytest.raises(TypeError, match="mechanism"):
        PrivacyLedger().record("", 1.0)
    with pytest.raises(ValueError, match="budget"):
        PrivacyLedger(budget=0.0)
    assert "budget=2.0" in repr(PrivacyLedger(budget=2.0))


@given(st.lists(st.floats(0.01, 1.0), min_size=1, max_size=20))
def test_ledger_never_exceeds_its_budget(spends):
    ledger = PrivacyLedger(budget=2.0)
    for e in spends:
        try:
            ledger.record("m", e)
        except BudgetExceededError:
            pass
    assert ledger.total()[0] <= 2.0 * (1 + 1e-12)
    assert sum(e.epsilon for e in ledger.entries) == pytest.approx(ledger.total()[0])
