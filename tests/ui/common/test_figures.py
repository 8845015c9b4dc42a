"""The shared figure cache: one build per distinct input, the same chart as a fresh build."""

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest

from dpcore.store import ResultStore
from dpcore_app.ui.common.figures import SharedFigure, figure
from dpcore_app.ui.owl import charts


def _inputs(shift=0.0):
    rng = np.random.default_rng(0)
    runs = pd.DataFrame(
        {"epsilon": np.repeat([1.0, np.inf], 50), "accuracy": 60 + shift + rng.normal(size=100)}
    )
    return (
        runs.loc[runs.epsilon == 1.0, "accuracy"],
        runs.loc[np.isinf(runs.epsilon), "accuracy"],
        "accuracy",
        1.0,
        "non-private",
    )


def test_a_shared_figure_draws_what_a_fresh_build_draws():
    shared, fresh = figure(charts.distribution, *_inputs()), charts.distribution(*_inputs())
    assert isinstance(shared, SharedFigure)
    assert pio.to_json(shared, validate=False) == pio.to_json(fresh, validate=False)


def test_equal_inputs_share_one_build_and_other_inputs_get_their_own():
    first = figure(charts.distribution, *_inputs())
    assert figure(charts.distribution, *_inputs()) is first  # equal frames, built again: one figure
    other = figure(charts.distribution, *_inputs(shift=1.0))
    assert other is not first and other.to_dict() != first.to_dict()


def test_charts_of_uploaded_data_are_never_shared():
    from dpcore_app.ui.upload import charts as upload

    builder = next(
        getattr(upload, n)
        for n in dir(upload)
        if callable(getattr(upload, n))
        and getattr(getattr(upload, n), "__module__", "") == "dpcore_app.ui.upload.charts"
    )
    with pytest.raises(ValueError, match="only teaching charts"):
        figure(builder)
    # the only shared builder of Your data's room draws the simulated twin, never the upload
    from dpcore_app.ui.common.figures import TEACHING_CHARTS

    upload_room = {m for m in TEACHING_CHARTS if m.startswith("dpcore_app.ui.upload")}
    assert upload_room == {"dpcore_app.ui.upload.preview_charts"}


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A results store of this test's own, and no figure in memory."""
    from dpcore_app.ui.common import figures

    monkeypatch.setenv("DPCORE_STORE", str(tmp_path / "store"))
    figures._build.clear()
    yield ResultStore(tmp_path / "store")
    figures._build.clear()


def _refuse(*args, **kwargs):
    raise AssertionError("built again")


def test_a_figure_written_by_the_warm_up_is_read_back_not_built(store, monkeypatch):
    from dpcore_app.ui.common import figures

    with figures.storing():
        built = figure(charts.distribution, *_inputs())
    assert len(store.entries()) == 1
    figures._build.clear()  # a new server process: nothing in memory
    monkeypatch.setattr(charts, "distribution", _refuse)
    read = figure(_as(charts, "distribution", _refuse), *_inputs())
    assert isinstance(read, SharedFigure)
    assert pio.to_json(read, validate=False) == pio.to_json(built, validate=False)


def test_a_session_writes_nothing_to_the_store(store):
    figure(charts.distribution, *_inputs())
    assert store.entries() == []


def test_an_edited_chart_is_never_served_an_old_figure(store, monkeypatch):
    from dpcore_app.ui.common import figures

    with figures.storing():
        figure(charts.distribution, *_inputs())
    figures._build.clear()
    monkeypatch.setattr(figures, "_source_digest", lambda: "the dashboard's source, edited")
    calls = []
    original = charts.distribution
    monkeypatch.setattr(charts, "distribution", lambda *a: calls.append(1) or original(*a))
    figure(_as(charts, "distribution", charts.distribution), *_inputs())
    assert calls == [1]


def test_the_your_data_preview_is_never_written_to_disk(store):
    from dpcore_app.ui.common import figures
    from dpcore_app.ui.upload.preview_charts import agreement_curve

    frame = pd.DataFrame(
        {
            "strength": ["strong"] * 2,
            "epsilon": [1.0, 10.0],
            "agreement_mean": [60.0, 90.0],
            "agreement_lo": [50.0, 85.0],
            "agreement_hi": [70.0, 95.0],
        }
    )
    with figures.storing():
        figure(agreement_curve, frame, 1.0)
    assert store.entries() == []


