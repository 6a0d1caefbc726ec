"""Backlash: a dead band in a servo's gears, per joint in the robot file (off by default).

The servo's encoder is on the motor side: under a steady load the motor side rests against
one flank of the gap, so the servo reads the joint half the dead band off, on the side the
load pushes. Checked on an emulated SO-101 (lockstep, in process) against the simulator's
true joint position, and the robot file's checks.
"""

from __future__ import annotations

import numpy as np
import pytest

from jointlab.errors import DescriptionError
from jointlab.hardware.servo_emulator.emulator import BusEmulator
from jointlab.hardware.vendors import bus_models
from jointlab.robots import load_robot
from jointlab.robots.description import RobotDescription

#: One encoder tick of the STS3215, rad.
TICK = 2 * np.pi / 4096


def with_backlash(joint: str, backlash: float) -> RobotDescription:
    data = load_robot("so101").to_dict()
    data["bus"]["servos"][joint]["backlash"] = backlash
    return RobotDescription.from_dict(data)


def _reading_minus_joint(description: RobotDescription) -> float:
    """Hold the upper arm out (gravity loads the shoulder); the servo's reading minus truth."""
    with BusEmulator(description, lockstep=True) as emulator:
        servos = emulator.servos
        emulator.move(np.array([0.0, 0.5, 0.0, 0.0, 0.0, 0.0]))
        for k in range(servos.n):
            servos.write_memory(k, 40, b"\x01")  # Torque Enable: hold here
        for _ in range(1500):
            emulator.tick()
        servos.refresh()
        true = emulator.report().position[1]
        ticks = servos.get("present_position").astype(np.float64)
        return float(description.transmissions.to_joint(ticks)[1] - true)


def test_a_loaded_joint_reads_half_its_backlash_off() -> None:
    assert abs(_reading_minus_joint(load_robot("so101"))) <= TICK  # off by default
    offset = _reading_minus_joint(with_backlash("shoulder_lift", 0.02))
    assert abs(abs(offset) - 0.01) <= TICK, offset


def test_backlash_is_checked_and_round_trips() -> None:
    description = with_backlash("gripper", 0.0175)
    assert description.bus.servos[5].backlash == 0.0175
    assert RobotDescription.from_dict(description.to_dict()).bus == description.bus
    with pytest.raises(DescriptionError, match=r"bus\.servos\.gripper\.backlash.*>= 0 in rad"):
        with_backlash("gripper", -0.01)
    with pytest.raises(DescriptionError, match=r"bus\.servos\.gripper\.backlash"):
        with_backlash("gripper", "a lot")
    with pytest.raises(DescriptionError, match=r"backlash = 4.0 rad is not smaller than the "
                       r"joint's range"):  # fmt: skip
        bus_models(with_backlash("gripper", 4.0))
