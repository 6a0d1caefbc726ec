"""Calibration: automatic homing against the emulated hard stops, manual, files, the CLI."""

from __future__ import annotations

import re

import numpy as np
import pytest
from servo_helpers import emulated_bus

import jointlab
from jointlab.cli import main
from jointlab.errors import CommandRefused
from jointlab.hardware.servo_host.calibration import Calibration, calibration_path
from jointlab.hardware.servo_host.homing import calibrate_automatic, calibrate_manual
from jointlab.hardware.servo_host.robot import ServoBusRobot
from jointlab.robots import dump_yaml, load_robot

ERROR = "offset_error=150&seed=4"


def assembled_offsets(name: str, seed: int = 4, error: float = 150) -> np.ndarray:
    """The offsets emulated:// assembles its arm with (see connect_emulated_bus)."""
    nominal = np.array(load_robot(name).transmissions.offset)
    return nominal + np.rint(np.random.default_rng(seed).uniform(-error, error, 6))


@pytest.mark.slow
@pytest.mark.parametrize(("name", "joint"), [("koch", "wrist_roll")])
def test_automatic_homing_finds_the_assembled_offsets(name, joint) -> None:
    """Stall-based homing against the simulated hard stops, at the safe default torque.

    One joint keeps it short: the Koch's wrist roll, an XL330 that runs in current mode, is homed
    in position mode at 25 % of stall. (Whole arms are homed through ``jointlab calibrate --auto``
    in test_safe_homing.)
    """
    joints = [joint]
    with jointlab.connect(f"emulated://{name}?lockstep=1&calibrated=0&{ERROR}") as robot:
        result = calibrate_automatic(robot, speed=2.0, joints=joints)
        assert not robot.armed and robot.read_register(joint, "torque_enable") == 0
    truth = assembled_offsets(name)
    for joint in result.joints:
        i = robot.description.joint_index(joint.joint)
        if joint.joint in joints:
            assert joint.offset == pytest.approx(truth[i], abs=4), joint.joint
            assert joint.max_ticks - joint.min_ticks > 1500
        else:
            assert joint.offset == robot.description.transmissions.offset[i]
    assert result.method == "automatic"


def test_manual_calibration_records_offsets_directions_and_ranges(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("JOINTLAB_CALIBRATION_DIR", str(tmp_path))
    description = load_robot("so101")
    with jointlab.connect(f"emulated://so101?lockstep=1&calibrated=0&{ERROR}") as robot:

        def person(instruction: str) -> None:  # moves the limp arm as asked
            joint, end = re.search(r"move (\w+).*(minimum|maximum)", instruction).groups()
            i = description.joint_index(joint)
            q = np.zeros(6)
            q[i] = description.lower[i] if end == "minimum" else description.upper[i]
            robot.emulator.move(q)

        result = calibrate_manual(robot, person)
    np.testing.assert_allclose(
        [j.offset for j in result.joints], assembled_offsets("so101"), atol=1.5
    )
    assert [j.direction for j in result.joints] == [1, -1, 1, -1, 1, 1]  # as the robot file
    path = result.save(calibration_path(description))
    assert path == tmp_path / "so101.calibration.yaml"
    assert Calibration.load(path) == result
    # connect() finds it there: the same arm on feetech:// arms and holds home.
    with emulated_bus("so101", lockstep=True, offsets=assembled_offsets("so101")) as bus:
        with ServoBusRobot(
            bus.path, "so101", advance=bus.advance, timeout_ms=500, retries=4
        ) as robot:
            assert robot.calibration == result
            robot.arm()
            for _ in range(100):
                robot.apply(jointlab.NJointAction.Position(description.home))
                robot.step()
            truth = np.array(bus.report().position)
            np.testing.assert_allclose(truth, description.home, atol=0.08)  # gravity sag
        with pytest.raises(CommandRefused, match="not calibrated"):
            ServoBusRobot(bus.path, "so101", calibration=False, advance=bus.advance).arm()


@pytest.mark.slow
def test_jointlab_calibrate_writes_the_file_beside_the_robot_file(tmp_path, capsys) -> None:
    robot_file = tmp_path / "my_so101.yaml"
    robot_file.write_text(dump_yaml(load_robot("so101")))
    url = f"emulated://{robot_file}?lockstep=1&calibrated=0&{ERROR}"
    code = main(
        [
            "calibrate",
            url,
            "--robot",
            str(robot_file),
            "--auto",
            "--speed",
            "2",
            "--joints",
            "gripper",
        ]
    )
    assert code == 0
    written = tmp_path / "my_so101.calibration.yaml"
    assert f"wrote {written}" in capsys.readouterr().out.replace("\n", "")
    result = Calibration.load(written)
    assert result.joints[5].offset == pytest.approx(assembled_offsets("so101")[5], abs=4)


def test_jointlab_calibrate_manual_refuses_a_joint_that_never_moved(
    tmp_path, capsys, monkeypatch
) -> None:
    robot_file = tmp_path / "my_so101.yaml"
    robot_file.write_text(dump_yaml(load_robot("so101")))
    monkeypatch.setattr("builtins.input", lambda prompt="": "")  # Enter, and nobody moved it
    code = main(
        [
            "calibrate",
            f"emulated://{robot_file}?lockstep=1&calibrated=0",
            "--robot",
            str(robot_file),
            "--manual",
        ]
    )
    assert code == 2
    assert "moved only" in capsys.readouterr().err
    assert not (tmp_path / "my_so101.calibration.yaml").exists()
