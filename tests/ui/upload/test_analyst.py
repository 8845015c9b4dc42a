"""The analyst tools' computations, charts and sentences (outside Streamlit)."""

from pathlib import Path

import numpy as np
import pytest

from dpcore import read_dictionary, read_trial
from dpcore.owl.evaluation import evaluate_rule
from dpcore.owl.simulate import PAPER_TRIAL, optimal_treatment
from dpcore.release.preview_reading import smallest_epsilon
from dpcore_app.ui.upload import analyst_compute as analyst
from dpcore_app.ui.upload import analyst_explain as explain
from dpcore_app.ui.upload import preview_charts as charts
from tests.releases import page_release

DEMO = Path(__file__).resolve().parents[3] / "dpcore_app" / "demo_data"


def twin(n):
    """A two-covariate twin (one 0/1 column), smaller outcomes better, 2:1 randomization."""
    return analyst.twin_design(
        n, (0.0, 40.0), (1.0, 80.0), (True, False), (0.0, 20.0), False, 2 / 3, dominant=False
    )


def twin_preview(n, grid, gammas):
    """The page's preview on the twin of ``n`` patients over the ε ``grid`` at ``gammas``,
    W = 60."""
    return analyst.twin_preview(twin(n), grid, gammas, 60.0, 0.0)


def small_preview(eps=1.0):
    grid = (0.5, 1.0, 5.0)
    gammas = analyst.preview_gammas(grid, 300, 60.0, 42.0, eps, "paper")
    assert gammas[1] == 42.0 and gammas[0] != 42.0
    return twin_preview(300, grid, gammas)


def test_preview_chart_and_sentence():
    frame = small_preview()
    fig = charts.agreement_curve(frame, 1.0, target=80)
    assert fig.layout.xaxis.type == "log" and len(fig.data) == 6
    gain = charts.gain_curve(frame, 1.0, "days")
    assert gain.layout.title.text.startswith("Preview") and "(days)" in gain.layout.yaxis.title.text
    # the gain in outcome units, never a ratio past 100%: its band is the releases' own
    part = frame[frame["strength"] == "weak"].sort_values("epsilon")
    assert (part["gain_lo"] <= part["gain_mean"]).all() and (
        part["gain_mean"] <= part["gain_hi"]
    ).all()
    text = explain.preview_sentence(
        frame, "strong", 1.0, 80, smallest_epsilon(frame, 80, "strong"), "days"
    )
    assert "Simulated, no privacy spent" in text and "6 days" in text


def test_held_gamma_when_not_from_the_paper():
    assert analyst.preview_gammas((0.5, 1.0), 300, 60.0, 42.0, 1.0, "proxy") == (42.0, 42.0)
    assert analyst.preview_grid(3.0) == tuple(sorted(set(analyst.PREVIEW_EPS) | {3.0}))


def test_noise_sentence_names_the_largest_shift():
    noise = analyst.noise_lengths((0.0, 40.0), (1.0, 80.0), 1.0, 60.0, 100.0, 0.0, 300)
    text = explain.noise_sentence(noise, ["x", "age"], 1.0)
    # Scaling divides by max(|lower|, |upper|): a column on [40, 80] moves less across its bounds.
    assert "dΔ/ε" in text and "'x'" in text
    assert noise["across_bounds"][1] == np.float64(noise["across_bounds"][0]) / 2


def test_the_filled_table_downloads_as_the_dictionary_it_came_from():
    d = read_dictionary(DEMO / "hospital_trial.json")
    trial = read_trial(DEMO / "hospital_trial.csv", **d.read_trial_kwargs())
    got = analyst.dictionary_from_settings(
        trial, d.bounds, d.outcome_bounds, d.larger_is_better, d.propensity, base=d
    )
    assert got.bounds == d.bounds and got.categorical == d.categorical
    assert got.outcome_bounds == d.outcome_bounds and got.treated == d.treated
    assert got.propensity == d.propensity and got.larger_is_better is False
    assert got.column("age").unit == "years"
    assert read_dictionary(got.to_csv()) == got


def paper_evaluation(arms):
    """The private evaluation (ε = 1) of the optimal rule on 500 patients of the paper's trial,
    its arms named ``arms`` (treated, control)."""
    t = PAPER_TRIAL.sample(500, rng=1)
    return evaluate_rule(
        optimal_treatment(t["f"]),
        t["A"],
        t["B"],
        0.5,
        outcome_bounds=(-10, 10),
        epsilon=1.0,
        rng=2,
        arms=arms,
    )


