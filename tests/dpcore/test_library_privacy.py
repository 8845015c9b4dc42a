"""The library never hides a privacy warning, shares the app's defaults and records to the
ledger (issue 23, items 4 and 5)."""

import warnings

import numpy as np
import pytest

from dpcore import DPOWL, DPWeightedERM, PrivacyWarning
from dpcore._estimator import ClippingWarning, NoiseWarning
from dpcore.owl.evaluation_fit import fit_and_evaluate
from dpcore.owl.paper import default_gamma, paper_gamma
from dpcore.owl.release import rule_from_dpowl
from dpcore.owl.rule_file import FORMAT_KEYS, rule_to_dict
from dpcore.owl.simulate import PAPER_TRIAL
from dpcore.privacy.accounting import BudgetExceededError, PrivacyLedger
from dpcore.privacy.composition import void_reasons

BOUNDS = PAPER_TRIAL.feature_bounds
KW = dict(outcome_bounds=(-12, 12), larger_is_better=True)


@pytest.fixture(scope="module")
def data():
    return PAPER_TRIAL.sample(400, rng=3)


class _Trial:  # what rule_from_dpowl reads of a dpcore.Trial
    def __init__(self, n, p):
        self.treatment, self.outcome, self.n = "A", "B", n
        self.covariates = tuple(f"x{j}" for j in range(p))
        self.arms, self.categories = (1.0, -1.0), {}


def test_fit_and_evaluate_lets_a_privacy_warning_through(data):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        with pytest.raises(PrivacyWarning, match="feature_bounds"):
            fit_and_evaluate(
                data["X"],
                data["A"],
                data["B"],
                0.5,
                epsilon_fit=1.0,
                epsilon_eval=1.0,
                rng=np.random.default_rng(0),
                **KW,
            )


def test_fit_and_evaluate_still_silences_only_the_weight_clipping_warning(data):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_and_evaluate(
            data["X"],
            data["A"],
            data["B"] * 3,
            0.5,
            epsilon_fit=1.0,
            epsilon_eval=1.0,
            feature_bounds=BOUNDS,
            weight_bound=20.0,
            rng=np.random.default_rng(0),
            **KW,
        )
    messages = [str(w.message) for w in caught]
    assert not any("exceed the weight bound" in m for m in messages)
    assert any("outcome_bounds" in m for m in messages)  # B * 3 leaves the public bounds


def test_a_rule_fitted_with_data_bounds_says_not_private_in_its_file(data):
    with pytest.warns(PrivacyWarning):
        model = DPOWL(epsilon=1.0, rng=np.random.default_rng(1), **KW).fit(
            data["X"], data["A"], data["B"], 0.5
        )
    file = rule_from_dpowl(model, _Trial(400, 2), private=True).to_dict()
    assert file["private"] is False and file["title"].startswith("NOT PRIVATE")
    assert "feature bounds read from the data" in file["title"]
    assert file["mechanism"].startswith("NOT PRIVATE")
    public = DPOWL(epsilon=1.0, feature_bounds=BOUNDS, rng=np.random.default_rng(1), **KW).fit(
        data["X"], data["A"], data["B"], 0.5
    )
    file = rule_from_dpowl(public, _Trial(400, 2)).to_dict()
    assert file["private"] is True and file["title"] == "Private treatment rule (ε = 1)"
    seeded = rule_from_dpowl(public, _Trial(400, 2), seed=0).to_dict()
    assert seeded["private"] is False and seeded["seed"] == 0 and "seeded" in seeded["title"]


@pytest.mark.parametrize(
    ("eps", "bounds", "rng", "seed", "shown"),
    [
        (1.0, None, 3, 3, "1"),
        (np.inf, BOUNDS, None, None, "inf"),
        (1.0, BOUNDS, 3, None, "1"),  # the learner's own int seed, no seed= for the file
        (1.0, BOUNDS, None, True, "1"),  # a seed numpy takes that is not an int
    ],
    ids=["data-bounds-and-seed", "no-noise", "learner-seed", "bool-seed"],
)
def test_a_rule_file_and_the_ledger_give_the_same_reasons_in_the_same_words(
    data, eps, bounds, rng, seed, shown
):
    """The reasons a release has no guarantee have one wording (composition.void_reasons):
    the rule file's title and not_private_because say the learner's reasons, as its ledger
    entry does, and the seed the file's release was drawn from."""
    ledger = PrivacyLedger()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # feature bounds taken from the data
        model = DPOWL(epsilon=eps, feature_bounds=bounds, rng=rng, **KW).fit(
            data["X"], data["A"], data["B"], 0.5, ledger=ledger
        )
    file = rule_from_dpowl(model, _Trial(400, 2), seed=seed).to_dict()
    learner = void_reasons(bounds is None, eps, rng)
    reasons = list(dict.fromkeys(learner + void_reasons(rng=seed)))
    assert file["not_private_because"] == reasons and reasons
    assert file["private"] is False
    said = "; ".join(reasons)
    assert file["title"] == f"NOT PRIVATE treatment rule (ε = {shown}): {said} void the guarantee"
    entry = ledger.entries[0].mechanism
    assert entry.endswith(f"[no guarantee: {'; '.join(learner)}]") if learner else "[" not in entry


