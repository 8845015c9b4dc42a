import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import approx_fprime

from dpcore.owl.losses import curvature_bound, huber_hinge, logistic, margin_loss


def huber_scalar(z, h):
    """The paper's piecewise definition, written out independently."""
    if z > 1 + h:
        return 0.0
    if z < 1 - h:
        return 1 - z
    return (1 + h - z) ** 2 / (4 * h)


@given(st.floats(-50, 50), st.floats(0.01, 5))
def test_huber_matches_piecewise_definition(z, h):
    value, d1, d2 = huber_hinge(np.array([z]), h)
    assert value[0] == pytest.approx(huber_scalar(z, h), abs=1e-12)
    assert -1.0 <= d1[0] <= 0.0
    assert d2[0] in (0.0, 1 / (2 * h))


@pytest.mark.parametrize("h", [0.1, 0.5, 2.0])
def test_huber_derivatives_against_finite_differences(h):
    # Stay away from the two joints, where the second derivative jumps.
    z = np.concatenate(
        [
            np.linspace(-3, 1 - h - 1e-3, 20),
            np.linspace(1 - h + 1e-3, 1 + h - 1e-3, 20),
            np.linspace(1 + h + 1e-3, 4, 5),
        ]
    )
    for zi in z:
        f = lambda t: huber_hinge(t, h)[0][0]  # noqa: E731
        g = lambda t: huber_hinge(t, h)[1]  # noqa: E731
        assert huber_hinge(zi, h)[1] == pytest.approx(approx_fprime([zi], f, 1e-7)[0], abs=1e-5)
        assert huber_hinge(zi, h)[2] == pytest.approx(approx_fprime([zi], g, 1e-7)[0], abs=1e-4)


def test_huber_is_continuously_differentiable_at_the_joints():
    h = 0.3
    for joint in (1 - h, 1 + h):
        left, right = huber_hinge(np.array([joint - 1e-12, joint + 1e-12]), h)[:2]
        assert abs(left[0] - left[1]) < 1e-10
        assert abs(right[0] - right[1]) < 1e-10


def test_huber_converges_to_hinge_as_h_shrinks():
    z = np.linspace(-2, 3, 101)
    hinge = np.maximum(0, 1 - z)
    gaps = [np.abs(huber_hinge(z, h)[0] - hinge).max() for h in (1.0, 0.1, 0.01)]
    # The largest gap is h/4, at z = 1.
    assert gaps == pytest.approx([0.25, 0.025, 0.0025], rel=1e-9)


def test_value_only_path_matches():
    z = np.linspace(-3, 3, 50)
    assert np.array_equal(huber_hinge(z, 0.5, derivatives=False), huber_hinge(z, 0.5)[0])
    assert np.array_equal(logistic(z, derivatives=False), logistic(z)[0])


@given(st.floats(-700, 700))
@settings(max_examples=200)
def test_logistic_is_stable_and_bounded(z):
    value, d1, d2 = logistic(np.array([z]))
    assert np.isfinite(value[0]) and value[0] >= 0
    assert value[0] == pytest.approx(np.log1p(np.exp(-z)) if z > -30 else -z, rel=1e-9, abs=1e-12)
    assert -1.0 <= d1[0] <= 0.0
    assert 0.0 <= d2[0] <= 0.25


def test_logistic_derivatives_against_finite_differences():
    for zi in np.linspace(-6, 6, 25):
        assert logistic(zi)[1] == pytest.approx(
            approx_fprime([zi], lambda t: logistic(t)[0][0], 1e-7)[0], abs=1e-6
        )
        assert logistic(zi)[2] == pytest.approx(
            approx_fprime([zi], lambda t: logistic(t)[1][0], 1e-7)[0], abs=1e-6
        )


def test_margin_loss_dispatch_and_errors():
    assert margin_loss("huber", 0.2)(np.array([0.0]))[0][0] == pytest.approx(1.0)
    assert curvature_bound("huber", 0.2) == pytest.approx(2.5)
    assert curvature_bound("logistic") == 0.25
    with pytest.raises(ValueError, match="loss"):
        margin_loss("hinge")
    with pytest.raises(ValueError, match="huber_h"):
        margin_loss("huber", 0.0)
