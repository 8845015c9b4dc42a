"""The Overview's chart: many possible releases of one count, at every ε of its slider."""

import numpy as np

from dpcore_app.ui.overview import charts
from tests.ui.slider_steps import check_steps


def test_the_release_chart_carries_every_eps_as_a_step_of_its_own():
    grid = (0.1, 1.0, 10.0)
    rng = np.random.default_rng(0)
    releases = {e: np.round(412 + rng.laplace(0, 1 / e, 200)) for e in grid}
    static = {e: charts.noisy_count(412, releases[e], e) for e in grid}
    fig = charts.noisy_count_steps(412, releases, 0.1)
    assert check_steps(fig, static, 0.1) == ["0.1", "1", "10"]
    title = fig.to_dict()["layout"]["sliders"][0]["steps"][2]["args"][1]["title.text"]
    assert title == "<b>What an ε = 10 release of the count could show</b>"
