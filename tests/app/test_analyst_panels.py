"""AppTest of the analyst panels on their own: the preview, the evaluation, the dictionary."""

from streamlit.testing.v1 import AppTest


def panels_script():
    from pathlib import Path

    import streamlit as st

    from dpcore import read_dictionary, read_trial
    from dpcore.owl.evaluation_fit import fit_and_evaluate
    from dpcore_app.ui.upload import analyst_panels as panels
    from dpcore_app.ui.upload import dictionary_panels

    demo = Path("dpcore_app/demo_data")
    d = read_dictionary(demo / "hospital_trial.json")
    trial = read_trial(demo / "hospital_trial.csv", **d.read_trial_kwargs())
    lower, upper = trial.feature_bounds(d.bounds)
    binary = dictionary_panels.binary_flags(trial.covariates, trial.categories, d)
    panels.preview_panel(
        trial.n,
        trial.covariates,
        lower,
        upper,
        binary,
        d.outcome_bounds,
        d.larger_is_better,
        d.propensity,
        None,
        60.0,
        0.0,
        1.0,
        60.0,
        "paper",
        unit="days",
    )
    on, eps_eval, share = panels.evaluation_controls(1.0)
    if on:
        model, ev, (fit_rows, _) = fit_and_evaluate(
            trial.X,
            trial.A,
            trial.B,
            d.propensity,
            epsilon_fit=1.0,
            epsilon_eval=eps_eval,
            fit_share=share,
            gamma=60.0,
            weight_bound=60.0,
            feature_bounds=(lower, upper),
            outcome_bounds=d.outcome_bounds,
            larger_is_better=False,
            arms=trial.arms,
            rng=0,
        )
        panels.evaluation_panel(ev, 1.0, len(fit_rows), unit="days")
    dictionary_panels.dictionary_downloads(d, "hospital")
    st.write(dictionary_panels.dictionary_uploader() is None)


def test_preview_evaluation_and_dictionary_panels_render():
    at = AppTest.from_function(panels_script, default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    text = " ".join(str(m.value) for m in at.markdown) + " ".join(str(c.value) for c in at.caption)
    assert "Simulated, no privacy spent" in text
    assert "max(ε, ε_eval) = 1" in text
    assert [m.label for m in at.metric][:1] == ["Private rule"]
    at.toggle(key="evaluate").set_value(False).run()
    assert not at.exception and not at.metric
    at.segmented_control(key="preview_strength").set_value("strong").run()
    assert not at.exception
    assert "strong effects" in " ".join(str(m.value) for m in at.markdown)
