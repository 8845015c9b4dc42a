"""Trials with more than two arms: two of K compared privately, and a private rule over all K.

The privacy argument is in dpcore/owl/karm.py and docs/k_arm.md; the tests here check its
parts: other arms' rows at weight 0 with n the file's row count, each rule's budget
epsilon / (K - 1), neighbouring files whose published fields agree except the noisy ones, and
an empirical DP audit of the whole K-arm release with a broken twin that forgets the split.
"""

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import DPOWL, PrivatePlugInRule, l2_gamma_noise, read_dictionary, read_trial
from dpcore.data import TrialDataError
from dpcore.data.trial import read_arms_trial
from dpcore.owl import karm
from dpcore.owl.karm import KArmOWL, rule_budget
from dpcore.owl.rule import choose_arm
from dpcore.owl.simulate import FOUR_ARM_TRIAL, K_ARM_TRIAL
from dpcore.privacy.audit import audit_epsilon
from tests.dpcore.cli.commands import fit_command

DEMO = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"
ALPHA = 1e-3


def three_arm_files(n=90, seed=0, probs=(0.5, 0.25, 0.25)):
    """A small three-arm CSV (arms a, b, c) and its dictionary, as bytes and a dict."""
    rng = np.random.default_rng(seed)
    arms = np.array(["a", "b", "c"])[np.arange(n) % 3]
    age = rng.integers(20, 80, n)
    y = np.round(rng.uniform(0, 10, n), 2)
    csv = "age,arm,y\n" + "".join(f"{a},{t},{v}\n" for a, t, v in zip(age, arms, y))
    d = {
        "treatment": "arm",
        "outcome": "y",
        "larger_is_better": True,
        "arm_probabilities": list(probs),
        "columns": [
            {"name": "age", "role": "covariate", "bounds": [18, 90]},
            {"name": "arm", "role": "treatment", "levels": ["a", "b", "c"]},
            {"name": "y", "role": "outcome", "bounds": [0, 10]},
        ],
    }
    return csv.encode(), d


# --------------------------------------------------------------------------------------------
# The dictionary and the reader


def test_a_dictionary_lists_k_arms_with_their_probabilities():
    d = read_dictionary(DEMO / "actg175_four_arms.json")
    assert len(d.arms) == 4 and d.arm_probabilities == (0.25,) * 4 and not d.problems
    two = d.for_arms("didanosine", "zidovudine")
    assert two.arms == ("didanosine", "zidovudine") and two.treated == "didanosine"
    assert two.propensity == 0.5 and two.extra["other_arms"] == [
        "zidovudine+didanosine",
        "zidovudine+zalcitabine",
    ]
    _, spec = three_arm_files()
    d3 = read_dictionary(spec)
    # P(b | b or a) = 0.25 / (0.25 + 0.5): the design's conditional probability
    assert d3.for_arms("b", "a").propensity == pytest.approx(1 / 3)
    ratio = read_dictionary({**spec, "arm_probabilities": None, "randomization": "2:1:1"})
    assert ratio.arm_probabilities == pytest.approx((0.5, 0.25, 0.25))
    by_label = read_dictionary({**spec, "arm_probabilities": {"c": 0.25, "a": 0.5, "b": 0.25}})
    assert by_label.arm_probabilities == (0.5, 0.25, 0.25)
    bad = read_dictionary({**spec, "arm_probabilities": [0.5, 0.5, 0.5]}, strict=False)
    assert bad.arm_probabilities is None and "sum to 1" in str(bad.problems[0])
    assert read_dictionary(d.to_json()).arm_probabilities == d.arm_probabilities
    assert read_dictionary(d.to_csv()).arm_probabilities == d.arm_probabilities