def test_the_default_gamma_is_the_paper_s_table_scaled_by_w(data):
    model = DPOWL(epsilon=1.0, feature_bounds=BOUNDS, rng=np.random.default_rng(0), **KW).fit(
        data["X"], data["A"], data["B"], 0.5
    )
    assert model.gamma == "paper" and model.weight_bound_ == 48.0
    assert model.gamma_ == default_gamma(1.0, 400, 48.0) == paper_gamma(1.0, 400) * 48 / 30
    fixed = DPOWL(epsilon=1.0, gamma=75, feature_bounds=BOUNDS, rng=0, **KW).fit(
        data["X"], data["A"], data["B"], 0.5
    )
    assert fixed.gamma_ == 75.0
    with pytest.raises(ValueError, match="gamma must be a positive number or 'paper'"):
        DPOWL(gamma="table", **KW).fit(data["X"], data["A"], data["B"], 0.5)


def test_a_gamma_too_small_for_the_noise_warns_and_the_default_does_not(data):
    args = (data["X"], data["A"], data["B"], 0.5)
    with pytest.warns(NoiseWarning, match="mostly noise"):
        DPOWL(epsilon=1.0, gamma=1.0, feature_bounds=BOUNDS, rng=0, **KW).fit(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseWarning)
        DPOWL(epsilon=1.0, feature_bounds=BOUNDS, rng=0, **KW).fit(*args)


def test_clipping_more_than_the_stated_share_warns_the_analyst(data):
    X, A, B = data["X"], data["A"], data["B"]
    with pytest.warns(ClippingWarning, match="outcome_bounds"):
        DPOWL(epsilon=1.0, feature_bounds=BOUNDS, rng=0, **KW).fit(X, A, B * 100, 0.5)
    with pytest.warns(ClippingWarning, match="feature outside its public bounds"):
        DPOWL(epsilon=1.0, feature_bounds=BOUNDS, rng=0, **KW).fit(X * 3, A, B, 0.5)
    assert not issubclass(ClippingWarning, PrivacyWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippingWarning)
        DPOWL(epsilon=1.0, feature_bounds=BOUNDS, weight_bound=10**6, rng=0, **KW).fit(X, A, B, 0.5)


def test_fit_records_in_the_ledger_and_a_refusal_releases_nothing(data, tmp_path):
    ledger = PrivacyLedger.for_cells({"id": ["trial"]}, path=tmp_path / "l.sqlite", budget=1.5)
    args = (data["X"], data["A"], data["B"], 0.5)
    gen = np.random.default_rng(0)
    DPOWL(epsilon=1.0, feature_bounds=BOUNDS, rng=gen, **KW).fit(*args, ledger=ledger)
    assert [(e.mechanism, e.epsilon) for e in ledger.entries] == [
        ("DP-OWL rule (output perturbation)", 1.0)
    ]
    refused = DPOWL(epsilon=1.0, feature_bounds=BOUNDS, rng=gen, **KW)
    with pytest.raises(BudgetExceededError):
        refused.fit(*args, ledger=ledger)
    assert not hasattr(refused, "coef_") and ledger.total() == (1.0, 0.0)
    DPWeightedERM(epsilon=0.5, gamma=20.0, feature_bounds=BOUNDS, rng=gen).fit(
        data["X"], data["A"], ledger=ledger
    )
    assert ledger.total() == (1.5, 0.0)


def test_a_seeded_or_data_bounded_fit_makes_the_total_infinite(data):
    args = (data["X"], data["A"], data["B"], 0.5)
    seeded = PrivacyLedger()
    DPOWL(epsilon=1.0, feature_bounds=BOUNDS, rng=0, **KW).fit(*args, ledger=seeded)
    assert seeded.total()[0] == np.inf and "seeded" in seeded.entries[0].mechanism
    bounded = PrivacyLedger()
    with pytest.warns(PrivacyWarning):
        DPOWL(epsilon=1.0, rng=np.random.default_rng(0), **KW).fit(*args, ledger=bounded)
    assert bounded.total()[0] == np.inf
    with pytest.raises(BudgetExceededError):
        DPOWL(epsilon=1.0, feature_bounds=BOUNDS, rng=0, **KW).fit(*args, ledger=PrivacyLedger(5.0))


def test_fit_and_evaluate_records_two_parallel_parts(data):
    ledger = PrivacyLedger()
    fit_and_evaluate(
        data["X"],
        data["A"],
        data["B"],
        0.5,
        epsilon_fit=1.0,
        epsilon_eval=0.5,
        feature_bounds=BOUNDS,
        rng=np.random.default_rng(0),
        ledger=ledger,
        **KW,
    )
    (entry,) = ledger.entries
    assert entry.epsilon == 1.0 and dict(entry.parts) == {"fit": 1.0, "evaluation": 0.5}


