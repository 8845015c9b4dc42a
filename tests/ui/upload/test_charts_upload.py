"""The Your data page's chart: public numbers in, a labelled figure out, user text escaped."""

import numpy as np

from dpcore_app.ui.upload.charts import rule_effects


def test_bars_are_the_effects_sorted_by_size_and_coloured_by_arm():
    fig = rule_effects(["age", "site=B", "dose"], [0.5, -2.0, 0.1], "drug", "placebo")
    bar = fig.data[0]
    assert list(bar.y) == ["dose", "age", "site=B"]
    np.testing.assert_allclose(bar.x, [0.1, 0.5, -2.0])
    assert bar.marker.color[0] != bar.marker.color[2]  # favours treated vs control
    assert fig.layout.title.text and "drug" in fig.layout.xaxis.title.text


def test_user_text_is_escaped_for_plotly():
    fig = rule_effects(["<a href='x'>age</a>"], [1.0], "<b>t</b>", "c")
    assert "<" not in fig.data[0].y[0] and "<b>" not in fig.layout.xaxis.title.text


def test_height_grows_with_the_number_of_covariates():
    few = rule_effects(["a"], [1.0], "t", "c").layout.height
    many = rule_effects([f"x{i}" for i in range(20)], np.ones(20), "t", "c").layout.height
    assert many > few


def test_a_wide_rule_draws_its_largest_effects():
    fig = rule_effects([f"x{i}" for i in range(2000)], np.arange(2000.0), "t", "c")
    assert len(fig.data[0].y) == 30 and fig.data[0].y[-1] == "x1999"
    assert "30 largest of 2000" in fig.layout.title.text