def test_two_of_four_arms_keeps_every_row_and_the_others_at_weight_zero():
    d = read_dictionary(DEMO / "actg175_four_arms.json")
    trial = read_trial(
        DEMO / "actg175_four_arms.csv",
        dictionary=d,
        incomplete="keep",
        arms=("zidovudine+didanosine", "zidovudine"),
    )
    assert trial.n == 2139  # the file's row count: public
    assert trial.arms == ("zidovudine+didanosine", "zidovudine") and trial.design_propensity == 0.5
    assert trial.n_other_arms == 524 + 561 and trial.n_incomplete == 524 + 561
    assert int((trial.A[trial.complete] > 0).sum()) == 522
    B = trial.outcomes_for_fit(d.outcome_bounds, True)
    assert (B[~trial.complete] == 0.0).all()  # benefit 0: weight 0 in the fit
    with pytest.raises(TrialDataError, match="choose the two to compare"):
        read_trial(DEMO / "actg175_four_arms.csv", dictionary=d)
    with pytest.raises(TrialDataError, match="3 arms .*arm_probabilities"):  # no dictionary
        read_trial(io.BytesIO(three_arm_files()[0]), treatment="arm", outcome="y")
    with pytest.raises(TrialDataError, match="not an arm"):
        read_trial(DEMO / "actg175_four_arms.csv", dictionary=d, arms=("zidovudine", "placebo"))
    # treated= names which of the two is +1
    swapped = read_trial(
        DEMO / "actg175_four_arms.csv",
        dictionary=d,
        incomplete="keep",
        arms=("zidovudine+didanosine", "zidovudine"),
        treated="zidovudine",
    )
    assert swapped.arms == ("zidovudine", "zidovudine+didanosine")


def test_rows_of_other_arms_change_nothing_in_the_fit():
    """Sum-form objective: weight-0 rows add nothing, so (at ε = inf, a fixed γ) the rule on
    the whole file equals the rule on the file cut to the two arms."""
    data, spec = three_arm_files(120)
    kw = dict(epsilon=np.inf, gamma=5.0, feature_bounds=([18], [90]), outcome_bounds=(0, 10))
    whole = read_trial(data, dictionary=spec, arms=("b", "a"), incomplete="keep")
    lines = data.decode().splitlines(keepends=True)
    cut = (lines[0] + "".join(ln for ln in lines[1:] if ",c," not in ln)).encode()
    two = {
        **spec,
        "arm_probabilities": None,
        "propensity": 1 / 3,
        "treated": "b",
        "columns": [
            c if c["name"] != "arm" else {**c, "levels": ["b", "a"]} for c in spec["columns"]
        ],
    }
    small = read_trial(cut, dictionary=two, incomplete="keep")
    assert whole.n == 120 and small.n == 80 and whole.design_propensity == pytest.approx(1 / 3)
    a = DPOWL(**kw, larger_is_better=True).fit_trial(whole)
    b = DPOWL(**kw, larger_is_better=True).fit_trial(small)
    np.testing.assert_allclose(a.theta_, b.theta_, atol=1e-8)
    assert a.weight_bound_ == b.weight_bound_ == pytest.approx(30.0)  # 10 / min(1/3, 2/3)


def test_a_k_arm_trial_reads_every_arm_by_its_public_label():
    d = read_dictionary(DEMO / "actg175_four_arms.json")
    trial = read_arms_trial(DEMO / "actg175_four_arms.csv", dictionary=d)
    assert trial.n == 2139 and trial.arms == d.arms and trial.treated is None
    assert np.bincount(trial.A.astype(int)).tolist() == [532, 522, 524, 561]
    with pytest.raises(ValueError, match="DPOWL compares two arms.* with dpcore.owl.karm.KArmOWL"):
        DPOWL(outcome_bounds=(0, 1500), larger_is_better=True).fit_trial(trial)
    with pytest.raises(ValueError, match="PlugInRule compares two arms.* with .*PrivatePlugInArms"):
        PrivatePlugInRule(outcome_bounds=(0, 1500), larger_is_better=True).fit_trial(trial)
    one = {
        "treatment": "arm",
        "outcome": "y",
        "columns": [
            {"name": "x", "bounds": [0, 1]},
            {"name": "arm", "role": "treatment", "levels": ["a"]},
            {"name": "y", "role": "outcome", "bounds": [0, 1]},
        ],
    }
    with pytest.raises(TrialDataError, match="arms"):
        read_arms_trial(io.BytesIO(b"x,arm,y\n0.5,a,1\n"), dictionary=one)


# --------------------------------------------------------------------------------------------
# The K-arm rule


