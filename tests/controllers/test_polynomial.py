import numpy as np
import pytest

from jointlab.controllers import PiecewisePolynomial
from jointlab.errors import JointLabError


def test_cubic_hermite_matches_end_conditions():
    times = [0.0, 0.5, 1.5]
    p = np.array([[0.0, 1.0], [1.0, 0.5], [0.2, 0.0]])
    v = np.array([[0.0, 0.0], [0.3, -1.0], [0.0, 0.0]])
    poly = PiecewisePolynomial.hermite(times, p, v)
    for t, pos, vel in zip(times, p, v, strict=True):
        sp, sv, _ = poly.sample(t - 1e-12 if t > 0 else t)
        np.testing.assert_allclose(sp, pos, atol=1e-9)
        np.testing.assert_allclose(sv, vel, atol=1e-6)
    assert np.all(poly.coeffs[:, 4:] == 0)  # cubic pieces


def test_quintic_where_accelerations_are_given():
    times = [0.0, 1.0]
    p = np.array([[0.0], [1.0]])
    v = np.array([[0.0], [0.0]])
    a = np.array([[0.5], [-0.5]])
    poly = PiecewisePolynomial.hermite(times, p, v, a)
    _, _, acc0 = poly.sample(0.0)
    _, _, acc1 = poly.sample(1.0 - 1e-12)
    np.testing.assert_allclose(acc0, [0.5], atol=1e-9)
    np.testing.assert_allclose(acc1, [-0.5], atol=1e-6)
    assert np.any(poly.coeffs[:, 5] != 0)


def test_sample_many_and_scipy_ppoly_agree_with_sample():
    rng = np.random.default_rng(0)
    times = np.cumsum(rng.uniform(0.1, 0.5, 6))
    p = rng.normal(size=(6, 3))
    v = rng.normal(size=(6, 3))
    poly = PiecewisePolynomial.hermite(times, p, v)
    grid = np.linspace(times[0], times[-1] - 1e-9, 101)
    sp, sv, sa = poly.sample_many(grid)
    ppoly = poly.to_ppoly()
    np.testing.assert_allclose(sp, ppoly(grid), atol=1e-12)
    np.testing.assert_allclose(sv, ppoly.derivative()(grid), atol=1e-10)
    for k in (0, 37, 100):
        one = poly.sample(grid[k])
        np.testing.assert_allclose(one[0], sp[k], atol=1e-12)
        np.testing.assert_allclose(one[2], sa[k], atol=1e-9)


def test_clamped_outside_and_composition():
    poly = PiecewisePolynomial.cruise([0.0, 1.0], [1.0, -1.0], 2.0)
    p, v, _ = poly.sample(5.0)
    np.testing.assert_allclose(p, [2.0, -1.0])
    np.testing.assert_allclose(v, [0.0, 0.0])  # held after the end
    joined = poly.then(PiecewisePolynomial.constant([2.0, -1.0], 1.0))
    assert joined.duration == pytest.approx(3.0)
    np.testing.assert_allclose(joined.sample(2.5)[0], [2.0, -1.0])
    assert poly.shifted(1.0).start == 1.0


def test_extrema_are_exact():
    poly = PiecewisePolynomial.hermite(
        [0.0, 1.0, 2.0], [[0.0], [1.0], [0.0]], [[0.0], [0.0], [0.0]]
    )
    low, high, speed = poly.extrema()
    assert low[0] == pytest.approx(0.0)
    assert high[0] == pytest.approx(1.0)
    assert speed[0] == pytest.approx(1.5)  # cubic rest-to-rest peak speed 1.5 * distance / time


def test_from_pieces_merges_joints_on_common_breaks():
    pieces = [[(0.0, 0.0, 0.0, 0.0, 6.0), (1.0, 1.0, 3.0, 6.0, 0.0)], [(0.0, 0.0, 1.0, 0.0, 0.0)]]
    poly = PiecewisePolynomial.from_pieces(pieces, 2.0)
    p, v, a = poly.sample(0.5)
    np.testing.assert_allclose([p[0], v[0], a[0]], [0.125, 0.75, 3.0])
    np.testing.assert_allclose([p[1], v[1]], [0.5, 1.0])
    assert poly.pieces(1)[0][2] == pytest.approx(1.0)


def test_invalid_breaks_raise():
    with pytest.raises(JointLabError, match="increasing"):
        PiecewisePolynomial([0.0, 0.0], np.zeros((1, 2, 1)))


def test_sample_rows_are_sample_stacked_inside_and_outside():
    rng = np.random.default_rng(1)
    times = np.cumsum(rng.uniform(0.1, 0.5, 4))
    poly = PiecewisePolynomial.hermite(times, rng.normal(size=(4, 3)), rng.normal(size=(4, 3)))
    for t in (times[0] - 1.0, times[0], 0.5 * (times[1] + times[2]), times[-1], times[-1] + 1.0):
        np.testing.assert_array_equal(poly.sample_rows(t), np.array(poly.sample(t)))
