"""``brakes(True)`` on a robot without brakes is refused alike on every backend, and it holds.

Engaging brakes replaces the command in force by zero torque; on a robot that has none,
nothing would then hold the arm (it went limp in simulation and on the JointLab device,
while the servo bus refused). Every backend now refuses with the same type and reason
(``no_brakes``), naming the robot, and the armed robot keeps holding its pose under gravity.
Emulated backends run in lockstep; numbers, not timings.
"""

from __future__ import annotations

import numpy as np
import pytest

import jointlab
from jointlab.errors import CommandRefused
from jointlab.hardware.emulator import Device
from jointlab.hardware.protocol import BrakesRequest, Frame, Nack, NackReason
from jointlab.sim import SimRobot

BACKENDS = [
    "sim://so101",
    "sim://so101?engine=mujoco",
    "emulated://so101?bus=jointlab&lockstep=1",  # the JointLab device emulator
    "emulated://so101?lockstep=1",  # the emulated Feetech servo bus
]


@pytest.mark.parametrize("url", BACKENDS)
def test_brakes_on_a_robot_without_brakes_are_refused_and_it_keeps_holding(url: str) -> None:
    with jointlab.connect(url) as robot:
        assert not robot.description.has_brakes.any()
        robot.disarm()  # a SimRobot starts armed with a zero action; arming holds the pose
        robot.arm()
        robot.step()
        held = robot.read().position
        with pytest.raises(
            CommandRefused,
            match=r"brakes\(True\) refused: robot 'so101'.*"
            r"has no brakes",
        ) as info:
            robot.brakes(True)
        assert info.value.reason == "no_brakes"
        robot.brakes(False)  # nothing to release: accepted
        start = robot.read().time
        while robot.read().time - start < 0.3:  # gravity acts on so101's shoulder and elbow
            robot.step()
        state = robot.read()
        assert state.armed and state.motor_power
        assert np.abs(state.position - held).max() < 5e-3  # still held, not falling


def test_the_device_nacks_brakes_it_does_not_have() -> None:
    """BRAKES 1 from any host: NACK UNSUPPORTED without brakes, ACK with them."""
    for name, has_brakes in (("so101", False), ("arm6", True)):
        plant = SimRobot(name, dt=1e-3, control_dt=1e-3)
        try:
            device = Device(plant)
            reply = device.handle(Frame(2, 1, BrakesRequest(True)))
            if has_brakes:
                assert not isinstance(reply, Nack) and device.gate.braked
            else:
                assert isinstance(reply, Nack) and reply.reason is NackReason.UNSUPPORTED
                assert not device.gate.brakes_requested
        finally:
            plant.close()