def test_evaluation_and_cost_sentences():
    ev = paper_evaluation(("drug", "placebo"))
    assert "'drug'" in explain.evaluation_sentence(ev)
    assert "max(ε, ε_eval) = 2" in explain.cost_sentence(2.0, 1.0, 400, 100)


def test_report_sections_escape_and_carry_released_numbers_only():
    from dpcore_app.ui.upload import report_parts

    ev = paper_evaluation(("<b>drug</b>", "placebo"))
    part = report_parts.evaluation_html(ev, 1.0, 400, "points")
    assert "<b>drug</b>" not in part and "&lt;b&gt;drug&lt;/b&gt;" in part
    assert f"{ev.values['rule'].value:.4g}" in part
    frame = small_preview()
    html_ = report_parts.preview_html(
        frame, charts.agreement_curve(frame, 1.0), 1.0, "strong", 90, None, "days"
    )
    assert "no privacy spent" in html_ and "<script" in html_ and "plotly.js v" not in html_


def test_the_pages_evaluated_release_draws_its_laplace_noise_with_opendp(monkeypatch):
    """On uploaded data the evaluation's noise comes from OpenDP's sampler (the page's path)."""
    import dpcore.privacy.mechanisms as mech

    calls = []
    monkeypatch.setattr(
        mech, "opendp_laplace_noise", lambda e, s, size: calls.append((e, size)) or np.zeros(size)
    )
    d = read_dictionary(DEMO / "hospital_trial.json")
    trial = read_trial(DEMO / "hospital_trial.csv", **d.read_trial_kwargs(), incomplete="keep")
    settings = dict(
        bounds=d.bounds,
        outcome_bounds=d.outcome_bounds,
        larger_is_better=False,
        eps=1.0,
        gamma=60.0,
        gamma_source="test",
        W=60.0,
        propensity=2 / 3,
        evaluation=(0.5, 0.8),
    )
    data = (DEMO / "hospital_trial.csv").read_bytes()
    release, rec = page_release(data, trial, settings, p_min=0.05, seed=None)
    ev = release.made.evaluation
    # The file keeps its incomplete rows, so each arm's count of complete rows is released too
    # (cells 0.55, moments 0.25 and the two counts 0.20 of ε_eval = 0.5).
    assert [c[0] for c in calls] == pytest.approx([0.275, 0.125, 0.1])
    assert [c[1] for c in calls] == [4, 4, 2]
    assert ev.m == 240 and release.n == 960 and len(ev.complete) == 2
    assert rec.shape == (1200,)


def test_a_binary_column_is_one_click_in_the_metadata_table():
    from dpcore_app.ui.upload import meta

    frame = meta.table(
        ["smoker", "age"],
        "y",
        {
            "smoker": {"type": "binary"},
            "age": {"lower": 18.0, "upper": 90.0},
            "y": {"lower": 0.0, "upper": 1.0},
        },
    )
    got = meta.read(frame, "y")
    assert got.complete and got.bounds == {"smoker": (0.0, 1.0), "age": (18.0, 90.0)}
    d = read_dictionary(DEMO / "actg175_trial.json").to_dict()
    rows = meta.from_dictionary(d, ["hemo", "age"])
    assert rows["hemo"]["type"] == "binary" and rows["age"]["lower"] == 12.0


def test_the_preview_sentence_is_as_strong_as_its_numbers():
    """The value kept is given as a share only in [0, 100%], otherwise as the two gains; a band
    of single releases spanning most of 0–100% is called too wide, not presented as information."""
    import pandas as pd

    from dpcore_app.ui.upload.analyst_explain import preview_sentence, twin_assumptions

    def frame(kept, lo, hi, base=2.0):
        return pd.DataFrame(
            [
                {
                    "strength": "moderate",
                    "epsilon": 1.0,
                    "effect_sd": 1.5,
                    "agreement_mean": 70.0,
                    "agreement_lo": lo,
                    "agreement_hi": hi,
                    "retained_mean": kept,
                    "nonprivate_gain": base,
                }
            ]
        )

    text = preview_sentence(frame(0.6, 55, 85), "moderate", 1.0, 90, None)
    assert "keeps 60% of its gain" in text and "between 55% and 85%" in text
    text = preview_sentence(frame(2.05, 55, 85), "moderate", 1.0, 90, None, "days")
    assert "205%" not in text and "gains 4.1 days over the better fixed arm" in text
    assert "against 2 days for the non-private rule" in text
    text = preview_sentence(frame(-0.4, 0, 100), "moderate", 1.0, 90, None)
    assert "too wide to say what one release will do" in text and "-40%" not in text
    assert "240 patients" in twin_assumptions(240) and "no average difference" in twin_assumptions(
        240
    )
    assert "dominant arm" in twin_assumptions(240, dominant=True)
    assert "Two releases" not in text  # a frame without the paired draws says nothing of them


