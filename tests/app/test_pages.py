"""AppTest: every page from the entrypoint, controls change what is plotted, bad links are safe."""

import base64
import json
import math

import numpy as np
import pytest

from dpcore_app.ui.common.grids import EPS_OPTIONS
from tests.app.conftest import page_sweep

FAST = {"reps": "20", "compare": ["200"]}  # keep the Monte Carlo small


def arr(x):
    """A plotly JSON array: a list, or numpy's base64 {"dtype", "bdata"} encoding."""
    if isinstance(x, dict):
        return np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
    return np.asarray(x)


def figure(at, key):
    """The plotly figure JSON of the chart with this key."""
    for chart in at.get("plotly_chart"):
        if chart.proto.id and key in chart.proto.id or getattr(chart, "key", None) == key:
            return json.loads(chart.proto.spec)
    charts = at.get("plotly_chart")
    raise AssertionError(f"no chart {key!r} among {[c.proto.id for c in charts]}")


@pytest.mark.parametrize(
    "page",
    [
        "dpcore_app/app_pages/overview.py",
        "dpcore_app/app_pages/dp_owl.py",
        "dpcore_app/app_pages/limitations.py",
    ],
)
def test_every_page_runs_without_exception(open_page, page):
    at = open_page(page, **(FAST if page.endswith("dp_owl.py") else {}))
    assert at.title[0].value
    assert not at.warning  # no notices on a clean link


def test_overview_slider_changes_the_release(open_page):
    at = open_page("dpcore_app/app_pages/overview.py")
    before = figure(at, "noisy_count")
    at.select_slider(key="overview.demo_eps").set_value(0.1).run()
    assert not at.exception
    after = figure(at, "noisy_count")
    spread = lambda fig: np.std(arr(fig["data"][0]["x"]))  # noqa: E731
    assert spread(after) > 5 * spread(before)  # ten times less ε, ten times the noise
    assert "0.1" in at.info[0].value and "%" in at.info[0].value


def test_epsilon_slider_changes_the_plotted_data(open_page):
    at = open_page("dpcore_app/app_pages/dp_owl.py", **FAST)
    dist_before = arr(figure(at, "dist")["data"][0]["x"])
    at.select_slider(key="dp-owl.eps").set_value(0.1).run()
    assert not at.exception
    dist_after = arr(figure(at, "dist")["data"][0]["x"])
    assert np.mean(dist_after) < np.mean(dist_before)  # less privacy budget, less accuracy
    assert "ε = 0.1" in at.info[0].value


def test_curves_match_the_engine(open_page):
    at = open_page("dpcore_app/app_pages/dp_owl.py", **FAST)
    engine = page_sweep([1000], EPS_OPTIONS, 20).summary
    finite = engine[np.isfinite(engine.epsilon)].sort_values("epsilon")
    fig = figure(at, "vs_eps")
    line = next(t for t in fig["data"] if t.get("name") == "private, n = 1000")
    np.testing.assert_allclose(arr(line["x"]), finite.epsilon)
    np.testing.assert_allclose(arr(line["y"]), finite.accuracy_mean)
    shown = at.metric[0].value
    assert shown == f"{finite[finite.epsilon == 1.0].accuracy_mean.iloc[0]:.1f}%"


def test_value_view_shows_references(open_page):
    at = open_page("dpcore_app/app_pages/dp_owl.py", metric="value", **FAST)
    fig = figure(at, "vs_eps")
    texts = [a.get("text", "") for a in fig["layout"].get("annotations", [])]
    assert any("oracle" in t for t in texts) and any("treat everyone" in t for t in texts)
    assert "outcome units" in fig["layout"]["yaxis"]["title"]["text"]


def test_nonprivate_setting(open_page):
    at = open_page("dpcore_app/app_pages/dp_owl.py", eps="non-private", **FAST)
    assert math.isinf(at.select_slider(key="dp-owl.eps").value)
    assert "Without privacy" in at.info[0].value


@pytest.mark.parametrize(
    "params,keys",
    [
        ({"eps": "-3", "n": "abc"}, ["eps=-3", "n=abc"]),
        ({"gamma": "0", "reps": "1", "seed": "x"}, ["gamma=0", "reps=1", "seed=x"]),
        (
            {"compare": ["200", "7"], "metric": "concordance"},
            ["compare=200&7", "metric=concordance"],
        ),
        ({"eps": ["5", "10"], "scale": "authors"}, ["eps=5&10", "scale=authors"]),
    ],
)
def test_invalid_url_parameters_fall_back_with_a_notice(open_page, words, params, keys):
    at = open_page("dpcore_app/app_pages/dp_owl.py", **{**FAST, **params})
    notices = words(at.warning)
    for key in keys:
        assert key in notices
    assert at.select_slider(key="dp-owl.eps").value == 1.0
    assert at.select_slider(key="dp-owl.n").value == 1000


def test_links_carry_the_labels_the_widgets_write(open_page):
    at = open_page(
        "dpcore_app/app_pages/dp_owl.py",
        metric="value",
        scale="paper scale",
        prep="authors' shift",
        gamma_mode="fixed",
        gamma="10",
        **FAST,
    )
    assert not [w for w in at.warning if w.icon == ":material/link_off:"]  # no link notice
    assert (
        at.session_state["dp-owl.metric"] == "value"
        and at.radio(key="dp-owl.scale").value == "paper"
    )
    assert (
        at.session_state["dp-owl.prep"] == "paper"
        and at.session_state["dp-owl.gamma_mode"] == "free"
    )
    assert at.slider(key="dp-owl.gamma").value == 10


def test_overview_invalid_link(open_page, words):
    at = open_page("dpcore_app/app_pages/overview.py", demo_eps="abc")
    assert "demo_eps=abc" in words(at.warning)
    assert at.select_slider(key="overview.demo_eps").value == 1.0


def test_free_gamma_and_algorithm_2_round_trip(open_page):
    at = open_page("dpcore_app/app_pages/dp_owl.py", **FAST)
    assert not [s for s in at.slider if s.key == "dp-owl.gamma"]  # paper-tuned: no slider to ignore
    at.button(key="run_tuning").click().run()
    assert not at.exception
    fig = figure(at, "gamma_curve")
    assert len(arr(fig["data"][1]["x"])) == 31  # the authors' grid 1, 21, ..., 601
    best = int(at.button(key="use_gamma").label.split("= ")[1].split(" ")[0])
    at.button(key="use_gamma").click().run()
    assert not at.exception
    assert at.session_state["dp-owl.gamma_mode"] == "free"
    assert at.slider(key="dp-owl.gamma").value == best
    assert f"γ in use: **{best}**" in " ".join(c.value for c in at.caption)


def test_a_failing_computation_shows_a_message_not_a_traceback(open_page, monkeypatch):
    import dpcore_app.ui.owl.compute

    def broken(*args, **kwargs):
        raise RuntimeError("solver exploded")

    monkeypatch.setattr(dpcore_app.ui.owl.compute, "sweeps", broken)
    at = open_page("dpcore_app/app_pages/dp_owl.py", **FAST)
    assert "solver exploded" in at.error[0].value
    assert "your other settings are kept" in at.error[0].value
