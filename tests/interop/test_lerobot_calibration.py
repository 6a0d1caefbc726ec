"""LeRobot's calibration JSON both ways, checked with LeRobot's own SO101Follower.

Export: JointLab calibrates an emulated SO-101 (range of motion, scripted person) and exports;
LeRobot's unmodified follower, given that file, finds the servos calibrated and reads the
joint angles JointLab's convention predicts. Import: LeRobot's own calibration flow writes
its file; JointLab imports it and holds the arm's home pose with it. Real time (LeRobot has
no lockstep clock); tolerances cover a limp arm sagging for one bus cycle.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jointlab
from jointlab.cli import main
from jointlab.errors import DescriptionError
from jointlab.hardware.servo_emulator.emulator_process import BusEmulatorProcess
from jointlab.hardware.servo_host.calibration import Calibration
from jointlab.hardware.servo_host.lerobot_calibration import (
    export_lerobot,
    from_lerobot,
    import_lerobot,
    to_lerobot,
)
from jointlab.hardware.servo_host.range_of_motion import calibrate_range_of_motion, sweep_poses
from jointlab.hardware.servo_host.robot import ServoBusRobot

SO101 = jointlab.load_robot("so101")
OFFSETS = np.array(SO101.transmissions.offset) + np.array([120, -90, 60, -140, 30, 100])
LOW, HIGH = np.array(SO101.lower), np.array(SO101.upper)
MIDDLE = (LOW + HIGH) / 2


class Person:
    """Middle pose at the first Enter; each joint to both ends (held a few polls); Enter.

    The sweep keeps the arm off the table (``sweep_poses``): LeRobot's flow records the same
    extremes as JointLab's.
    """

    def __init__(self, emulator: BusEmulatorProcess, hold: int = 3) -> None:
        self.emulator = emulator
        self.poses = [pose for pose in sweep_poses(SO101) for _ in range(hold)]

    def input(self, prompt: str = "") -> str:
        self.emulator.move(MIDDLE)
        return ""

    def enter_pressed(self) -> bool:
        if not self.poses:
            return True
        self.emulator.move(self.poses.pop(0))
        time.sleep(0.01)
        return False


def _follower(path: str, folder: Path):
    from lerobot.robots.so_follower import SO101Follower, SO101FollowerConfig

    config = SO101FollowerConfig(port=path, id="arm", calibration_dir=folder, use_degrees=True)
    return SO101Follower(config)


@pytest.mark.slow
def test_an_exported_calibration_is_loaded_by_lerobots_follower(tmp_path) -> None:
    with BusEmulatorProcess("so101", offsets=OFFSETS, fifo=True) as emulator:
        with ServoBusRobot(
            emulator.path, "so101", calibration=False, timeout_ms=500, retries=4
        ) as robot:
            person = Person(emulator)
            result = calibrate_range_of_motion(robot, person.input, person.enter_pressed)
        exported = export_lerobot(result, tmp_path / "arm.json")
        data = json.loads(exported.read_text())
        assert list(data["gripper"]) == [
            "id",
            "drive_mode",
            "homing_offset",
            "range_min",
            "range_max",
        ]
        follower = _follower(emulator.path, tmp_path)
        follower.connect(calibrate=False)
        try:
            assert follower.is_calibrated  # LeRobot compares the servos' registers to the file
            # LeRobot's configure() leaves the servos holding; a person moves a limp arm (with
            # torque on, the servos pull back between the move and the read: a race)
            follower.bus.disable_torque()
            q = MIDDLE + np.array([0.4, -0.3, 0.5, -0.4, 0.8, 0.3])
            emulator.move(q)
            seen = follower.get_observation()
        finally:
            follower.disconnect()
    sign = np.sign(SO101.transmissions.scale)
    for j, name in enumerate(SO101.joint_names[:5]):  # degrees from the middle of the range
        want = sign[j] * math.degrees(q[j] - MIDDLE[j]) * 4096 / 4095
        assert seen[f"{name}.pos"] == pytest.approx(want, abs=1.5), name
    gripper = (q[5] - LOW[5]) / (HIGH[5] - LOW[5]) * 100  # LeRobot's gripper: 0-100 %
    assert seen["gripper.pos"] == pytest.approx(gripper, abs=1.5)


@pytest.mark.slow
def test_a_calibration_lerobot_wrote_is_imported(tmp_path, monkeypatch) -> None:
    import lerobot.motors.motors_bus as motors_bus

    with BusEmulatorProcess("so101", offsets=OFFSETS, fifo=True) as emulator:
        follower = _follower(emulator.path, tmp_path)
        person = Person(emulator, hold=1)
        monkeypatch.setattr("builtins.input", person.input)
        monkeypatch.setattr(motors_bus, "enter_pressed", person.enter_pressed)
        follower.connect(calibrate=True)  # LeRobot's own calibration flow
        follower.disconnect()
        written = tmp_path / "arm.json"
        assert (
            main(
                [
                    "calibrate",
                    "--robot",
                    "so101",
                    "--import-lerobot",
                    str(written),
                    "--out",
                    str(tmp_path / "so101.calibration.yaml"),
                ]
            )
            == 0
        )
        calibration = Calibration.load(tmp_path / "so101.calibration.yaml")
        assert calibration.method == "lerobot"
        assert to_lerobot(calibration) == json.loads(written.read_text())  # nothing lost
        with ServoBusRobot(
            emulator.path, "so101", calibration=calibration, timeout_ms=500, retries=4
        ) as robot:
            robot.arm()
            for _ in range(150):
                robot.apply(jointlab.NJointAction.Position(SO101.home))
                robot.step()
            truth = np.array(emulator.report().position)
    np.testing.assert_allclose(truth, SO101.home, atol=0.1)  # gravity sag


def _valid() -> dict:
    return {
        s.joint: {
            "id": s.id,
            "drive_mode": 0,
            "homing_offset": -100 + 10 * s.id,
            "range_min": 700,
            "range_max": 3300,
        }
        for s in SO101.bus.servos
    }


def test_a_wrong_id_or_name_is_named_and_nothing_is_overwritten(tmp_path, capsys) -> None:
    ours = tmp_path / "so101.calibration.yaml"
    ours.write_text("untouched")
    bad = _valid()
    bad["elbow_flex"]["id"] = 9
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    argv = [
        "calibrate",
        "--robot",
        "so101",
        "--import-lerobot",
        str(tmp_path / "bad.json"),
        "--out",
        str(ours),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "motor 'elbow_flex': field 'id' is 9" in err and "servo id 3" in err
    assert ours.read_text() == "untouched"
    renamed = _valid()
    renamed["elbow"] = renamed.pop("elbow_flex")
    with pytest.raises(DescriptionError, match=r"missing \['elbow_flex'\], unknown \['elbow'\]"):
        from_lerobot(renamed, SO101)
    partial = _valid()
    del partial["gripper"]["range_max"]
    with pytest.raises(DescriptionError, match=r"motor 'gripper' needs exactly the fields"):
        from_lerobot(partial, SO101)
    with pytest.raises(DescriptionError, match="cannot read LeRobot calibration"):
        import_lerobot(tmp_path / "missing.json", SO101)


def test_exporting_a_calibration_without_homing_offsets_names_the_joint() -> None:
    manual = Calibration.from_dict(
        {
            "robot": "so101",
            "protocol": "feetech",
            "method": "manual",
            "joints": {
                s.joint: {
                    "id": s.id,
                    "offset": 2048.0,
                    "direction": 1,
                    "min_ticks": 700,
                    "max_ticks": 3300,
                }
                for s in SO101.bus.servos
            },
        }
    )
    with pytest.raises(DescriptionError, match="joint 'shoulder_pan' has no 'homing_offset'"):
        to_lerobot(manual)


entry = st.fixed_dictionaries(
    {
        "drive_mode": st.just(0),
        "homing_offset": st.integers(-2047, 2047),
        "range_min": st.integers(0, 2000),
        "span": st.integers(1, 2095),
    }
)


@given(st.lists(entry, min_size=6, max_size=6))
def test_lerobot_files_round_trip(entries) -> None:
    data = {}
    for servo, e in zip(SO101.bus.servos, entries, strict=True):
        data[servo.joint] = {
            "id": servo.id,
            "drive_mode": e["drive_mode"],
            "homing_offset": e["homing_offset"],
            "range_min": e["range_min"],
            "range_max": e["range_min"] + e["span"],
        }
    calibration = from_lerobot(data, SO101)
    assert to_lerobot(calibration) == data
    again = Calibration.from_dict(calibration.to_dict())  # through JointLab's file
    assert to_lerobot(again) == data


def test_jointlab_calibrate_exports_the_file_it_imported(tmp_path) -> None:
    ours = from_lerobot(_valid(), SO101).save(tmp_path / "so101.calibration.yaml")
    out = tmp_path / "lerobot" / "arm.json"
    assert (
        main(["calibrate", "--robot", "so101", "--export-lerobot", str(out), "--out", str(ours)])
        == 0
    )
    assert json.loads(out.read_text()) == _valid()
