"""Actuator models (ideal, dc_motor), the delay line, currents and Coulomb friction."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sim_helpers import one_joint

from jointlab.interface import NJointAction
from jointlab.sim import ActuatorArray, DelayLine, SimRobot, World, coulomb_friction

DC = {
    "model": "dc_motor",
    "torque_constant": 0.05,
    "gear_ratio": 10.0,
    "max_current": 4.0,
    "stall_torque": 0.3,
    "no_load_speed": 100.0,
}


def dc_joint(**motor: float) -> object:
    return one_joint(motor={**DC, **motor}, limits={"effort": 50.0, "velocity": 50.0})


def test_dc_motor_curve_from_stall_to_no_load_speed():
    model = ActuatorArray.from_description(dc_joint(max_current=100.0))
    stall, no_load = 0.3 * 10.0, 100.0 / 10.0  # joint side: 3 N·m, 10 rad/s
    low, high = model.limits(np.array([0.0]))
    assert high[0] == pytest.approx(stall) and low[0] == pytest.approx(-stall)
    low, high = model.limits(np.array([no_load / 2]))
    assert high[0] == pytest.approx(stall / 2) and low[0] == pytest.approx(-1.5 * stall)
    assert model.limits(np.array([no_load]))[1][0] == pytest.approx(0.0)
    assert model.clamp(np.array([10.0]), np.array([-no_load / 2]))[0] == pytest.approx(1.5 * stall)


def test_dc_motor_torque_is_limited_by_current_and_effort():
    model = ActuatorArray.from_description(dc_joint(max_current=4.0))
    # The current limit 4 A * 0.05 N·m/A * 10 = 2 N·m is below the 3 N·m stall torque.
    assert model.clamp(np.array([10.0]), np.array([0.0]))[0] == pytest.approx(2.0)
    assert model.current(np.array([2.0]))[0] == pytest.approx(4.0)
    assert model.current(np.array([1.0]))[0] == pytest.approx(2.0)
    ideal = ActuatorArray.from_description(one_joint(limits={"effort": 5.0}))
    assert ideal.clamp(np.array([-9.0]), np.array([1e6]))[0] == -5.0


@given(
    command=st.floats(-100, 100),
    velocity=st.floats(-40, 40),
)
def test_dc_clamp_stays_in_the_effort_limit_and_on_the_curve(command, velocity):
    model = ActuatorArray.from_description(dc_joint(max_current=100.0, stall_torque=10.0))
    torque = model.clamp(np.array([command]), np.array([velocity]))[0]
    low, high = model.limits(np.array([velocity]))
    assert -50.0 <= torque <= 50.0
    assert low[0] <= torque <= high[0]
    if low[0] <= command <= high[0]:
        assert torque == command


def test_dc_motor_saturates_at_speed_in_the_simulator(zero_g):
    robot = SimRobot(dc_joint(max_current=100.0), world=zero_g)
    model = ActuatorArray.from_description(robot.description)
    robot.apply(NJointAction.Torque([100.0]))
    speeds = []
    for _ in range(3000):
        before = robot.read()
        robot.step()
        state = robot.read()
        expected = model.clamp(np.array([100.0]), before.velocity)
        if zero_g.engine == "pybullet":
            np.testing.assert_array_equal(state.torque, expected)
        else:  # MuJoCo sums the drive and the dc_high/dc_low actuators: equal to rounding
            np.testing.assert_allclose(state.torque, expected, rtol=1e-14, atol=1e-12)
        speeds.append(state.velocity[0])
    # Torque falls along the curve, so the joint approaches the no-load speed 10 rad/s.
    assert speeds[-1] == pytest.approx(10.0, rel=0.02)
    assert speeds[-1] < 10.0
    np.testing.assert_allclose(robot.read().current, robot.read().torque / (0.05 * 10.0))


def test_delay_line_delays_the_command_by_whole_physics_steps(zero_g):
    robot = SimRobot(one_joint(motor={"delay": 3}), world=zero_g)
    robot.apply(NJointAction.Torque([0.5]))
    torques = []
    for _ in range(5):
        robot.step()
        torques.append(robot.read().torque[0])
    assert torques == [0.0, 0.0, 0.0, 0.5, 0.5]


@given(
    delays=st.lists(st.integers(0, 4), min_size=1, max_size=4),
    length=st.integers(1, 12),
)
def test_delay_line_matches_a_naive_shift(delays, length):
    line = DelayLine(np.array(delays))
    commands = np.arange(length * len(delays), dtype=float).reshape(length, len(delays)) + 1
    out = np.array([line.push(c) for c in commands])
    for j, d in enumerate(delays):
        expected = np.concatenate([np.zeros(d), commands[:, j]])[:length]
        np.testing.assert_array_equal(out[:, j], expected)
    line.clear()
    assert np.all(line.push(commands[0]) == np.where(np.array(delays) == 0, commands[0], 0.0))


@given(
    torque=st.floats(-10, 10),
    velocity=st.floats(-10, 10),
    static=st.floats(0, 5),
    stiffness=st.floats(0, 100),
)
def test_coulomb_friction_never_exceeds_the_static_friction(torque, velocity, static, stiffness):
    args = [np.array([v]) for v in (torque, velocity, static, stiffness)]
    net = coulomb_friction(*args)[0]
    assert abs(net - torque) <= static + 1e-12
    if abs(torque + stiffness * velocity) > static:  # slipping: full friction against it
        assert abs(net - torque) == pytest.approx(static)


def test_friction_holds_a_small_torque_and_yields_to_a_large_one(zero_g):
    robot = SimRobot(one_joint(dynamics={"static_friction": 0.5}), world=zero_g)
    robot.apply(NJointAction.Torque([0.3]))
    for _ in range(200):
        robot.step()
    # PyBullet's explicit friction stops the joint; MuJoCo's frictionloss is a (stiffened)
    # soft constraint, so a stuck joint creeps: 4e-5 rad where it would have moved 0.4 rad.
    creep = {"pybullet": 1e-9, "mujoco": 1e-4}[zero_g.engine]
    assert abs(robot.read().position[0]) < creep
    robot.apply(NJointAction.Torque([1.5]))
    for _ in range(100):
        robot.step()
    state = robot.read()
    inertia = 0.0144  # the link about the joint axis, kg·m²
    assert state.velocity[0] > 0.5 * (1.5 - 0.5) / inertia * 0.1
    assert state.torque[0] == 1.5  # the actuator torque, friction excluded


def test_native_damping_decays_velocity_at_the_described_rate(zero_g):
    description = one_joint(dynamics={"damping": 0.2})
    robot = SimRobot(description, world=zero_g)
    robot.reset(qd=[1.0])
    robot.apply(NJointAction.Zero(1))
    for _ in range(100):
        robot.step()
    measured = robot.read().velocity[0]
    free_world = World(gravity=(0, 0, 0), ground=False, engine=zero_g.engine)
    with SimRobot(one_joint(name="free"), world=free_world) as free:
        free.reset(qd=[1.0])
        for _ in range(100):
            free.step()
        assert free.read().velocity[0] == pytest.approx(1.0)
        free.world.close()
    # v(t) = exp(-c t / I): the fitted I must be the link's inertia about the joint axis.
    link = description.joints[0].link
    expected = link.inertia[2][2] + link.mass * link.center_of_gravity[0] ** 2
    assert -0.2 * 0.1 / np.log(measured) == pytest.approx(expected, rel=0.01)
