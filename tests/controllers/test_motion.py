"""Jerk-limited ruckig motion: exact conversion and limits respected on every tick."""

import numpy as np
import pytest
import ruckig
from hypothesis import given
from hypothesis import strategies as st

from jointlab.controllers import MotionLimits, plan_move, plan_stop, ruckig_segment
from jointlab.controllers.motion import stopping_distance
from jointlab.errors import ConfigurationError
from jointlab.robots import load_robot

ARM = load_robot("arm6")
LIMITS = MotionLimits.from_description(ARM)
DT = 0.001


def assert_within_limits(motion, limits, dt=DT, start=0.0):
    times = np.arange(start, motion.end + dt, dt)
    p, v, a = motion.sample_many(times)
    jerk = np.diff(a, axis=0) / dt
    tol = 1e-9
    assert np.all(np.abs(v) <= limits.velocity * (1 + tol) + tol), np.abs(v).max(axis=0)
    assert np.all(np.abs(a) <= limits.acceleration * (1 + tol) + tol), np.abs(a).max(axis=0)
    # one tick's change of acceleration stays within jerk * dt (finite differences)
    assert np.all(np.abs(jerk) <= limits.jerk * (1 + 1e-6) + 1e-6), np.abs(jerk).max(axis=0)
    return p, v, a


def test_conversion_matches_ruckig_at_time():
    start = (np.zeros(6), np.full(6, 0.3), np.zeros(6))
    target = (np.linspace(-1, 1, 6), np.zeros(6), np.zeros(6))
    motion = ruckig_segment(LIMITS, start, target)
    otg, inp, trajectory = ruckig.Ruckig(6), ruckig.InputParameter(6), ruckig.Trajectory(6)
    inp.current_position, inp.current_velocity, inp.current_acceleration = (list(x) for x in start)
    inp.target_position, inp.target_velocity, inp.target_acceleration = (list(x) for x in target)
    inp.max_velocity = list(LIMITS.velocity)
    inp.max_acceleration = list(LIMITS.acceleration)
    inp.max_jerk = list(LIMITS.jerk)
    otg.calculate(inp, trajectory)
    assert motion.duration == pytest.approx(trajectory.duration, abs=1e-12)
    for t in np.linspace(0, trajectory.duration, 57):
        expected = trajectory.at_time(t)
        got = motion.sample(min(t, motion.end - 1e-12))
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e, atol=1e-9)


positions = st.lists(st.floats(-1.5, 1.5), min_size=6, max_size=6)
speeds = st.lists(st.floats(-1.4, 1.4), min_size=6, max_size=6)


@given(start=positions, target=positions, velocity=speeds)
def test_moves_respect_limits_on_every_tick(start, target, velocity):
    motion = plan_move(LIMITS, start, target, start_velocity=velocity)
    p, v, _ = assert_within_limits(motion, LIMITS)
    np.testing.assert_allclose(p[-1], target, atol=1e-7)  # ruckig's own precision
    np.testing.assert_allclose(v[-1], 0.0, atol=1e-9)


def test_start_above_the_speed_limit_brakes_first():
    slow = LIMITS.with_config(config_speed=np.full(6, 0.5))
    motion = plan_move(slow, np.zeros(6), np.full(6, 1.0), start_velocity=np.full(6, 1.2))
    times = np.arange(0, motion.end, DT)
    _, v, a = motion.sample_many(times)
    assert np.all(np.abs(a) <= slow.acceleration * (1 + 1e-9))
    settled = times > 0.6
    assert np.all(np.abs(v[settled]) <= 0.5 + 1e-9)


def test_configured_speed_and_accel_tighten_the_limits():
    limits = MotionLimits.from_description(
        ARM, config_speed=ARM.config_speed, config_accel=np.full(6, 2.0)
    )
    np.testing.assert_allclose(
        limits.velocity, np.minimum(ARM.config_speed, ARM.soft_velocity_limit)
    )
    np.testing.assert_allclose(limits.acceleration, np.minimum(2.0, ARM.soft_acceleration_limit))
    motion = plan_move(limits, np.zeros(6), np.ones(6))
    assert_within_limits(motion, limits)
    fast = plan_move(LIMITS, np.zeros(6), np.ones(6))
    assert motion.duration > fast.duration


def test_single_joint_velocity_cap():
    limits = LIMITS.select([2]).with_velocity([0.25])
    motion = plan_move(limits, [0.0], [1.0])
    assert_within_limits(motion, limits)
    assert motion.duration >= 1.0 / 0.25


@given(velocity=speeds)
def test_stop_reaches_rest_within_acceleration_limit(velocity):
    stop = plan_stop(LIMITS, np.zeros(6), velocity)
    _, v, _ = assert_within_limits(stop, LIMITS)
    np.testing.assert_allclose(v[-1], 0.0, atol=1e-9)
    np.testing.assert_allclose(stopping_distance(LIMITS, velocity), stop.end_position)
    assert np.all(stop.end_position * np.sign(velocity) >= -1e-12)  # stops ahead


def test_invalid_limits_name_the_joint():
    with pytest.raises(ConfigurationError, match="elbow"):
        MotionLimits(
            lower=[0, 0],
            upper=[1, 1],
            velocity=[1, -1],
            acceleration=[1, 1],
            jerk=[1, 1],
            names=("shoulder", "elbow"),
        )
