"""Why SimRobot offers no implicit PD: none of PyBullet's keeps the NJointAction law.

The law is ``tau = kp·(q* − q) + kd·(q̇* − q̇)``: under a constant load ``L`` a joint settles at
``q* − q = L/kp``. PyBullet's motors, checked on one gravity-loaded joint at 1 kHz:

* ``POSITION_CONTROL`` is a velocity constraint with dimensionless gains; mapped to the
  law's (``positionGain = kp·dt²/I``, ``velocityGain = kd·dt/I``) it still settles somewhere
  else, and its force depends on the constraint solver, not on ``kp``;
* ``PD_CONTROL`` evaluates the law explicitly, exactly what SimRobot's own loop does: the
  same result and the same stability bound, so nothing to gain;
* ``STABLE_PD_CONTROL`` needs the pdControlPlugin and ``setJointMotorControlMultiDofArray``,
  and drove no torque into a plain revolute joint when tried (not tested here).

If a PyBullet release changes that, this test fails and the option can be reconsidered.
"""

from __future__ import annotations

import pybullet
import pytest
from pybullet_urdf import load_urdf

from jointlab.interface import NJointAction
from jointlab.robots import description_from_dict
from jointlab.sim import SimRobot, World

KP, KD, DT = 50.0, 2.0, 1e-3
ARM = description_from_dict(
    {
        "name": "arm",
        "actuators": [
            {
                "name": "j",
                "type": "rotary",
                "axis": [0, 1, 0],
                "length": 0.5,
                "min": -3.0,
                "max": 3.0,
                "link": {"mass": 1.0},
                "dynamics": {"armature": 0.0},
                "gains": {"kp": KP, "kd": KD},
            }
        ],
    }
)
LOAD = 1.0 * 9.81 * 0.25  # the horizontal link's weight about the joint, N·m


def settle_with_motor(mode: int) -> float:
    """Joint position after 4 s under one of PyBullet's own motors."""
    client = pybullet.connect(pybullet.DIRECT)
    try:
        pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
        pybullet.setTimeStep(DT, physicsClientId=client)
        body = load_urdf(client, ARM)
        inertia = pybullet.calculateMassMatrix(body, [0.0], physicsClientId=client)[0][0]
        pybullet.setJointMotorControl2(
            body, 0, pybullet.VELOCITY_CONTROL, force=0.0, physicsClientId=client
        )  # the default motor off
        gains = (
            (KP * DT**2 / inertia, KD * DT / inertia)
            if mode == pybullet.POSITION_CONTROL
            else (KP, KD)
        )
        for _ in range(4000):
            pybullet.setJointMotorControl2(
                body,
                0,
                mode,
                targetPosition=0.0,
                targetVelocity=0.0,
                positionGain=gains[0],
                velocityGain=gains[1],
                force=100.0,
                physicsClientId=client,
            )
            pybullet.stepSimulation(physicsClientId=client)
        return pybullet.getJointState(body, 0, physicsClientId=client)[0]
    finally:
        pybullet.disconnect(client)


def test_the_law_settles_at_load_over_kp_and_only_explicit_pd_agrees():
    with World(ground=False) as world:
        robot = SimRobot(ARM, world=world)
        robot.apply(NJointAction.Position([0.0]))
        for _ in range(4000):
            robot.step()
        ours = robot.read().position[0]
    assert abs(ours) == pytest.approx(LOAD / KP, rel=2e-3)
    assert settle_with_motor(pybullet.PD_CONTROL) == pytest.approx(ours, rel=1e-3)
    constraint = settle_with_motor(pybullet.POSITION_CONTROL)
    assert abs(constraint - ours) > 0.01 * abs(ours)  # a different law