def test_each_rule_gets_epsilon_over_k_minus_one_and_its_own_pair():
    data = FOUR_ARM_TRIAL.sample(400, rng=0)
    kw = dict(
        outcome_bounds=FOUR_ARM_TRIAL.outcome_bounds,
        feature_bounds=FOUR_ARM_TRIAL.feature_bounds,
        gamma=60.0,
        larger_is_better=True,
    )
    m = KArmOWL(epsilon=1.5, rng=np.random.default_rng(1), **kw).fit(
        data["X"], data["A"], data["B"], FOUR_ARM_TRIAL.arm_probabilities, arms=FOUR_ARM_TRIAL.arms
    )
    assert m.epsilons_ == (0.5, 0.5, 0.5) and m.reference_ == "standard"
    assert m.compared_ == ("drug 1", "drug 2", "drug 3")
    assert m.weight_bounds_ == (48.0,) * 3  # 24 / min(1/2, 1/2)
    assert m.sensitivities_ == pytest.approx((2 * 48.0 / 60.0,) * 3, rel=1e-6)
    exact = KArmOWL(epsilon=np.inf, **kw).fit(
        data["X"], data["A"], data["B"], FOUR_ARM_TRIAL.arm_probabilities, arms=FOUR_ARM_TRIAL.arms
    )
    for j, arm in enumerate(exact.compared_):
        pair = np.isin(data["A"], [arm, "standard"])
        y = np.where(data["A"][pair] == arm, 1.0, -1.0)
        alone = DPOWL(epsilon=np.inf, **kw).fit(data["X"][pair], y, data["B"][pair], 0.5)
        np.testing.assert_allclose(exact.rules_[j].theta_, alone.theta_, atol=1e-8)
    # the noise: each rule's exact minimiser plus its own draw at epsilon / (K - 1), in order
    gen = np.random.default_rng(1)
    for j in range(3):
        noise = l2_gamma_noise(5, 0.5, m.sensitivities_[j], rng=gen)
        np.testing.assert_allclose(m.rules_[j].theta_, exact.rules_[j].theta_ + noise, atol=1e-9)
    assert rule_budget(2.0, 4) == 0.5


def test_the_recommendation_is_the_reference_unless_a_comparison_prefers_another_arm():
    scores = np.array([[-1.0, -0.2], [0.5, 0.1], [0.2, 0.9], [0.0, 0.0], [-3.0, 0.0], [0.3, 0.3]])
    got = choose_arm(scores, ("b", "c"), "a").tolist()
    assert got == ["a", "b", "c", "a", "a", "b"]  # a score of 0 goes to the reference


def test_the_k_arm_rule_learns_the_best_arm_without_noise():
    data, test = K_ARM_TRIAL.sample(3000, rng=2), K_ARM_TRIAL.sample(4000, rng=3)
    m = KArmOWL(
        epsilon=np.inf,
        gamma=5.0,
        larger_is_better=True,
        outcome_bounds=K_ARM_TRIAL.outcome_bounds,
        feature_bounds=K_ARM_TRIAL.feature_bounds,
    ).fit(data["X"], data["A"], data["B"], K_ARM_TRIAL.arm_probabilities, arms=K_ARM_TRIAL.arms)
    got = np.array([K_ARM_TRIAL.arms.index(a) for a in m.recommend(test["X"])])
    # chance is at most the largest best-arm share, 0.36; the linear rule reaches about 0.65+
    assert np.mean(got == test["best"]) > 0.6


def test_the_k_arm_fit_is_recorded_once_at_epsilon(tmp_path):
    from dpcore import PrivacyLedger

    ledger = PrivacyLedger()
    data = K_ARM_TRIAL.sample(300, rng=4)
    KArmOWL(
        epsilon=0.8,
        larger_is_better=True,
        outcome_bounds=K_ARM_TRIAL.outcome_bounds,
        feature_bounds=K_ARM_TRIAL.feature_bounds,
        rng=np.random.default_rng(0),
    ).fit(
        data["X"],
        data["A"],
        data["B"],
        K_ARM_TRIAL.arm_probabilities,
        arms=K_ARM_TRIAL.arms,
        ledger=ledger,
    )
    assert [e.epsilon for e in ledger.entries] == [0.8] and ledger.total()[0] == pytest.approx(0.8)


