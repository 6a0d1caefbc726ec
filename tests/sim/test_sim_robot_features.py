"""Hard stops, floating and tree robots, link poses, state flags, acceleration, sensors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from floating_robot import puck
from sim_helpers import one_joint

from jointlab.interface import ActuatorState, NJointAction
from jointlab.robots import (
    description_from_dict,
    description_to_dict,
    forward_kinematics,
    load_robot,
)
from jointlab.sim import SensorModel, SimRobot


def test_hard_stops_hold_a_joint_pushed_into_its_limit(zero_g):
    robot = SimRobot(one_joint(min=-0.5, max=0.5), world=zero_g)
    robot.apply(NJointAction.Torque([5.0]))
    positions, speeds = [], []
    for _ in range(300):
        robot.step()
        positions.append(robot.read().position[0])
        speeds.append(robot.read().velocity[0])
    positions = np.array(positions)
    impact = int(np.argmax(positions > 0.5))
    # The limit constraint: at most one physics step of travel past the stop...
    assert positions.max() - 0.5 <= speeds[impact - 1] * 0.001
    # ...pushed back within 20 ms, then held while the torque keeps pushing (MuJoCo's limit
    # is a stiff soft constraint: it holds 5 N·m with 1.4e-5 rad of penetration).
    assert np.all(positions[impact + 20 :] <= 0.5 + 1e-3)
    held = {"pybullet": 1e-6, "mujoco": 3e-5}[zero_g.engine]
    assert positions[-1] == pytest.approx(0.5, abs=held)


def test_linear_joint_hard_stop_and_gravity(engine):
    with SimRobot("gantry3", control_dt=0.01, engine=engine) as robot:
        z = robot.description.joint_index("z")
        robot.apply(NJointAction.Zero(robot.dof))
        for _ in range(100):
            robot.step()
        assert robot.read().position[z] == pytest.approx(robot.description.lower[z], abs=2e-3)


def test_floating_base_rests_on_the_ground_and_can_be_pushed(engine):
    with SimRobot(puck(), control_dt=0.01, engine=engine) as robot:
        robot.apply(NJointAction.Position(robot.description.home))
        for _ in range(50):
            robot.step()
        start = robot.link_pose("base")[:3, 3]
        assert start[2] == pytest.approx(robot.description.base.position[2], abs=5e-3)
        # The puck weighs 3 kg: Coulomb friction (mu = 1 on both engines, CONTACT_FRICTION)
        # holds it against up to 29.4 N: 20 N does not slide it, 40 N does.
        for push, slides in ((20.0, False), (40.0, True)):
            before = robot.link_pose("base")[:3, 3]
            for _ in range(50):
                robot.apply_external_force("base", [push, 0.0, 0.0], duration=robot.control_dt)
                robot.step()
            moved = robot.link_pose("base")[:3, 3] - before
            assert (moved[0] > 0.02) == slides, (push, moved)
            assert abs(moved[2]) < 5e-3
        robot.reset()
        np.testing.assert_allclose(robot.link_pose("base")[:3, 3], robot.description.base.position)


def test_tree_robot_link_poses_match_forward_kinematics(engine):
    with SimRobot("trifinger", engine=engine) as robot:
        q = robot.description.home + 0.1
        robot.reset(q)
        kinematics = forward_kinematics(robot.description, q)
        for index, name in enumerate(robot.description.element_names):
            np.testing.assert_allclose(robot.link_pose(name), kinematics.frames[index], atol=1e-6)
        for name, frame in kinematics.tools.items():
            np.testing.assert_allclose(robot.link_pose(name), frame, atol=1e-6)
        with pytest.raises(Exception, match="no link 'thumb'"):
            robot.link_pose("thumb")


def test_flags_idle_and_moving_and_the_acceleration(zero_g):
    robot = SimRobot(one_joint(), world=zero_g, moving_threshold=0.01)
    assert robot.read().actuator_state[0] == ActuatorState.IDLE
    robot.apply(NJointAction.Torque([1.0]))
    robot.step()
    first = robot.read()
    robot.step()
    second = robot.read()
    assert second.actuator_state.dtype == np.uint8
    np.testing.assert_allclose(second.acceleration, (second.velocity - first.velocity) / 0.001)
    assert second.acceleration[0] == pytest.approx(1.0 / 0.0144, rel=0.01)
    for _ in range(20):
        robot.step()
    assert robot.read().actuator_state[0] == ActuatorState.MOVING


def test_a_saturated_joint_against_a_stop_reports_stalled(zero_g):
    robot = SimRobot(
        one_joint(min=-0.1, max=0.1, limits={"effort": 2.0}),
        world=zero_g,
        stall_time=0.2,
        control_dt=0.01,
    )
    robot.apply(NJointAction.Position([1.0]))
    for _ in range(10):
        robot.step()
    assert not robot.read().actuator_state[0] & ActuatorState.STALLED
    for _ in range(20):
        robot.step()
    state = robot.read()
    assert state.actuator_state[0] & ActuatorState.STALLED
    assert state.torque[0] == 2.0
    robot.apply(NJointAction.Position([0.0]))
    for _ in range(5):
        robot.step()
    assert not robot.read().actuator_state[0] & ActuatorState.STALLED
    # Released, the timer starts again from zero: the full stall_time before the next report
    robot.apply(NJointAction.Position([1.0]))
    for _ in range(15):
        robot.step()
    assert not robot.read().actuator_state[0] & ActuatorState.STALLED
    for _ in range(20):
        robot.step()
    assert robot.read().actuator_state[0] & ActuatorState.STALLED


def test_sensor_quantisation_and_noise_change_readings_not_physics(zero_g):
    resolution = 2 * np.pi / 4096
    robot = SimRobot(one_joint(), world=zero_g, sensors=SensorModel.encoder(4096))
    robot.reset(q=[0.123456])
    reading = robot.read().position[0]
    assert reading == pytest.approx(round(0.123456 / resolution) * resolution)
    assert reading != 0.123456
    noisy = SimRobot(
        one_joint(name="noisy"), world=zero_g, sensors=SensorModel(velocity_noise=0.01), seed=2
    )
    values = []
    for _ in range(200):
        noisy.step()
        values.append(noisy.read().velocity[0])
    assert 0.005 < np.std(values) < 0.02
    assert noisy.read() is noisy.read()  # no new draw per read
    np.testing.assert_array_equal(noisy.read().acceleration, 0.0)  # from the true velocity


def test_state_arrays_are_read_only_snapshots(zero_g):
    robot = SimRobot(one_joint(), world=zero_g)
    state = robot.read()
    with pytest.raises(ValueError):
        state.position[0] = 1.0
    robot.step()
    assert robot.read() is not state


def test_speed_accel_configuration_and_geometry(engine):
    with SimRobot("arm6", engine=engine) as robot:
        robot.configure_speed("elbow", 0.5)
        robot.configure_accel(0, 2.0)
        assert robot.config_speed[2] == 0.5 and robot.config_accel[0] == 2.0
        assert robot.geometry().actuators[2].config_speed == 0.5
        assert robot.geometry().actuators[0].has_brakes
        with pytest.raises(Exception, match=r"elbow.*limit 2\.0"):
            robot.configure_speed(2, 5.0)
        with pytest.raises(Exception, match="no joint 'knee'"):
            robot.configure_accel("knee", 1.0)


def test_two_robots_share_a_world_and_both_run(zero_g):
    left = SimRobot(one_joint(name="left"), world=zero_g)
    right = SimRobot(one_joint(name="right"), world=zero_g)
    left.apply(NJointAction.Torque([1.0]))
    right.apply(NJointAction.Torque([-1.0]))
    for _ in range(10):
        left.step()
    assert left.read().velocity[0] > 0 > right.read().velocity[0]
    assert left.time == right.time == pytest.approx(0.01)
    right.close()
    right.close()
    left.step()
    assert zero_g.num_bodies == 1


def test_close_is_safe_twice_and_blocks_further_use(engine):
    robot = SimRobot(load_robot("planar2"), engine=engine)
    robot.close()
    robot.close()
    assert robot.world.closed
    with pytest.raises(Exception, match="closed"):
        robot.step()


def test_stalled_joints_are_the_stalled_flags_without_building_them(zero_g):
    """``state.stalled()``: None until a joint stalls, then the flags' STALLED bits."""
    free = description_to_dict(one_joint())["actuators"][0]
    stuck = {
        **free,
        "name": "stuck",
        "parent": "j",
        "min": -0.1,
        "max": 0.1,
        "limits": {"effort": 2.0, "velocity": 50.0},
    }
    description = description_from_dict({"name": "two", "actuators": [free, stuck]})
    with SimRobot(description, world=zero_g, stall_time=0.2, control_dt=0.01) as robot:
        robot.apply(NJointAction.Position([0.3, 1.0]))  # the second pushes into its stop
        seen = []
        for _ in range(40):
            robot.step()
            stalled = robot.read().stalled()  # before anything derived the flags
            flags = robot.read().actuator_state & ActuatorState.STALLED
            if stalled is None:
                assert not flags.any()
            else:
                np.testing.assert_array_equal(stalled, flags != 0)
                assert not stalled.flags.writeable
            seen.append(stalled is not None)
        assert not seen[0] and seen[-1]  # it stalled on the way
        state = robot.read()
        plain = dataclasses.replace(state, time=state.time)  # plain fields: from the flags
        np.testing.assert_array_equal(plain.stalled(), [False, True])