def _as(module, name, fn):
    """``fn`` under the name and module of ``module.name``: the cache keys a chart by both."""
    fn.__module__, fn.__name__ = module.__name__, name
    return fn


# ---- a chart's text alternative: its sentence and its numbers (figures.show) ----------------


def _banded():
    import plotly.graph_objects as go

    from dpcore_app.ui.common.charts import band, layout

    fig = go.Figure()
    x = np.array([0.1, 1.0, 10.0])
    band(
        fig,
        x,
        np.array([50.0, 60, 70]),
        np.array([48.0, 58, 69]),
        np.array([52.0, 62, 71]),
        "#0072B2",
        "n = 500",
        "%{y}",
    )
    fig.add_trace(go.Bar(x=["treat<br>everyone", "x1"], y=[1.5, -2.0], name="coefficients"))
    return layout(fig, "Accuracy against ε", "privacy budget ε (log scale)", "accuracy (%)")


def test_a_chart_is_described_by_its_title_axes_and_series():
    from dpcore_app.ui.common.figures import describe

    assert describe(_banded().to_dict()) == (
        "Chart: Accuracy against ε. Accuracy (%) against privacy budget ε (log scale). "
        "Series: n = 500; coefficients."
    )


def test_a_charts_numbers_are_read_off_the_figure_with_its_band():
    from dpcore_app.ui.common.figures import table

    rows = table(_banded().to_dict())
    line = rows[rows.series == "n = 500"]
    assert line["privacy budget ε (log scale)"].tolist() == [0.1, 1.0, 10.0]
    assert line["accuracy (%)"].tolist() == [50.0, 60.0, 70.0]
    assert line["low (95%)"].tolist() == [48.0, 58.0, 69.0]
    assert line["high (95%)"].tolist() == [52.0, 62.0, 71.0]
    bars = rows[rows.series == "coefficients"]
    assert bars["privacy budget ε (log scale)"].tolist() == ["treat everyone", "x1"]  # no <br>
    assert len(rows) == 5  # the band's outline is not a series of its own


def test_the_numbers_of_every_kind_of_chart_the_pages_draw():
    """Histograms give their values, heat maps one row per cell, a one-point band its error
    bar; a figure read back from the results store (plotly's base64 arrays) reads the same."""
    import plotly.graph_objects as go

    from dpcore_app.ui.common.figures import table

    assert table(charts.distribution(*_inputs()).to_dict()).groupby("series").size().to_dict() == {
        "non-private": 50,
        "private, ε = 1": 50,
    }
    heat = go.Figure(go.Heatmap(x=[200, 500], y=[0.05, 0.1], z=[[0, 1], [2, 3]], name="regime"))
    cells = table(heat.to_dict())
    assert cells["z"].tolist() == [0, 1, 2, 3] and cells["x"].tolist() == [200, 500, 200, 500]
    one = _banded_one()
    assert table(one)[["low (95%)", "high (95%)"]].values.tolist() == [[58.0, 62.0]]
    stored = pio.from_json(pio.to_json(_banded())).to_dict()  # arrays as {"dtype", "bdata"}
    assert table(stored).equals(table(_banded().to_dict()))


def _banded_one():
    import plotly.graph_objects as go

    from dpcore_app.ui.common.charts import band

    fig = go.Figure()
    band(
        fig,
        np.array([1.0]),
        np.array([60.0]),
        np.array([58.0]),
        np.array([62.0]),
        "#000000",
        "n = 500",
        "%{y}",
    )
    return fig.to_dict()


def test_a_summary_band_is_the_band_of_its_mean_lo_and_hi_columns():
    import plotly.graph_objects as go

    from dpcore_app.ui.common.charts import band, summary_band

    summary = pd.DataFrame(
        {"acc_mean": [50.0, 60, 70], "acc_lo": [48.0, 58, 69], "acc_hi": [52.0, 62, 71]}
    )
    x = np.array([0.1, 1.0, 10.0])
    direct, by_column = go.Figure(), go.Figure()
    band(direct, x, *(summary[c].to_numpy() for c in summary), "#0072B2", "n = 500", "%{y}")
    summary_band(by_column, x, summary, "acc", "#0072B2", "n = 500", "%{y}")
    assert by_column.to_dict() == direct.to_dict()
