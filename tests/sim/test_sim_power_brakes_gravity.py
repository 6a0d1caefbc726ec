"""Gravity hold of arm6, brakes, power and arming."""

from __future__ import annotations

import numpy as np
import pytest

from jointlab.errors import CommandRefused
from jointlab.interface import ActuatorState, NJointAction
from jointlab.robots import load_robot
from jointlab.sim import SimRobot


@pytest.fixture
def arm6(engine):
    with SimRobot("arm6", control_dt=0.01, engine=engine) as robot:
        yield robot


def test_arm6_holds_home_against_gravity_with_default_gains(arm6):
    home = arm6.description.home
    arm6.apply(NJointAction.Position(home))
    worst = 0.0
    for _ in range(150):
        arm6.step()
        worst = max(worst, float(np.abs(arm6.read().position - home).max()))
    assert worst < 0.01


def test_arm6_falls_under_a_zero_action(arm6):
    arm6.apply(NJointAction.Zero(arm6.dof))
    for _ in range(50):
        arm6.step()
    state = arm6.read()
    assert np.abs(state.position - arm6.description.home).max() > 0.05
    assert np.all(state.torque == 0.0)


def test_brakes_hold_against_gravity_and_a_push_for_ten_seconds(engine):
    with SimRobot("arm6", control_dt=0.1, engine=engine) as robot:
        robot.brakes(True)
        braked = robot.description.has_brakes
        start = robot.read().position
        for k in range(100):
            if k % 10 == 0:
                robot.apply_external_force("wrist_yaw_tool", [0.0, 0.0, -30.0], duration=0.05)
            robot.step()
        state = robot.read()
        assert state.time == pytest.approx(10.0)
        assert np.abs(state.position - start)[braked].max() < 1e-4
        assert np.all(state.actuator_state[braked] == ActuatorState.BRAKED)
        assert state.brakes and state.motor_power
        assert np.all(state.torque[braked] == 0.0)


def test_gantry_brake_holds_the_hanging_axis(engine):
    with SimRobot("gantry3", control_dt=0.05, engine=engine) as robot:
        robot.brakes(True)
        z = robot.description.joint_index("z")
        start = robot.read().position[z]
        for _ in range(40):
            robot.step()
        assert abs(robot.read().position[z] - start) < 1e-4
        robot.brakes(False)
        for _ in range(10):
            robot.step()
        assert robot.read().position[z] < start - 1e-3  # released: it falls


def test_power_off_zeroes_torque_and_engages_brakes(arm6):
    arm6.apply(NJointAction.Position(arm6.description.home))
    arm6.step()
    assert np.any(arm6.read().torque != 0.0)
    arm6.power(False)
    arm6.step()
    state = arm6.read()
    assert not state.motor_power and state.brakes
    assert np.all(state.torque == 0.0) and np.all(state.current == 0.0)
    braked = arm6.description.has_brakes
    assert np.all(state.actuator_state[braked] == ActuatorState.BRAKED)
    assert not np.any(state.actuator_state[~braked] & ActuatorState.BRAKED)
    assert not state.armed  # power off disarms, as on a device
    arm6.power(True)
    arm6.step()
    state = arm6.read()
    assert state.motor_power and not state.brakes and not state.armed
    assert np.all(state.torque == 0.0)  # nothing moves until re-armed and commanded
    arm6.arm()
    arm6.apply(NJointAction.Position(arm6.description.home))
    arm6.step()
    assert np.any(arm6.read().torque != 0.0)


def test_brakes_on_refuses_motion_like_a_device(arm6):
    arm6.brakes(True)
    with pytest.raises(CommandRefused) as info:
        arm6.apply(NJointAction.Position(arm6.description.home))
    assert info.value.reason == "braked"
    arm6.apply(NJointAction.Zero(arm6.dof))  # a zero action is still accepted
    arm6.brakes(False)
    arm6.apply(NJointAction.Position(arm6.description.home))


def test_disarmed_refuses_motion_and_applies_zero_torque(arm6):
    arm6.apply(NJointAction.Position(arm6.description.home))
    arm6.disarm()
    assert arm6.last_action.is_zero
    with pytest.raises(CommandRefused) as info:
        arm6.apply(NJointAction.Position(arm6.description.home))
    assert info.value.reason == "disarmed"
    assert "disarmed" in str(info.value)
    arm6.apply(NJointAction.Zero(arm6.dof))  # a zero action is accepted
    arm6.step()
    state = arm6.read()
    assert not state.armed and np.all(state.torque == 0.0)
    arm6.arm()
    arm6.apply(NJointAction.Position(arm6.description.home))
    arm6.step()
    assert arm6.read().armed and np.any(arm6.read().torque != 0.0)


def test_starts_powered_armed_with_brakes_released(engine):
    with SimRobot(load_robot("planar2"), engine=engine) as robot:
        state = robot.read()
        assert state.motor_power and state.armed and not state.brakes
        assert state.time == 0.0
        np.testing.assert_allclose(state.position, robot.description.home)
