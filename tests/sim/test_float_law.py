"""The plain law in Python floats (``TorqueLoop._float_run``) is the numpy law, bit for bit.

arm6 with ideal motors and no friction takes the float path; with
``FLOAT_LAW_MAX_DOF = 0`` the same robot takes the numpy law. Every reported field must be
identical through new actions, saturated targets, custom gains, a reset, disarming and
re-arming, a zero action, an external push and control periods of one and several physics
steps.
"""

from __future__ import annotations

import numpy as np
import pytest

import jointlab.sim.pybullet.loop as pybullet_loop
from jointlab.interface import NJointAction
from jointlab.robots import RobotDescription, load_robot
from jointlab.sim import SimRobot


def _ideal_arm6() -> RobotDescription:
    data = load_robot("arm6").to_dict()
    for actuator in data["actuators"]:
        if "motor" in actuator:
            actuator["motor"] = {"model": "ideal"}
        if "dynamics" in actuator:
            actuator["dynamics"]["static_friction"] = 0.0
    return RobotDescription.from_dict(data)


def _trajectory(description: RobotDescription, steps_per_period: int) -> np.ndarray:
    rows = []
    home = description.home
    with SimRobot(description, control_dt=0.001 * steps_per_period) as robot:
        for i in range(160):
            target = home + 0.05 * np.sin(i / 20.0)
            if i == 60:
                robot.reset()
            if 30 <= i < 45:
                robot.apply(NJointAction.Position(target + 1.5))  # saturates the effort
            elif i == 70:
                robot.apply(NJointAction.Position(target, kp=np.full(6, 50.0)))
            elif i == 90:
                robot.disarm()
                robot.arm()
            elif i == 110:
                robot.apply(NJointAction.Zero(6))
            elif i != 111:
                robot.apply(NJointAction.Position(target))
            if i == 130:
                robot.apply_external_force("base", [0.0, 0.0, 5.0], duration=0.01)
            robot.step()
            state = robot.read()
            rows.append(np.concatenate([state.position, state.velocity, state.torque,
                                        state.acceleration, state.current,
                                        state.actuator_state, [state.time]]))  # fmt: skip
    return np.array(rows)


@pytest.mark.parametrize("steps_per_period", [1, 7])
def test_the_float_law_is_the_numpy_law_bit_for_bit(monkeypatch, steps_per_period):
    description = _ideal_arm6()
    with SimRobot(description) as robot:  # the float path is taken for this robot
        assert "_float_run" in robot._loop.run.__qualname__
    floats = _trajectory(description, steps_per_period)
    monkeypatch.setattr(pybullet_loop, "FLOAT_LAW_MAX_DOF", 0)
    with SimRobot(description) as robot:
        assert "_float_run" not in robot._loop.run.__qualname__
    numpy_law = _trajectory(description, steps_per_period)
    assert np.array_equal(floats, numpy_law)
    assert np.abs(np.diff(floats[:, 12:18], axis=0)).max() > 0  # the torques did change


def test_robots_with_motor_curves_or_friction_keep_the_numpy_law():
    with SimRobot("arm6") as robot:  # DC-motor lines and Coulomb friction
        assert "_float_run" not in robot._loop.run.__qualname__