def test_the_preview_says_how_often_two_releases_would_disagree():
    """Before a release the analyst reads how differently a second release at the same ε would
    treat the same patients, so opposite policies are expected, not a surprise; a coin flip is
    named only when the pairs' band holds 50%."""
    import pandas as pd

    from dpcore_app.ui.upload.analyst_explain import preview_sentence

    def frame(d, lo, hi):
        return pd.DataFrame(
            [
                {
                    "strength": "moderate",
                    "epsilon": 2.0,
                    "effect_sd": 1.5,
                    "agreement_mean": 70.0,
                    "agreement_lo": 55,
                    "agreement_hi": 85,
                    "retained_mean": 0.6,
                    "nonprivate_gain": 2.0,
                    "disagreement_mean": d,
                    "disagreement_lo": lo,
                    "disagreement_hi": hi,
                }
            ]
        )

    text = preview_sentence(frame(31.4, 12, 55), "moderate", 2.0, 90, None)
    assert "Two releases at ε = 2 on the same trial" in text and "about 31% of its patients" in text
    assert "between 12% and 55%" in text and "coin flips" in text
    text = preview_sentence(frame(8.0, 2, 20), "moderate", 2.0, 90, None)
    assert "about 8% of its patients" in text and "coin flips" not in text
    assert "0.37%" in preview_sentence(frame(0.37, 0, 1), "moderate", 2.0, 90, None)  # never "0%"


def test_the_dominant_arm_twin_has_the_average_advantage_it_names():

    from dpcore.owl.simulate import TwinDesign

    design = TwinDesign(
        n=20000, lower=(0.0,) * 4, upper=(1.0,) * 4, outcome_bounds=(0.0, 10.0), average_effect=0.1
    )
    effect = design.sample([0.15], rng=0)["effect"][0.15]
    assert abs(effect.mean() - 1.0) < 0.05  # 10% of the range R = 10
    assert (
        abs(
            TwinDesign(n=20000, lower=(0.0,) * 4, upper=(1.0,) * 4, outcome_bounds=(0.0, 10.0))
            .sample([0.15], rng=0)["effect"][0.15]
            .mean()
        )
        < 0.05
    )


def test_the_preview_eps_axis_has_labelled_1_2_5_ticks_only():
    import pandas as pd

    from dpcore_app.ui.upload.preview_charts import agreement_curve

    rows = [
        {
            "strength": "moderate",
            "epsilon": e,
            "agreement_mean": 60.0,
            "agreement_lo": 50.0,
            "agreement_hi": 70.0,
        }
        for e in (0.1, 1.0, 10.0, 100.0)
    ]
    fig = agreement_curve(pd.DataFrame(rows), 1.0)
    assert list(fig.layout.xaxis.ticktext) == [
        "0.1",
        "0.2",
        "0.5",
        "1",
        "2",
        "5",
        "10",
        "20",
        "50",
        "100",
    ]


def test_the_release_headline_is_green_only_when_the_evaluation_shows_the_rule_beats_both_arms():
    from types import SimpleNamespace

    from dpcore.release import ReleasePlan
    from dpcore_app.ui.upload.explain import deploy_verdict

    plan = ReleasePlan(epsilon=1.0, epsilon_eval=1.0)
    rel = SimpleNamespace(private=True, epsilon=1.0, void="", made=SimpleNamespace(plan=plan))
    ev = lambda verdict: SimpleNamespace(verdict=verdict, level=0.95)  # noqa: E731
    kind, text = deploy_verdict(rel, 1.0, ev("better"))
    assert kind == "success" and "beats treating everyone with either arm (95% intervals)" in text
    kind, text = deploy_verdict(rel, 1.0, ev("inconclusive"))
    assert kind == "warning" and "do not deploy it on this evidence" in text
    kind, text = deploy_verdict(rel, 1.0, ev("worse"))
    assert kind == "warning" and "do not deploy it" in text
    kind, text = deploy_verdict(rel, 1.0, None)
    assert kind == "info" and "not evaluated" in text
    assert (
        deploy_verdict(
            SimpleNamespace(private=False, epsilon=1.0, void="bounds from the data"),
            1.0,
            ev("better"),
        )[0]
        == "warning"
    )