# --------------------------------------------------------------------------------------------
# Empirical DP audit of the whole K-arm release, and the twin that forgets to split ε


def karm_release(x0, eps, monkeypatch):
    """The K-arm release on designed neighbours, through KArmOWL's own code path.

    Three arms (reference r), ten rows, one feature, no intercept; only row 0 carries
    information: (x0, arm r, B = hi), so it enters both rules (label -1, weight W). The
    mechanism's calls are recorded (each rule's exact minimiser, ε and sensitivity, as
    KArmOWL passes them); the sampler adds each rule's noise in a batch with the same sampler
    (test_werm checks that the estimator adds exactly this noise) and returns the sum of the
    two released coefficients: a scalar whose privacy loss adds up over the two rules.
    """
    import dpcore.owl.dpwerm as dpwerm

    calls = []

    def record(theta_hat, epsilon, sensitivity, rng=None):
        calls.append((np.asarray(theta_hat, dtype=float), float(epsilon), float(sensitivity)))
        return np.asarray(theta_hat, dtype=float)

    X = np.zeros((10, 1))
    X[0, 0] = x0
    A = np.array(["r", "r", "a", "a", "a", "b", "b", "b", "r", "r"], dtype=object)
    B = np.zeros(10)
    B[0] = 1.0
    with monkeypatch.context() as patch:
        patch.setattr(dpwerm, "output_perturbation", record)
        KArmOWL(
            epsilon=eps,
            gamma=4.0,
            larger_is_better=True,
            outcome_bounds=(0.0, 1.0),
            feature_bounds=([-1.0], [1.0]),
            fit_intercept=False,
            reference="r",
            rng=np.random.default_rng(0),
        ).fit(X, A, B, (1 / 3, 1 / 3, 1 / 3), arms=("r", "a", "b"))
    assert len(calls) == 2

    def sample(size, rng):
        return sum(t[0] + l2_gamma_noise(1, e, s, size, rng)[:, 0] for t, e, s in calls)

    return sample


def test_k_arm_release_passes_the_audit_and_the_unsplit_twin_fails(monkeypatch):
    """1,000,000 draws per side (about 1 s): the sum of the two rules' coefficients moves by
    both rules' full shift, so spending ε on each rule doubles the privacy loss."""
    eps = 1.0
    ok = audit_epsilon(
        karm_release(1.0, eps, monkeypatch),
        karm_release(-1.0, eps, monkeypatch),
        eps,
        1_000_000,
        alpha=ALPHA,
        rng=11,
    )
    assert ok.passed and ok.epsilon_lb > 0.5 * eps
    # Broken: each rule spends the whole ε (no split), 2ε in total.
    monkeypatch.setattr(karm, "rule_budget", lambda epsilon, n_rules: float(epsilon))
    s, sp = karm_release(1.0, eps, monkeypatch), karm_release(-1.0, eps, monkeypatch)
    broken = audit_epsilon(s, sp, eps, 1_000_000, alpha=ALPHA, rng=12)
    assert not broken.passed and broken.epsilon_lb > 1.2 * eps


def test_the_demo_dictionaries_are_unchanged_for_two_arms():
    d = json.loads((DEMO / "actg175_trial.json").read_text())
    assert d["treated"] == "zidovudine+didanosine" and len(d["columns"][-2]["levels"]) == 2


# --------------------------------------------------------------------------------------------
# The rule file and the command line


def cli(*args):
    """``dpcore ARGS`` in this process; (exit code, stderr)."""
    import contextlib

    from dpcore import cli as command

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = command.main([str(a) for a in args])
    return code, err.getvalue()


def neighbours(tmp_path, n=90):
    """A three-arm file and its neighbour: one patient moved from compared arm a to arm c
    (with another outcome): the replaced patient crosses out of the comparison."""
    data, spec = three_arm_files(n)
    lines = data.decode().splitlines()
    i = next(j for j, ln in enumerate(lines[1:], 1) if ",a," in ln)
    age, _, _ = lines[i].split(",")
    moved = lines[:i] + [f"{age},c,9.5"] + lines[i + 1 :]
    (tmp_path / "s.csv").write_bytes(data)
    (tmp_path / "n.csv").write_text("\n".join(moved) + "\n")
    (tmp_path / "d.json").write_text(json.dumps(spec))
    return tmp_path / "s.csv", tmp_path / "n.csv", tmp_path / "d.json"


