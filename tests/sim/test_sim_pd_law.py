"""The joint-wise PD law of actions-and-control.md, evaluated every physics step (1 DoF)."""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import one_joint, pd_formula

from jointlab.interface import NJointAction
from jointlab.sim import SimRobot, World


def test_applied_torque_equals_the_formula_for_random_gains_and_targets(zero_g):
    robot = SimRobot(one_joint(), world=zero_g)
    rng = np.random.default_rng(7)
    for _ in range(50):
        torque, position, velocity = rng.uniform(-2, 2, 3)
        kp, kd = rng.uniform(0, 30), rng.uniform(0, 2)
        before = robot.read()
        robot.apply(NJointAction.TorqueAndPosition([torque], [position], [kp], [kd], [velocity]))
        robot.step()
        after = robot.read()
        expected = pd_formula(before, torque, position, kp, kd, velocity)
        np.testing.assert_allclose(after.torque, expected, rtol=1e-12, atol=1e-12)
        assert after.time == pytest.approx(before.time + robot.control_dt)


def test_effort_limit_clamps_the_reported_torque(zero_g):
    robot = SimRobot(one_joint(limits={"effort": 3.0}), world=zero_g)
    robot.apply(NJointAction.Position([2.0], kp=[100.0], kd=[0.0]))
    robot.step()
    assert robot.read().torque[0] == 3.0
    np.testing.assert_array_equal(robot.applied_torque, robot.read().torque)
    robot.apply(NJointAction.Torque([-50.0]))
    robot.step()
    assert robot.read().torque[0] == -3.0


def test_nan_position_gives_pure_torque_whatever_the_gains(zero_g):
    robot = SimRobot(one_joint(), world=zero_g)
    robot.reset(q=[0.3], qd=[1.0])
    robot.apply(NJointAction([0.7], [np.nan], [50.0], [5.0], [3.0]))
    for _ in range(3):
        robot.step()
        assert robot.read().torque[0] == 0.7


def test_nan_gain_uses_the_description_default(zero_g):
    description = one_joint(gains={"kp": 12.0, "kd": 0.75})
    robot = SimRobot(description, world=zero_g)
    robot.reset(q=[0.1], qd=[0.4])
    before = robot.read()
    robot.apply(NJointAction.Position([1.0], kp=[np.nan], kd=[np.nan]))
    robot.step()
    expected = pd_formula(before, 0.0, 1.0, 12.0, 0.75, 0.0)
    np.testing.assert_allclose(robot.read().torque, expected, rtol=1e-12)


def test_nan_velocity_means_zero_and_a_velocity_target_is_used(zero_g):
    robot = SimRobot(one_joint(), world=zero_g)
    robot.reset(q=[0.0], qd=[0.5])
    before = robot.read()
    robot.apply(NJointAction.Position([0.0], kp=[0.0], kd=[2.0], velocity=[np.nan]))
    robot.step()
    np.testing.assert_allclose(robot.read().torque, [-2.0 * before.velocity[0]], rtol=1e-12)
    robot.apply(NJointAction.Position([0.0], kp=[0.0], kd=[2.0], velocity=[3.0]))
    robot.step()
    state = robot.read()
    robot.step()
    np.testing.assert_allclose(robot.read().torque, 2.0 * (3.0 - state.velocity), rtol=1e-12)


def test_a_pure_velocity_target_is_reached(zero_g):
    robot = SimRobot(one_joint(), world=zero_g, control_dt=0.01)
    robot.apply(NJointAction.Position([0.0], kp=[0.0], kd=[1.0], velocity=[2.0]))
    for _ in range(200):
        robot.step()
    assert robot.read().velocity[0] == pytest.approx(2.0, rel=1e-3)


def test_pd_is_re_evaluated_every_physics_step_within_a_period(zero_g):
    """k physics steps in one period give exactly what k periods of one physics step give."""
    action = NJointAction.Position([1.0], kp=[30.0], kd=[1.0])
    fine = SimRobot(one_joint(), world=zero_g)
    fine.apply(action)
    for _ in range(10):
        fine.step()
    with World(gravity=(0, 0, 0), ground=False, engine=zero_g.engine) as other:
        coarse = SimRobot(one_joint(), world=other, control_dt=0.01)
        coarse.apply(action)
        coarse.step()
        assert coarse.read().time == pytest.approx(0.01)
        assert coarse.read() == fine.read()


def test_apply_keeps_the_action_until_the_next_apply(zero_g):
    robot = SimRobot(one_joint(), world=zero_g)
    action = NJointAction.Torque([0.25])
    robot.apply(action)
    for _ in range(5):
        robot.step()
        assert robot.read().torque[0] == 0.25
    assert robot.last_action is action


def test_dependent_and_unpowered_joints_get_no_pd(zero_g):
    robot = SimRobot(one_joint(), world=zero_g)
    robot.apply(NJointAction.Position([1.0]))
    robot.power(False)
    robot.step()
    assert robot.read().torque[0] == 0.0
    assert not robot.read().armed  # power off disarms, as on a device
    robot.power(True)
    assert not robot.read().armed  # and powering on does not re-arm
    robot.arm()
    robot.apply(NJointAction.Position([1.0]))
    robot.step()
    assert robot.read().torque[0] != 0.0
