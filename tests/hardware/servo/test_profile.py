"""The firmware's motion profiles as functions: trapezoids that respect their limits."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jointlab.hardware.servo_emulator.profile import (
    ramp_velocity,
    time_based_limits,
    trapezoid_step,
    velocity_loop,
)

DT = 1e-3


def run(distance: float, v_max: float, a_max: float) -> tuple[np.ndarray, np.ndarray]:
    """Setpoints and velocities of a move from 0 by ``distance`` ticks, one tick at a time."""
    setpoint, velocity = np.zeros(1), np.zeros(1)
    goal = np.array([distance])
    points, speeds = [], []
    for _ in range(20_000):
        setpoint, velocity = trapezoid_step(
            setpoint, velocity, goal, np.array([v_max]), np.array([a_max]), DT
        )
        points.append(setpoint[0])
        speeds.append(velocity[0])
        if setpoint[0] == goal[0]:
            break
    return np.array(points), np.array(speeds)


@settings(max_examples=20, deadline=None)
@given(
    st.floats(-2000, 2000).filter(lambda d: abs(d) > 1),
    st.floats(200, 2000),
    st.floats(500, 20_000),
)
def test_a_trapezoid_respects_its_limits_and_lands_on_the_goal(distance, v_max, a_max) -> None:
    points, speeds = run(distance, v_max, a_max)
    assert points[-1] == distance and speeds[-1] == 0.0
    assert np.all(np.abs(speeds) <= v_max + 1e-9)
    assert np.all(np.abs(np.diff(speeds[:-1])) <= a_max * DT + 1e-6)
    assert abs(speeds[-2]) <= 2 * a_max * DT + 1e-6  # the landing tick stops from ≤ 2·a·dt
    assert np.all(np.sign(np.diff(points)) * np.sign(distance) >= 0)  # never overshoots
    # as fast as the limits allow: the ideal trapezoid's (or triangle's) time, within 2 % and
    # a few ticks of discretisation
    ramp = v_max / a_max
    ideal = (
        abs(distance) / v_max + ramp
        if abs(distance) > v_max * ramp
        else 2 * np.sqrt(abs(distance) / a_max)
    )
    assert abs(len(points) * DT - ideal) <= 0.02 * ideal + 10 * DT


def test_limits_of_zero_are_no_limits() -> None:
    goal = np.array([500.0, 500.0, 500.0])
    v_max = np.array([np.inf, 100.0, np.inf])
    a_max = np.array([np.inf, np.inf, 1000.0])
    setpoint, velocity = trapezoid_step(np.zeros(3), np.zeros(3), goal, v_max, a_max, DT)
    assert setpoint[0] == 500.0 and velocity[0] == 0.0  # a step
    assert velocity[1] == 100.0 and setpoint[1] == 0.1  # a rectangle: full speed at once
    assert velocity[2] == 1.0  # acceleration only


def test_velocity_ramp_and_loop() -> None:
    v = ramp_velocity(np.zeros(2), np.array([10.0, -10.0]), np.array([1000.0, np.inf]), DT)
    assert v.tolist() == [1.0, -10.0]
    pwm, integral = velocity_loop(
        np.array([10.0]), np.zeros(1), np.array([128.0]), np.array([65536.0]), np.array([885.0])
    )
    assert pwm[0] == 10.0 + 10.0 and integral[0] == 10.0  # KvP = P/128, KvI = I/65536
    pwm, integral = velocity_loop(
        np.array([1e6]), np.zeros(1), np.array([0.0]), np.array([65536.0]), np.array([885.0])
    )
    assert pwm[0] == 885.0 and integral[0] == 885.0  # held: no wind-up past the limit


def test_time_based_limits() -> None:
    v, a = time_based_limits(
        np.array([600.0, 600.0, 600.0, 600.0]),
        np.array([800, 800, 800, 0]),  # total, ms
        np.array([200, 0, 700, 100]),  # ramp, ms (700: clamped to 400)
    )
    assert np.allclose([v[0], a[0]], [1000.0, 5000.0])
    assert np.isclose(v[1], 750.0) and a[1] == np.inf  # a rectangle
    assert np.allclose([v[2], a[2]], [1500.0, 3750.0])
    assert v[3] == a[3] == np.inf  # no profile: a step
    points, _ = run(600.0, v[0], a[0])
    assert abs(len(points) * DT - 0.8) <= 0.01