def released(tmp_path, data, dictionary, *flags):
    out = tmp_path / f"{data.stem}-{len(flags)}.json"
    code, err = cli(
        "fit",
        data,
        "--dictionary",
        dictionary,
        "--epsilon",
        "1",
        "--ledger",
        tmp_path / f"{data.stem}-{len(flags)}.sqlite",
        "--out",
        out,
        *flags,
    )
    assert code == 0, err
    return json.loads(out.read_text())


@pytest.mark.parametrize(
    "flags,noisy",
    [
        (("--arms", "a,b"), {"coef", "intercept"}),
        (("--arms", "b,a", "--evaluate", "0.5"), {"coef", "intercept", "evaluation"}),
        ((), {"scores"}),
        (("--evaluate", "0.5"), {"scores", "evaluation"}),
    ],
)
def test_neighbouring_files_give_rule_files_that_differ_only_in_the_noisy_part(
    tmp_path, flags, noisy
):
    """Privacy rule 10, two of K and K-arm: the patient moves between a compared arm and
    another arm; n, the arms, γ, W, the title, the columns and every other field agree."""
    s, sp, d = neighbours(tmp_path)
    a, b = released(tmp_path, s, d, *flags), released(tmp_path, sp, d, *flags)
    assert a.keys() == b.keys()
    differ = {k for k in a if a[k] != b[k]}
    assert differ <= noisy | {"released_at"}, differ
    assert a["n"] == b["n"] == (72 if "--evaluate" in flags else 90)  # the file's rows, split
    if "evaluation" in a:
        public = {"epsilon_eval", "patients", "level", "sensitivity_l1", "epsilon_split"}
        assert {k: a["evaluation"][k] for k in public} == {k: b["evaluation"][k] for k in public}
        assert a["evaluation"]["values"].keys() == b["evaluation"]["values"].keys()
    if "--arms" in flags:
        assert a["propensity"] == pytest.approx(1 / 3 if flags[1] == "b,a" else 2 / 3)
        assert a["compared_arms"] == flags[1].split(",") and a["arms_in_trial"] == ["a", "b", "c"]
    else:
        assert a["arms"] == ["a", "b", "c"] and a["epsilon_per_rule"] == 0.5


def test_a_k_arm_rule_file_applies_to_new_patients_as_the_model_does(tmp_path):
    from dpcore import load_rule
    from dpcore.owl.release import rule_from_karm
    from dpcore.owl.rule_file import write_rule

    d = read_dictionary(DEMO / "actg175_four_arms.json")
    trial = read_arms_trial(DEMO / "actg175_four_arms.csv", dictionary=d)
    model = KArmOWL(
        epsilon=2.0,
        outcome_bounds=d.outcome_bounds,
        reference="zidovudine",
        feature_bounds=trial.feature_bounds(d.bounds),
        rng=np.random.default_rng(0),
    ).fit_trial(trial)
    rule = rule_from_karm(model, trial)
    write_rule(rule, tmp_path / "k.json")
    loaded = load_rule(tmp_path / "k.json")
    patients = __import__("pandas").read_csv(DEMO / "actg175_four_arms.csv").head(300)
    got = loaded.recommend(patients)
    assert set(got) <= set(d.arms)
    frame = __import__("pandas").DataFrame(trial.X[:300], columns=list(trial.covariates))
    np.testing.assert_array_equal(got, model.recommend(frame))
    out = loaded.recommendations(patients.assign(age=patients["age"].where(patients.index != 3)))
    assert out["not_scored"][3] == "no value for 'age'" and pd.isna(out["recommendation"][3])
    keep = out.index != 3
    np.testing.assert_array_equal(out["recommendation"][keep].to_numpy(), got[keep])
    assert loaded.settings["title"] == "Private treatment rule over 4 arms (ε = 2)"
    # the file's own recipe, run without dpcore, agrees
    recipe = json.loads((tmp_path / "k.json").read_text())
    scope: dict = {"recipe": recipe}
    exec(recipe["apply_python"].replace("json.load(open(RULE_FILE))", "recipe"), scope)
    np.testing.assert_array_equal(scope["recommend"](patients.to_dict("records")), got)
    from dpcore.owl.rule_file import RuleFileError

    with pytest.raises(RuleFileError, match="reference and the arm"):
        load_rule({**recipe, "arms": ["x", "y"]})
    code, err = cli(
        "apply", tmp_path / "k.json", DEMO / "actg175_four_arms.csv", "--out", tmp_path / "rec.csv"
    )
    assert code == 0, err


