"""The identified servo character in the robot file, and how the emulated firmware applies it.

``bus.servos.<joint>`` may carry ``stiffness``, ``backlash`` and ``delay``; a file keeps them
(and only non-default ones) and refuses bad values naming the field. The emulated servos,
ticked in this process: the stiffness factor scales the P term's droop, backlash leaves the
joint half the play short of a goal it approaches, a delay holds the goal back whole ticks.
"""

from __future__ import annotations

import numpy as np
import pytest

from jointlab.errors import DescriptionError
from jointlab.hardware.servo_emulator.character import GoalDelay, ServoCharacter
from jointlab.hardware.servo_emulator.emulator import BusEmulator
from jointlab.robots import RobotDescription, description_from_dict, description_to_dict, load_robot


def _so101(**character: float) -> RobotDescription:
    """The SO-101 with datasheet servos (no play: the built-in file's 1° taken out), then
    ``character`` on every servo."""
    data = description_to_dict(load_robot("so101"))
    for servo in data["bus"]["servos"].values():
        servo.update({"backlash": 0.0, **character})
    return description_from_dict(data)


def test_the_character_round_trips_and_defaults_stay_out_of_files() -> None:
    described = _so101(stiffness=0.7, backlash=0.0175, delay=0.01)
    servo = described.bus.servos[1]
    assert (servo.stiffness, servo.backlash, servo.delay) == (0.7, 0.0175, 0.01)
    again = description_from_dict(description_to_dict(described))
    assert again.bus == described.bus
    assert "stiffness" not in description_to_dict(load_robot("so101"))["bus"]["servos"]["gripper"]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("stiffness", 0.0, "bus.servos.shoulder_pan.stiffness': = 0.0 must be > 0"),
        ("backlash", -0.01, "bus.servos.shoulder_pan.backlash': = -0.01 must be >= 0"),
        ("delay", 0.5, "bus.servos.shoulder_pan.delay': = 0.5 must be >= 0 and <= 0.1 s"),
        ("delay", "fast", "bus.servos.shoulder_pan.delay': must be a number s"),
    ],
)
def test_bad_character_values_name_the_field(key: str, value: object, message: str) -> None:
    data = description_to_dict(load_robot("so101"))
    data["bus"]["servos"]["shoulder_pan"][key] = value
    with pytest.raises(DescriptionError, match=message.replace(".", r"\.")):
        description_from_dict(data)


def test_a_goal_delay_line_returns_the_goal_whole_ticks_ago() -> None:
    line = GoalDelay(np.array([0, 2]))
    out = [line.push(np.array([float(k), float(k)])) for k in range(5)]
    assert [o.tolist() for o in out] == [[0, 0], [1, 0], [2, 0], [3, 1], [4, 2]]
    character = ServoCharacter.of(_so101(backlash=0.02), np.full(6, 4096 / (2 * np.pi)), 1e-3)
    half = 0.01 * 4096 / (2 * np.pi)
    error = character.dead_band(np.array([0.0, half / 2, half + 3, -half - 3, 10 * half, 0.0]))
    assert np.allclose(error, [0, 0, 3, -3, 9 * half, 0])


def _hold(emulator: BusEmulator, goal_ticks: np.ndarray, ticks: int) -> np.ndarray:
    servos = emulator.servos
    servos.set("goal_position", goal_ticks)
    servos.set("torque_enable", np.ones(servos.n))
    for _ in range(ticks):
        emulator.tick()
    servos.refresh()
    return servos.get("present_position").astype(float)


def test_the_firmware_applies_stiffness_backlash_and_delay() -> None:
    elbow, roll = 2, 4
    results = {}
    for name, character in {
        "nominal": {},
        "soft": {"stiffness": 0.5},
        "play": {"backlash": float(np.radians(2.0))},
        "late": {"delay": 0.05},
    }.items():
        with BusEmulator(_so101(**character), lockstep=True) as emulator:
            emulator.move([0.0, 0.0, 1.2, 0.6, 0.0, 0.6])  # raised off the table
            present = emulator.servos.get("present_position").astype(float)
            held = _hold(emulator, present, 600)  # the droop under gravity
            above = present.copy()
            above[roll] += 60
            _hold(emulator, above, 400)
            moved = _hold(emulator, present, 30)  # 30 ms after a goal back down
            back = _hold(emulator, present, 600)
            results[name] = (held - present, moved, back - present)
    droop = {k: v[0][elbow] for k, v in results.items()}
    assert abs(droop["soft"] / droop["nominal"] - 2.0) < 0.25
    # 2° of play: the wrist roll stops 1° (11 ticks) short of the goal it came down to.
    assert abs(results["nominal"][2][roll]) <= 1
    assert 9 <= results["play"][2][roll] <= 13
    # A 50 ms delay: 30 ms after the new goal the wrist has not started back down.
    assert results["late"][1][roll] > results["nominal"][1][roll] + 20


def test_lockstep_time_keeps_to_the_host_at_frames_of_fractional_ticks() -> None:
    with BusEmulator("so101", lockstep=True) as emulator:
        for _ in range(30):  # thirty 30 fps frames: 33.3 firmware ticks each
            emulator.advance(1.0 / 30.0, 0)
        assert emulator.servos.tick_count == 1000