@pytest.mark.parametrize("part", ["epsilon_fit", "epsilon_eval"])
def test_fit_and_evaluate_at_epsilon_inf_records_no_guarantee_as_the_learners_do(data, part):
    # epsilon = inf adds no noise: the ledger says so (total inf), as DPOWL's fit does, rather
    # than refusing the infinite part after the release is computed
    eps = {"epsilon_fit": 1.0, "epsilon_eval": 0.5, part: np.inf}
    ledger, alone = PrivacyLedger(), PrivacyLedger()

    def release(ledger):
        args = (data["X"], data["A"], data["B"], 0.5)
        rng = np.random.default_rng(0)
        return fit_and_evaluate(*args, **eps, feature_bounds=BOUNDS, rng=rng, ledger=ledger, **KW)

    release(ledger)
    (entry,) = ledger.entries
    assert ledger.total()[0] == np.inf
    assert "no guarantee: epsilon = inf (no noise)" in entry.mechanism
    if part == "epsilon_fit":
        args = (data["X"], data["A"], data["B"], 0.5)
        DPOWL(epsilon=np.inf, feature_bounds=BOUNDS, **KW).fit(*args, ledger=alone)
        assert alone.entries[0].mechanism.endswith("[no guarantee: epsilon = inf (no noise)]")
    with pytest.raises(BudgetExceededError):
        release(PrivacyLedger(5.0))


def test_neighbouring_files_publish_the_same_fields_but_the_noise_through_the_ledger(data):
    X, A, B = data["X"].copy(), data["A"].copy(), data["B"].copy()
    files, records = [], []
    for change in (False, True):
        if change:  # replace one patient's row
            X[0], A[0], B[0] = BOUNDS[1], -A[0], 12.0
        ledger = PrivacyLedger()
        model = DPOWL(epsilon=1.0, feature_bounds=BOUNDS, rng=np.random.default_rng(5), **KW).fit(
            X, A, B, 0.5, ledger=ledger
        )
        files.append(
            rule_to_dict(
                **{
                    k: v
                    for k, v in rule_from_dpowl(model, _Trial(400, 2)).to_dict().items()
                    if k not in FORMAT_KEYS
                }
            )
        )
        records.append([(e.mechanism, e.epsilon, e.delta) for e in ledger.entries])
    noisy = {"coef", "intercept"}
    assert {k: v for k, v in files[0].items() if k not in noisy} == {
        k: v for k, v in files[1].items() if k not in noisy
    }
    assert records[0] == records[1]


def test_larger_is_better_is_never_a_silent_true(data):
    from dpcore import read_trial

    given = {k: v for k, v in KW.items() if k != "larger_is_better"}
    for kw in ({}, {"larger_is_better": None}):  # left out, or a dictionary's missing field
        with pytest.raises(ValueError, match="larger_is_better is not set"):
            DPOWL(epsilon=1.0, feature_bounds=BOUNDS, **kw, **given).fit(
                data["X"], data["A"], data["B"], 0.5
            )
    with pytest.raises(TypeError, match="field larger_is_better"):
        DPOWL(epsilon=1.0, feature_bounds=BOUNDS, larger_is_better="no", **given).fit(
            data["X"], data["A"], data["B"], 0.5
        )
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "dpcore_app" / "demo_data" / "hospital_trial.csv"
    trial = read_trial(
        demo,
        treatment="arm",
        outcome="days_in_hospital",
        categorical={"site": ["A", "B", "C"]},
        incomplete="keep",
        unknown_levels="baseline",
    )
    with pytest.raises(TypeError, match="field larger_is_better"):
        trial.outcomes_for_fit((0, 20), None)


def test_fit_trial_takes_the_direction_from_the_trials_dictionary():
    """A smaller-is-better trial read with its dictionary: a rule given no direction fits the
    dictionary's (the same rule as one told so), never a silent "larger is better"."""
    from pathlib import Path

    from dpcore import read_trial
    from dpcore.data import read_dictionary

    demo = Path(__file__).resolve().parents[2] / "dpcore_app" / "demo_data"
    d = read_dictionary(demo / "hospital_trial.json")
    assert d.larger_is_better is False
    trial = read_trial(demo / "hospital_trial.csv", dictionary=d, incomplete="keep")
    assert trial.larger_is_better is False
    kw = dict(
        epsilon=np.inf,
        gamma=50.0,
        feature_bounds=trial.feature_bounds(d.bounds),
        outcome_bounds=d.outcome_bounds,
    )
    from_trial = DPOWL(**kw).fit_trial(trial)
    told = DPOWL(**kw, larger_is_better=False).fit_trial(trial)
    assert from_trial.larger_is_better_ is False and from_trial.larger_is_better is None
    np.testing.assert_array_equal(from_trial.coef_, told.coef_)
    wrong = DPOWL(**kw, larger_is_better=True).fit_trial(trial)  # an explicit choice wins
    assert not np.array_equal(wrong.coef_, told.coef_)
