"""Range-of-motion calibration (LeRobot's method) on emulated buses, with a scripted person.

The person is scripted through the emulator's ``move`` (an arm moved by hand): the middle
pose at the first Enter, then one joint at a time to each end of its range, then Enter.
"""

from __future__ import annotations

import re
import shlex

import numpy as np
import pytest
from servo_helpers import emulated_bus

import jointlab
from jointlab.cli import main
from jointlab.errors import CommandRefused, ConfigurationError
from jointlab.hardware.servo_host.calibration import Calibration
from jointlab.hardware.servo_host.range_of_motion import (
    calibrate_range_of_motion,
    middle_pose,
    sweep_poses,
)
from jointlab.hardware.servo_host.robot import ServoBusRobot
from jointlab.robots import load_robot

ERROR = "offset_error=150&seed=4"
#: The middle pose is placed this far off (rad): the zero must not depend on it.
PLACEMENT_ERROR = 0.06


def assembled_offsets(name: str, seed: int = 4, error: float = 150) -> np.ndarray:
    """The offsets emulated:// assembles its arm with (see connect_emulated_bus)."""
    nominal = np.array(load_robot(name).transmissions.offset)
    return nominal + np.rint(np.random.default_rng(seed).uniform(-error, error, 6))


class ScriptedPerson:
    """Places the middle pose, then sweeps each joint to both ends, then presses Enter.

    Args:
        emulator: The emulated bus (its ``move`` is the person's hands).
        name: The robot.
        swept: Joints moved through their range (all by default).
        hold: Polls each pose is held for (re-placed at every poll: a person's hand holds
            the limp arm against gravity).
    """

    def __init__(self, emulator, name: str, swept=None, hold: int = 1) -> None:
        d = load_robot(name)
        self.emulator = emulator
        self.middle = middle_pose(d) + PLACEMENT_ERROR
        sweep = sweep_poses(d)  # two per joint, in joint order, the arm kept off the table
        self.poses = []
        for j in range(d.dof) if swept is None else swept:
            for pose in sweep[2 * j : 2 * j + 2]:
                self.poses += [pose] * hold
        self.enters = 0

    def place_middle(self, prompt: str = "") -> str:
        self.emulator.move(self.middle)
        self.enters += 1
        return ""

    def sweep_done(self) -> bool:
        if not self.poses:
            self.enters += 1
            return True
        self.emulator.move(self.poses.pop(0))
        return False


def expected_offsets(name: str) -> np.ndarray:
    """Ticks at joint zero under the half-turn homing of the (misplaced) middle pose."""
    d = load_robot(name)
    middle = (np.array(d.lower) + np.array(d.upper)) / 2 + PLACEMENT_ERROR
    return 2047 - np.array(d.transmissions.scale) * middle


@pytest.mark.parametrize("name", ["so101", "koch"])
def test_range_of_motion_writes_half_turn_homings_and_records_the_ranges(name) -> None:
    d = load_robot(name)
    with jointlab.connect(f"emulated://{name}?lockstep=1&calibrated=0&{ERROR}") as robot:
        person = ScriptedPerson(robot.emulator, name)
        tables = []
        result = calibrate_range_of_motion(
            robot, person.place_middle, person.sweep_done, tables.append
        )
        assert person.enters == 2  # one Enter per phase
        names = ("homing_offset", "min_position_limit", "max_position_limit")
        registers = {k: [robot.read_register(i, k) for i in range(6)] for k in names}
        # The middle pose reads half a turn now.
        robot.emulator.move(person.middle)
        np.testing.assert_allclose(robot.idle_cycle().extras["ticks"], 2047, atol=3)
    truth = assembled_offsets(name)
    feetech = name == "so101"
    # The Homing Offsets put the placed middle pose at 2047.
    at_middle = truth + d.transmissions.scale * person.middle
    want = at_middle - 2047 if feetech else 2047 - at_middle
    np.testing.assert_allclose([j.homing_offset for j in result.joints], want, atol=1.5)
    assert registers["homing_offset"] == [j.homing_offset for j in result.joints]
    assert registers["min_position_limit"] == [j.min_ticks for j in result.joints]
    assert registers["max_position_limit"] == [j.max_ticks for j in result.joints]
    # The zero comes from both ends of the sweep, not from the placement.
    np.testing.assert_allclose([j.offset for j in result.joints], expected_offsets(name), atol=2)
    spans = np.array([j.max_ticks - j.min_ticks for j in result.joints])
    np.testing.assert_allclose(spans, np.abs(d.transmissions.scale) * (d.upper - d.lower), atol=4)
    assert [j.direction for j in result.joints] == list(np.sign(d.transmissions.scale))
    assert result.method == "range_of_motion"
    # The live table saw every cycle's extremes; its last row is the result.
    assert tables[-1].low == tuple(j.min_ticks for j in result.joints)
    assert len(tables) == 12 + 1  # one row per poll of the 12 poses and the Enter


def test_a_joint_that_was_not_swept_is_named() -> None:
    with jointlab.connect(f"emulated://so101?lockstep=1&calibrated=0&{ERROR}") as robot:
        person = ScriptedPerson(robot.emulator, "so101", swept=[0, 1, 2, 3, 5])
        with pytest.raises(ConfigurationError, match=r"joint 'wrist_roll' \(servo id 5\)"):
            calibrate_range_of_motion(robot, person.place_middle, person.sweep_done)


def test_the_uncalibrated_error_is_a_command_that_calibrates(tmp_path, monkeypatch) -> None:
    """arm() on an uncalibrated bus prints a command; run as printed, it calibrates the arm.

    Real time (a ``feetech://`` URL has no lockstep clock): the person holds each pose for a
    few bus cycles, as a hand holds the limp arm.
    """
    monkeypatch.setenv("JOINTLAB_CALIBRATION_DIR", str(tmp_path))
    description = load_robot("so101")
    with emulated_bus("so101", offsets=assembled_offsets("so101")) as bus:
        robot = ServoBusRobot(bus.path, "so101", calibration=False, timeout_ms=500, retries=4)
        with robot, pytest.raises(CommandRefused, match="not calibrated") as refused:
            robot.arm()
        command = re.search(r"run `([^`]+)`", str(refused.value)).group(1)
        argv = shlex.split(command)
        assert argv[:2] == ["jointlab", "calibrate"] and argv[2] == f"feetech://{bus.path}"
        person = ScriptedPerson(bus, "so101", hold=3)
        monkeypatch.setattr("builtins.input", person.place_middle)
        monkeypatch.setattr("jointlab.cli.calibrate.enter_pressed", person.sweep_done)
        assert main(argv[1:]) == 0
        written = Calibration.load(tmp_path / "so101.calibration.yaml")
        assert written.method == "range_of_motion"
        np.testing.assert_allclose(
            [j.offset for j in written.joints], expected_offsets("so101"), atol=25
        )
        with ServoBusRobot(bus.path, "so101", timeout_ms=500, retries=4) as robot:
            assert robot.calibration == written
            robot.arm()
            for _ in range(150):
                robot.apply(jointlab.NJointAction.Position(description.home))
                robot.step()
            truth = np.array(bus.report().position)
    np.testing.assert_allclose(truth, description.home, atol=0.1)  # gravity sag
