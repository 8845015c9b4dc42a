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