def test_the_cli_says_what_a_k_arm_dictionary_is_missing(tmp_path):
    data, spec = three_arm_files()
    (tmp_path / "s.csv").write_bytes(data)
    (tmp_path / "d.json").write_text(json.dumps({**spec, "arm_probabilities": None}))
    base = fit_command(
        tmp_path / "s.csv", tmp_path / "d.json", tmp_path / "l.sqlite", tmp_path / "r.json"
    )
    code, err = cli(*base)
    assert code == 1 and "arm_probabilities" in err and "--arms" in err
    code, err = cli(*base, "--arms", "a")
    assert code == 1 and "two arms" in err
    assert not (tmp_path / "r.json").exists()


# --------------------------------------------------------------------------------------------
# The private evaluation of a K-arm rule


def test_arm_sums_estimate_each_policy_value_without_noise():
    """ε_eval = inf on 40,000 simulated rows: every value within 4 standard errors of truth."""
    from dpcore.owl.evaluation_arms import evaluate_arms_rule

    D = K_ARM_TRIAL
    data = D.sample(40_000, rng=5)
    rec = (data["X"][:, 1] > 0.5).astype(int) * 2  # a fixed rule: drug 2 when x2 > 1/2
    ev = evaluate_arms_rule(
        rec,
        data["code"],
        data["B"],
        D.arm_probabilities,
        outcome_bounds=D.outcome_bounds,
        epsilon=np.inf,
        arms=D.arms,
    )
    truth = {
        "rule": data["mean"][np.arange(40_000), rec].mean(),
        **{a: data["mean"][:, j].mean() for j, a in enumerate(D.arms)},
    }
    for name, value in truth.items():
        e = ev.values[name]
        half = (e.upper - e.lower) / 2  # about 1.96 standard errors (Bernstein-widened)
        assert abs(e.value - value) < 2 * half and e.lower <= value <= e.upper, name
    assert ev.gains["drug 1"].value == pytest.approx(
        ev.values["rule"].value - ev.values["drug 1"].value
    )


def arms_release(rows, eps, monkeypatch, sensitivity=None):
    """The K-arm evaluation's 2K cells on designed neighbours, through evaluate_arms_rule's own
    code: its Laplace draws are recorded (ε_1 and the scale it uses), then drawn in a batch by
    the same sampler. ``rows`` are row 0 of S and of S'; the audited scalar is the log-likelihood
    ratio statistic sum_j |o_j - mu_j| - |o_j - mu'_j| of the released vector o, a fixed function
    of the output (post-processing), which the audit bounds tightly."""
    import dpcore.owl.evaluation_arms as ea
    from dpcore import laplace_noise

    calls, means = [], []
    for row0 in rows:
        A, rec, B = np.zeros(20, int), np.zeros(20, int), np.full(20, 0.5)
        A[0], rec[0], B[0] = row0

        def record(epsilon, scale, size, rng=None, sampler="numpy"):
            calls.append((float(epsilon), float(scale)))
            return np.zeros(size)

        with monkeypatch.context() as patch:
            patch.setattr(ea, "sample_laplace", record)
            if sensitivity is not None:
                patch.setattr(ea, "arms_sensitivity", sensitivity)
            means.append(
                np.array(
                    ea.evaluate_arms_rule(
                        rec,
                        A,
                        B,
                        (0.5, 0.25, 0.25),
                        outcome_bounds=(0, 1),
                        epsilon=eps,
                        arms=("x", "y", "z"),
                    ).cells
                )
            )
    eps1, scale = calls[0]
    mu, mu_p = means

    def side(centre):
        def draw(size, rng):
            o = centre + laplace_noise(eps1, scale, (size, centre.size), rng)
            # rounded so that the statistic's atoms at its ends stay atoms in floating point
            return np.round((np.abs(o - mu) - np.abs(o - mu_p)).sum(axis=1), 9)

        return draw

    return side(mu), side(mu_p), eps1