def test_the_downloaded_dictionary_keeps_the_covariates_order():
    """A categorical covariate chosen after a numeric one stays after it: a release from the
    downloaded dictionary (and its rerun script) fits the same column order as the page's."""
    d = read_dictionary(DEMO / "hospital_trial.json")
    trial = read_trial(
        DEMO / "hospital_trial.csv",
        **{**d.read_trial_kwargs(), "covariates": ["age", "frailty", "site"]},
    )
    got = analyst.dictionary_from_settings(
        trial, d.bounds, d.outcome_bounds, d.larger_is_better, d.propensity, base=d
    )
    assert got.covariates == ["age", "frailty", "site"]
    again = read_trial(DEMO / "hospital_trial.csv", **got.read_trial_kwargs())
    assert again.covariates == trial.covariates


def test_the_learner_sentence_is_as_strong_as_its_interval():
    """A learner is named only when the 95% Monte-Carlo interval of the difference excludes
    0; otherwise the sentence says the preview cannot tell. Each says it is a linear-effect
    twin, not the analyst's trial."""
    rec = dict(plugin=61.2, dp_owl=54.7, releases=200)
    picked = explain.learner_sentence(
        dict(rec, learner="plug-in", difference=6.5, ci=(2.6, 10.4)), "moderate", 1.0
    )
    assert "6.5 more patients in 100 get the better arm with the private plug-in rule" in picked
    assert "95% Monte-Carlo interval 2.6 to 10.4" in picked and "not on your trial" in picked
    owl = explain.learner_sentence(
        dict(rec, learner="dp-owl", difference=-4.0, ci=(-7.5, -0.5)), "weak", 100.0, "dp-owl"
    )
    assert "4.0 more patients in 100 get the better arm with DP-OWL (your choice)" in owl
    assert "interval 0.5 to 7.5" in owl
    unsure = explain.learner_sentence(
        dict(rec, learner=None, difference=1.2, ci=(-1.0, 3.4)), "weak", 0.1
    )
    assert "cannot tell which learner is better" in unsure and "+1.2 points" in unsure
    assert "more patients" not in unsure and "linear in the covariates" in unsure
    nan = float("nan")
    one = explain.learner_sentence(
        dict(rec, learner=None, difference=1.0, ci=(nan, nan)), "weak", 1
    )
    assert "cannot tell" in one and "nan" not in one


@pytest.mark.parametrize("eps", [0.1, 100.0])
@pytest.mark.parametrize("n", [20, 300])
def test_the_learner_comparison_at_the_extremes_of_the_grid_and_of_n(eps, n):
    """The smallest and largest ε of the preview's grid, the smallest n: the sentence is
    well formed, and a learner is named exactly when the interval excludes 0."""
    from dpcore.release.preview_reading import recommend_learner

    grid = (0.1, 1.0, 100.0)
    frame = twin_preview(n, grid, analyst.preview_gammas(grid, n, 60.0, 42.0, 1.0, "paper"))
    rec = recommend_learner(frame, "moderate", eps)
    text = explain.learner_sentence(rec, "moderate", eps)
    assert f"ε = {eps:g}" in text and "nan" not in text and "not on your trial" in text
    lo, hi = rec["ci"]
    assert (rec["learner"] is None) == (lo <= 0 <= hi)
    assert ("cannot tell" in text) == (rec["learner"] is None)
    fig = charts.learners_curve(frame, "moderate", eps)
    assert len(fig.data) == 4 and fig.layout.yaxis.title.text.startswith("given the better arm")


def test_the_report_says_which_learner_the_preview_favours():
    from dpcore_app.ui.upload import report_parts

    frame = small_preview()
    html_ = report_parts.preview_html(
        frame,
        charts.agreement_curve(frame, 1.0),
        1.0,
        "strong",
        90,
        None,
        "days",
        learner="plug-in",
        learners=charts.learners_curve(frame, "strong", 1.0),
    )
    assert "Which learner?" in html_ and "not on your trial" in html_
    assert "a DP-OWL release at ε = 1" in html_ and html_.count("<script") >= 2


def test_the_heterogeneity_sentence_at_both_ends():
    said = explain.needed_sentence(1.5, 5.0, 960, "days", (0.0, 20.0))
    assert "SD of about 1.5 days" in said and "ε = 5 with 960 patients" in said
    said = explain.needed_sentence(None, 0.1, 50, "", (0.0, 20.0))
    assert "even an effect that varies between patients with an SD of 8 is not enough" in said
    assert "larger ε or more patients" in said
