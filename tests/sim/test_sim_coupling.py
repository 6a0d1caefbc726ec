"""Coupled joints (Intrinsic LinearDependency) in the simulator."""

from __future__ import annotations

import numpy as np

from jointlab.interface import NJointAction
from jointlab.robots import description_from_dict
from jointlab.sim import SimRobot


def relation_error(robot: SimRobot) -> np.ndarray:
    q = robot.read().position
    coupled = robot.description.apply_coupling(q)
    return np.abs(q - coupled)[robot.description.dependent]


def test_gripper_follower_tracks_its_leader_under_load(engine):
    with SimRobot("coupled_gripper", engine=engine) as robot:
        left = robot.description.joint_index("left_finger")
        worst = 0.0
        ends = []
        for k in range(600):
            target = 0.005 + 0.03 * (k // 100 % 2)  # open, close, open...
            action = NJointAction.Position(robot.description.home)
            position = np.array(action.position)
            position[left] = target
            robot.apply(NJointAction.Position(position))
            robot.apply_external_force("right_finger", [0.0, 30.0, -10.0])  # squeeze it
            robot.step()
            worst = max(worst, float(relation_error(robot).max()))
            if k % 100 == 99:
                ends.append(robot.read().position[left])
        assert worst < 1e-3
        assert np.all(np.diff(ends)[::2] > 0.01)  # the loaded pair really opens and closes
        assert np.all(np.diff(ends)[1::2] < -0.01)


def test_dependent_joint_ignores_its_action_entries(engine):
    def run(follower_torque: float) -> np.ndarray:
        with SimRobot("coupled_gripper", engine=engine) as robot:
            right = robot.description.joint_index("right_finger")
            torque = np.zeros(robot.dof)
            torque[right] = follower_torque
            position = np.full(robot.dof, np.nan)
            position[right] = 0.04
            robot.apply(NJointAction.TorqueAndPosition(torque, position))
            for _ in range(200):
                robot.step()
                assert robot.read().torque[right] == 0.0
            return robot.read().position

    np.testing.assert_array_equal(run(0.0), run(35.0))


def test_reset_puts_dependent_joints_on_their_relation(engine):
    with SimRobot("coupled_gripper", engine=engine) as robot:
        state = robot.reset(q=[0.2, 0.01, 0.0])
        left, right = (robot.description.joint_index(n) for n in ("left_finger", "right_finger"))
        assert state.position[right] == state.position[left] == 0.01


def test_a_joint_with_two_leaders_follows_their_sum(engine):
    def joint(name: str, **extra: object) -> dict:
        return {
            "name": name,
            "type": "rotary",
            "parent": "base",
            "axis": [0, 0, 1],
            "length": 0.2,
            "min": -3.0,
            "max": 3.0,
            "limits": {"effort": 5.0},
            "gains": {"kp": 20.0, "kd": 0.5},
            "link": {"mass": 1.0, "radius": 0.02},
            **extra,
        }

    description = description_from_dict(
        {
            "name": "differential",
            "base": {"position": [0.0, 0.0, 0.5]},
            "actuators": [
                joint("a"),
                joint("b"),
                joint(
                    "out",
                    home=0.1,
                    coupling={"alpha_self": 1.0, "alpha_leading": {"a": 0.5, "b": -0.25}},
                ),
            ],
        }
    )
    with SimRobot(description, control_dt=0.002, engine=engine) as robot:
        assert description.dependent.tolist() == [False, False, True]
        worst = reach = 0.0
        for k in range(500):  # the leaders follow slow sines while a force loads the output
            phase = np.pi * k * robot.control_dt
            robot.apply(NJointAction.Position([0.5 * np.sin(phase), -0.3 * np.sin(phase), 0.0]))
            robot.apply_external_force("out_tool", [0.0, 5.0, 0.0], duration=robot.control_dt)
            robot.step()
            worst = max(worst, float(relation_error(robot).max()))
            reach = max(reach, abs(robot.read().position[0]))
        assert worst < 1e-3
        assert reach > 0.3  # the leaders did move