def test_k_arm_evaluation_passes_the_audit_and_a_one_cell_sensitivity_twin_fails(monkeypatch):
    """The cells' part (ε_1 of ε_eval) audited at its own ε_1; the twin uses b/m, the reach of
    one row's term, forgetting that a replaced row leaves one cell and enters another (half of
    the cells' sensitivity 2b/m)."""
    # (A, d, B): T = +b in C_(y, rec), then -b in C_(z, rec) (arms y and z at p_min = 1/4)
    worst = [(1, 1, 1.0), (2, 2, 0.0)]
    s, sp, eps1 = arms_release(worst, 1.0, monkeypatch)
    ok = audit_epsilon(s, sp, eps1, 400_000, alpha=ALPHA, rng=13)
    assert ok.passed and ok.epsilon_lb > 0.8 * eps1

    def half(bounds, p_min, m):
        b = (bounds[1] - bounds[0]) / (2 * p_min)
        return b / m, b * b / m

    s, sp, _ = arms_release(worst, 1.0, monkeypatch, half)
    broken = audit_epsilon(s, sp, eps1, 400_000, alpha=ALPHA, rng=14)
    assert not broken.passed and broken.epsilon_lb > 1.3 * eps1


def test_the_joint_values_and_the_best_arm_spend_no_noise_of_their_own(monkeypatch):
    """The "is one arm best on average?" answer is post-processing of the released cells: the
    evaluation draws the 2K cells', the 2K moments' and the K counts' noise once each, and the
    joint intervals come from those same draws (a twin that re-draws per confidence level would
    spend ε_eval twice and is caught here)."""
    from dpcore.owl import evaluation_arms as ea

    draws = []

    def counted(epsilon, sensitivity, size=(), rng=None, sampler="numpy"):
        draws.append(int(np.prod(size)))
        return np.zeros(size)  # the noise itself does not matter here, only how often

    monkeypatch.setattr(ea, "sample_laplace", counted)
    D = K_ARM_TRIAL
    data = D.sample(600, rng=6)
    k = len(D.arms)
    ev = ea.evaluate_arms_rule(
        np.zeros(600, dtype=int),
        data["code"],
        data["B"],
        D.arm_probabilities,
        outcome_bounds=D.outcome_bounds,
        epsilon=1.0,
        arms=D.arms,
        include=np.ones(600, dtype=bool),
    )
    assert draws == [2 * k, 2 * k, k]
    assert set(ev.joint_values) == set(D.arms)
    for arm, (lo, hi) in ev.joint_values.items():  # wider than each arm's own interval
        assert lo <= ev.values[arm].lower and ev.values[arm].upper <= hi


def test_k_arm_cells_and_counts_move_by_at_most_their_sensitivities():
    """Random replacements of one row (arm, recommendation, outcome, completeness): the 2K cells
    move by at most Delta_1 = 2b/m, their moments by at most Delta_2 = 2b^2/m and the K counts
    of complete rows by at most 2 in L1."""
    from dpcore.owl.evaluation_arms import arm_cells, arms_sensitivity
    from dpcore.owl.evaluation_common import COUNT_SENSITIVITY, arm_complete_counts

    p, bounds, m = (0.5, 0.25, 0.25), (0.0, 1.0), 30
    d1, d2 = arms_sensitivity(bounds, 0.25, m)
    rng = np.random.default_rng(80)
    A, rec = rng.integers(0, 3, m), rng.integers(0, 3, m)
    B, keep = rng.uniform(-1, 2, m), rng.random(m) > 0.3
    base = [arm_cells(rec, A, B, p, bounds, keep, q) for q in (1, 2)]
    counts = arm_complete_counts(A, 3, keep)
    for _ in range(500):
        A2, rec2, B2, keep2 = A.copy(), rec.copy(), B.copy(), keep.copy()
        i = rng.integers(m)
        A2[i], rec2[i], B2[i], keep2[i] = (
            rng.integers(3),
            rng.integers(3),
            rng.uniform(-1, 2),
            rng.random() < 0.5,
        )
        for q, sens in ((1, d1), (2, d2)):
            moved = arm_cells(rec2, A2, B2, p, bounds, keep2, q) - base[q - 1]
            assert np.abs(moved).sum() <= sens * (1 + 1e-12)
        assert np.abs(arm_complete_counts(A2, 3, keep2) - counts).sum() <= COUNT_SENSITIVITY


