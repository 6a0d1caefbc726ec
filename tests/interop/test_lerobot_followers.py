"""LeRobot's unmodified SO-101 and Koch followers on JointLab's emulated servo buses.

Each test starts an emulated bus on a pseudo-terminal and drives it with LeRobot's own
``SO101Follower`` / ``KochFollower``: connect (which configures every servo), LeRobot's
calibration flow with a scripted person at the two prompts (the arm is moved by hand through
the emulator, as a person would), then observations and actions tracked at three targets per
joint. Only the person is scripted: ``input`` and LeRobot's ``enter_pressed``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from jointlab import load_robot
from jointlab.hardware.servo.emulator_process import BusEmulatorProcess

pytestmark = pytest.mark.slow

#: Seconds LeRobot's follower gets to reach each target.
SETTLE = 1.2
#: Tracking tolerance of joints that carry no gravity load at the test poses, degrees.
TOLERANCE_DEG = 1.0
#: Tracking bound of the joints that hold the arm up, degrees. LeRobot runs these servos'
#: position loops with proportional gain only (SO-101: P = 16, I = 0; Koch: the defaults, I = 0
#: except the elbow), so each settles where its P term balances gravity: 1.4-3.1 degrees
#: here, the droop of the servo model's gain scaling (``jointlab.hardware.servo.gains``).
LOADED_BOUND_DEG = 3.5
#: Joints whose axis is vertical or along the forearm: gravity does not load them.
UNLOADED = ("shoulder_pan", "wrist_roll")


class ScriptedPerson:
    """Moves the limp emulated arm at LeRobot's calibration prompts.

    At the first ``input()`` it puts the arm in the middle of every joint's range; during
    LeRobot's range recording each ``enter_pressed()`` call moves one joint to one end of its
    range, and the call after the last move "presses Enter".
    """

    def __init__(self, emulator: BusEmulatorProcess, robot: str, swept: list[int]) -> None:
        description = load_robot(robot)
        self.emulator = emulator
        self.low = np.asarray(description.lower, dtype=float)
        self.high = np.asarray(description.upper, dtype=float)
        self.middle = (self.low + self.high) / 2.0
        self.poses = []
        for joint in swept:
            for end in (self.low[joint], self.high[joint]):
                pose = self.middle.copy()
                pose[joint] = end
                self.poses.append(pose)
        self.poses.append(self.middle)

    def input(self, prompt: str = "") -> str:
        self.emulator.move(self.middle)
        return ""

    def enter_pressed(self) -> bool:
        if not self.poses:
            return True
        self.emulator.move(self.poses.pop(0))
        time.sleep(0.02)
        return False


def _track(robot, names: list[str]) -> list[float]:
    """Worst tracking error (degrees) per joint over three targets each, one joint at a time."""
    start = robot.get_observation()
    home = {f"{n}.pos": float(start[f"{n}.pos"]) for n in names}
    worst = []
    for name in names:
        errors = []
        for delta in (-10.0, 10.0, 0.0):
            action = dict(home)
            action[f"{name}.pos"] = home[f"{name}.pos"] + delta
            robot.send_action(action)
            time.sleep(SETTLE)
            seen = robot.get_observation()[f"{name}.pos"]
            errors.append(abs(seen - action[f"{name}.pos"]))
        worst.append(max(errors))
    return worst


def _check(worst: list[float], names: list[str]) -> None:
    errors = dict(zip(names, worst, strict=True))
    for name, error in errors.items():
        bound = TOLERANCE_DEG if name in UNLOADED else LOADED_BOUND_DEG
        assert error <= bound, (name, errors)


def _calibrate(robot, person: ScriptedPerson, monkeypatch) -> None:
    import lerobot.motors.motors_bus as motors_bus

    monkeypatch.setattr("builtins.input", person.input)
    monkeypatch.setattr(motors_bus, "enter_pressed", person.enter_pressed)
    robot.connect(calibrate=True)


def test_so101_follower_connects_calibrates_and_tracks(tmp_path: Path, monkeypatch) -> None:
    from lerobot.robots.so_follower import SO101Follower, SO101FollowerConfig

    with BusEmulatorProcess("so101") as emulator:
        config = SO101FollowerConfig(
            port=emulator.path, id="emulated", calibration_dir=tmp_path, use_degrees=True
        )
        robot = SO101Follower(config)
        person = ScriptedPerson(emulator, "so101", swept=[0, 1, 2, 3, 5])
        _calibrate(robot, person, monkeypatch)
        try:
            assert robot.is_calibrated
            assert (tmp_path / "emulated.json").exists()
            bus = robot.bus
            # The offsets LeRobot wrote are applied: the middle pose reads about half a turn.
            emulator.move(person.middle)
            present = bus.sync_read("Present_Position", normalize=False)
            for name in ("shoulder_pan", "elbow_flex", "wrist_flex"):
                assert abs(present[name] - 2047) < 60, (name, present[name])
            names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]
            _check(_track(robot, names), names)
        finally:
            robot.disconnect()


def test_koch_follower_connects_calibrates_and_tracks(tmp_path: Path, monkeypatch) -> None:
    from lerobot.robots.koch_follower import KochFollower, KochFollowerConfig

    with BusEmulatorProcess("koch") as emulator:
        config = KochFollowerConfig(
            port=emulator.path, id="emulated", calibration_dir=tmp_path, use_degrees=True
        )
        robot = KochFollower(config)
        person = ScriptedPerson(emulator, "koch", swept=[0, 1, 2, 3, 5])
        _calibrate(robot, person, monkeypatch)
        try:
            assert robot.is_calibrated
            models = robot.bus.sync_read("Model_Number", normalize=False)
            assert models["shoulder_pan"] == 1060 and models["gripper"] == 1200
            names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]
            _check(_track(robot, names), names)
        finally:
            robot.disconnect()
