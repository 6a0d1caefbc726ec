import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointlab.controllers import MotionLimits, Trajectory, Waypoint, from_milliseconds
from jointlab.controllers.timing import time_waypoints
from jointlab.errors import CommandRefused
from jointlab.robots import load_robot

ARM = load_robot("arm6")
LIMITS = MotionLimits.from_description(ARM)
ELBOW = LIMITS.select([2])
HOME = ARM.home
REST = (HOME, np.zeros(6), np.zeros(6))


def refused(match, *args, **kwargs):
    with pytest.raises(CommandRefused, match=match) as info:
        Trajectory.build(*args, **kwargs)
    assert info.value.reason == "bad_trajectory"
    return str(info.value)


def test_waypoints_from_mappings_and_milliseconds():
    points = from_milliseconds(
        [
            {"position": 1.0, "time_from_start": 500},
            {"position": 0.5, "velocity": 0.0, "time_from_start": 1500},
        ]
    )
    assert [w.time_from_start for w in points] == [0.5, 1.5]
    assert points[1].velocity.tolist() == [0.0]
    assert Waypoint.coerce(0.3).position.tolist() == [0.3]
    with pytest.raises(CommandRefused, match="unknown keys"):
        Waypoint.coerce({"position": 1.0, "speed": 2.0})


def test_timed_waypoints_are_passed_at_their_times():
    waypoints = [
        {"position": HOME + 0.2, "time_from_start": 1.0},
        {"position": HOME - 0.1, "time_from_start": 2.0},
        {"position": HOME, "time_from_start": 3.0},
    ]
    trajectory = Trajectory.build(waypoints, LIMITS, start=REST)
    assert trajectory.duration == pytest.approx(3.0)
    for w in waypoints:
        np.testing.assert_allclose(
            trajectory.sample(w["time_from_start"] - 1e-12)[0], w["position"], atol=1e-9
        )
    np.testing.assert_allclose(trajectory.sample(0.0)[0], HOME)
    _, v, _ = trajectory.sample(3.0)
    np.testing.assert_allclose(v, 0.0)


def test_single_joint_trajectory_with_given_velocity_and_acceleration():
    waypoints = [
        {"position": 1.2, "velocity": 0.3, "acceleration": 0.0, "time_from_start": 0.8},
        {"position": 1.5, "velocity": 0.0, "acceleration": 0.0, "time_from_start": 1.6},
    ]
    start = ([1.0], [0.0], [0.0])
    trajectory = Trajectory.build(waypoints, ELBOW, start=start)
    p, v, a = trajectory.sample(0.8)
    assert p[0] == pytest.approx(1.2)
    assert v[0] == pytest.approx(0.3)
    assert a[0] == pytest.approx(0.0, abs=1e-9)  # quintic piece: acceleration honoured


def test_repeat_three_times_is_periodic():
    waypoints = [
        {"position": HOME + 0.1, "time_from_start": 0.5},
        {"position": HOME, "time_from_start": 1.0},
    ]
    trajectory = Trajectory.build(waypoints, LIMITS, start=REST, repeat=3)
    assert trajectory.duration == pytest.approx(3.0)
    assert trajectory.period == pytest.approx(1.0)
    times = np.linspace(0.0, 0.99, 23)
    first = trajectory.sample_many(times)[0]
    for k in (1, 2):
        np.testing.assert_allclose(trajectory.sample_many(times + k)[0], first, atol=1e-12)
    assert trajectory.done(3.0) and not trajectory.done(2.9)
    np.testing.assert_allclose(trajectory.sample(10.0)[0], HOME, atol=1e-12)
    for t in (0.0, 0.3, 1.7, 2.5, 3.0, 10.0):  # the tick's path: the same values as rows
        np.testing.assert_array_equal(trajectory.sample_rows(t), np.array(trajectory.sample(t)))


def test_forever_never_ends():
    waypoints = [
        {"position": HOME, "time_from_start": 0.0},
        {"position": HOME + 0.1, "time_from_start": 0.5},
        {"position": HOME, "time_from_start": 1.0},
    ]
    trajectory = Trajectory.build(waypoints, LIMITS, start=REST, repeat="forever")
    assert math.isinf(trajectory.duration) and not trajectory.done(1e6)
    np.testing.assert_allclose(trajectory.sample(1000.25)[0], trajectory.sample(0.25)[0])