def test_k_arm_values_are_each_arms_complete_case_means_whatever_the_bounds():
    """One arm loses 40% of its rows, the others none; ε_eval = inf: each arm's value is exactly
    its complete rows' mean outcome under bounds with different midpoints (one share of all
    complete rows for every arm moved them), and the K counts, released per arm, have the
    same shape in neighbouring files (a patient moving arm and completeness)."""
    from dpcore.owl.evaluation_arms import evaluate_arms_rule

    D = K_ARM_TRIAL
    data = D.sample(20_000, rng=81)
    rec = (data["X"][:, 1] > 0.5).astype(int) * 2
    keep = np.random.default_rng(82).random(20_000) >= np.where(data["code"] == 1, 0.4, 0.0)
    B = np.clip(data["B"], *D.outcome_bounds)
    lo, hi = D.outcome_bounds
    for bounds in ((lo, hi), (lo, hi + 3 * (hi - lo)), (lo - 2 * (hi - lo), hi)):
        ev = evaluate_arms_rule(
            rec,
            data["code"],
            B,
            D.arm_probabilities,
            outcome_bounds=bounds,
            epsilon=np.inf,
            arms=D.arms,
            include=keep,
        )
        for j, arm in enumerate(D.arms):
            rows = keep & (data["code"] == j)
            assert ev.values[arm].value == pytest.approx(B[rows].mean(), rel=1e-10), (bounds, arm)
    kw = dict(outcome_bounds=(lo, hi), epsilon=1.0, arms=D.arms, rng=83)
    A2, keep2 = data["code"].copy(), keep.copy()
    i = int(np.flatnonzero(keep & (A2 == 0))[0])
    A2[i], keep2[i] = 2, False
    a = evaluate_arms_rule(rec, data["code"], B, D.arm_probabilities, include=keep, **kw).to_dict()
    b = evaluate_arms_rule(rec, A2, B, D.arm_probabilities, include=keep2, **kw).to_dict()
    noisy = {"sums", "second_moments", "cells", "cell_second_moments", "complete_rows_noisy"}
    noisy |= {"values", "gains", "verdict", "summary", "values_joint", "best_on_average"}
    assert a.keys() == b.keys()
    assert {k: a[k] for k in a.keys() - noisy} == {k: b[k] for k in b.keys() - noisy}
    loose = {"verdict", "summary", "best_on_average"}
    assert all(a[k].keys() == b[k].keys() for k in noisy - loose)
    assert list(a["complete_rows_noisy"]) == list(D.arms)


def test_the_first_answer_over_k_arms_names_the_best_single_arm_only_when_shown():
    """Each arm's value at 1 - α/K (all K intervals together at the level): one arm clearly
    best is named; arms alike are not told apart; smaller-is-better picks the lowest."""
    from dpcore.owl.evaluation_arms import evaluate_arms_rule

    rng = np.random.default_rng(90)
    m, arms = 3000, ("a", "b", "c")
    A = rng.integers(0, 3, m)
    for means, larger, expected in (
        ((0.0, 0.0, 3.0), True, "c"),
        ((0.0, 0.0, 0.0), True, None),
        ((0.0, 0.0, 3.0), False, None),  # c is worst: a and b cannot be told apart
        ((3.0, 3.0, 0.0), False, "c"),
    ):
        B = np.clip(rng.normal(np.asarray(means)[A], 1.0), -10, 10)
        ev = evaluate_arms_rule(
            A,
            A,
            B,
            (1 / 3, 1 / 3, 1 / 3),
            outcome_bounds=(-10, 10),
            epsilon=50.0,
            arms=arms,
            larger_is_better=larger,
            rng=91,
        )
        assert ev.best_on_average == expected, (means, larger)
        assert ev.to_dict()["best_on_average"] == expected
        assert ev.summary().startswith(
            "On average no single arm" if expected is None else f"On average '{expected}'"
        )
