"""Backlash: a dead band in a servo's gears, per joint in the robot file (off by default).

The robot file's checks (what the emulated servo does with it:
tests/hardware/servo/test_servo_character.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from jointlab.errors import DescriptionError
from jointlab.hardware.vendors import bus_models
from jointlab.robots import description_from_dict, description_to_dict, load_robot
from jointlab.robots.description import RobotDescription

#: One encoder tick of the STS3215, rad.
TICK = 2 * np.pi / 4096


def with_backlash(joint: str, backlash: float) -> RobotDescription:
    data = description_to_dict(load_robot("so101"))
    data["bus"]["servos"][joint]["backlash"] = backlash
    return description_from_dict(data)


def test_backlash_is_checked_and_round_trips() -> None:
    description = with_backlash("gripper", 0.0175)
    assert description.bus.servos[5].backlash == 0.0175
    assert description_from_dict(description_to_dict(description)).bus == description.bus
    with pytest.raises(DescriptionError, match=r"bus\.servos\.gripper\.backlash"):
        with_backlash("gripper", -0.01)
    with pytest.raises(DescriptionError, match=r"bus\.servos\.gripper\.backlash"):
        with_backlash("gripper", "a lot")
    narrow = description_to_dict(load_robot("so101"))
    gripper = next(a for a in narrow["actuators"] if a["name"] == "gripper")
    gripper["min"], gripper["max"] = 0.0, 0.01
    gripper["home"] = gripper["centre"] = 0.005
    narrow["bus"]["servos"]["gripper"]["backlash"] = 0.02
    with pytest.raises(
        DescriptionError,
        match=r"backlash = 0.02 rad is not smaller than the "
        r"joint's range",
    ):
        bus_models(description_from_dict(narrow))
