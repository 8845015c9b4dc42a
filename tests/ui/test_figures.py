"""The shared figure cache: one build per distinct input, the same chart as a fresh build."""

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest

from ui.common.figures import SharedFigure, figure
from ui.owl import charts


def _inputs(shift=0.0):
    rng = np.random.default_rng(0)
    runs = pd.DataFrame({"epsilon": np.repeat([1.0, np.inf], 50),
                         "accuracy": 60 + shift + rng.normal(size=100)})
    return (runs.loc[runs.epsilon == 1.0, "accuracy"], runs.loc[np.isinf(runs.epsilon), "accuracy"],
            "accuracy", 1.0, "non-private")


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
    from ui.upload import charts as upload

    builder = next(getattr(upload, n) for n in dir(upload) if callable(getattr(upload, n))
                   and getattr(getattr(upload, n), "__module__", "") == "ui.upload.charts")
    with pytest.raises(ValueError, match="only teaching charts"):
        figure(builder)


def test_a_background_build_waits_for_the_sessions_to_be_quiet():
    import threading
    import time

    from ui.common.figures import in_background

    figure(charts.distribution, *_inputs())  # a session asks: the background must wait 0.3 s
    asked, waited = time.monotonic(), []

    def warm_up():
        with in_background(quiet=0.3, poll=0.01):
            figure(charts.distribution, *_inputs(shift=2.0))
        waited.append(time.monotonic() - asked)

    thread = threading.Thread(target=warm_up)
    thread.start()
    time.sleep(0.15)
    figure(charts.distribution, *_inputs())  # another session asks meanwhile: 0.3 s from now
    thread.join(5)
    assert waited and waited[0] >= 0.15 + 0.3