def test_validation_names_waypoint_joint_and_limit():
    message = refused(
        "waypoint 1 position 3.5 of joint 'shoulder_pan'",
        [
            {"position": HOME, "time_from_start": 1.0},
            {"position": np.r_[3.5, HOME[1:]], "time_from_start": 2.0},
        ],
        LIMITS,
    )
    assert "[-2.8, 2.8]" in message
    refused(
        "velocity 9 of joint 'elbow' exceeds its velocity limit 2",
        [{"position": 1.0, "velocity": 9.0, "time_from_start": 1.0}],
        ELBOW,
    )
    refused(
        "not after",
        [{"position": 1.0, "time_from_start": 1.0}, {"position": 1.1, "time_from_start": 1.0}],
        ELBOW,
    )
    refused("has 2 values, expected 1", [{"position": [1.0, 2.0], "time_from_start": 1.0}], ELBOW)
    refused(
        "give all times or none",
        [{"position": 1.0, "time_from_start": 1.0}, {"position": 1.1}],
        ELBOW,
    )
    refused("no waypoints", [], ELBOW)
    refused("repeat must be", [{"position": 1.0}], ELBOW, repeat=0)
    refused(
        "current position",
        [{"position": 2.0, "time_from_start": 0.0}],
        ELBOW,
        start=([1.0], [0.0], [0.0]),
    )


def test_interpolated_overshoot_is_refused():
    # a fast pass near the limit overshoots it between waypoints
    refused(
        "interpolated motion of joint 'elbow' reaches",
        [
            {"position": 2.3, "velocity": 1.9, "time_from_start": 0.2},
            {"position": 2.3, "time_from_start": 1.2},
        ],
        ELBOW,
        start=([2.2], [0.0], [0.0]),
    )


waypoint_lists = st.lists(
    st.fixed_dictionaries(
        {"position": st.floats(-3.0, 3.0), "velocity": st.one_of(st.none(), st.floats(-3.0, 3.0))}
    ),
    min_size=1,
    max_size=4,
)


@given(points=waypoint_lists, dt=st.floats(0.05, 1.0), repeat=st.integers(1, 3))
def test_built_trajectories_stay_inside_the_limits_or_are_refused(points, dt, repeat):
    waypoints = [dict(p, time_from_start=(i + 1) * dt) for i, p in enumerate(points)]
    try:
        trajectory = Trajectory.build(waypoints, ELBOW, start=([0.0], [0.0], [0.0]), repeat=repeat)
    except CommandRefused as error:
        assert error.reason == "bad_trajectory"
        return
    p, v, _ = trajectory.sample_many(np.linspace(0, trajectory.duration, 400))
    assert np.all(p >= ELBOW.lower - 1e-9) and np.all(p <= ELBOW.upper + 1e-9)
    assert np.all(np.abs(v) <= ELBOW.velocity * (1 + 1e-9))


def test_automatic_timing_is_fast_smooth_and_within_limits():
    points = np.array([HOME, HOME + 0.3, HOME + 0.6, HOME + 0.2])
    motion, times = time_waypoints(LIMITS, points)
    dt = 1e-3
    grid = np.arange(0, motion.end, dt)
    _, v, a = motion.sample_many(grid)
    assert np.all(np.abs(v) <= LIMITS.velocity * (1 + 1e-9))
    assert np.all(np.abs(a) <= LIMITS.acceleration * (1 + 1e-9))
    assert np.all(np.abs(np.diff(a, axis=0)) / dt <= LIMITS.jerk * (1 + 1e-6))
    for point, t in zip(points, times, strict=True):
        np.testing.assert_allclose(motion.sample(t)[0], point, atol=1e-7)
    # velocity continuous through the waypoints and not zero there (no stop-and-go)
    assert np.max(np.abs(np.diff(v, axis=0))) <= LIMITS.acceleration.max() * dt * (1 + 1e-6)
    assert np.all(np.abs(motion.sample(times[1])[1]) > 0.1)
    stop_and_go, _ = time_waypoints(LIMITS, points, iterations=0)
    assert motion.duration < stop_and_go.duration


def test_automatic_timing_through_the_trajectory_api_with_repeat():
    waypoints = [{"position": HOME + 0.2}, {"position": HOME - 0.2}, {"position": HOME}]
    trajectory = Trajectory.build(waypoints, LIMITS, start=REST, repeat=2)
    assert trajectory.waypoint_times[0] > 0
    assert trajectory.duration == pytest.approx(trajectory.first_pass.duration + trajectory.period)
    np.testing.assert_allclose(
        trajectory.sample(trajectory.waypoint_times[1])[0], HOME - 0.2, atol=1e-7
    )
