"""The gap report and the acceptance run as an owner types them, on the emulated Koch and SO-101.

A short Koch episode (nominal servos) recorded through LeRobot's record loop goes through
``jointlab gap``; ``jointlab acceptance`` runs on ``emulated://so101`` and
``emulated://koch`` beside their twins; an arm with a servo in error stops the run before
anything moves, naming the servo.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import jointlab
from interop.servo_recording import record_through_lerobot
from jointlab.cli import main
from jointlab.identify.servo.acceptance import run_acceptance
from jointlab.identify.servo.excite import servo_excitation
from jointlab.identify.servo.twin import twin_description
from jointlab.robots import dump_yaml, load_robot

FPS = 30


@pytest.mark.slow
def test_the_gap_report_runs_on_a_koch_recording(tmp_path: Path, capsys) -> None:
    koch = load_robot("koch")
    robot_file = tmp_path / "koch.yaml"
    robot_file.write_text(dump_yaml(twin_description(koch, FPS)))  # whole bus cycles per frame
    goals = servo_excitation(koch, FPS, 3.0, amplitude=np.radians(6.0), seed=1)
    dataset = record_through_lerobot(
        f"emulated://{robot_file}?lockstep=1",
        list(koch.joint_names),
        np.degrees(goals),
        FPS,
        tmp_path / "dataset",
        tmp_path / "calibration",
    )
    out = tmp_path / "runs"
    assert main(["gap", "koch", str(dataset), "--out", str(out), "--name", "gap"]) == 0
    text = (out / "gap" / "gap.txt").read_text()
    assert "share of the gap closed" in text and "elbow_flex" in text
    estimates = (out / "gap" / "estimates.txt").read_text()
    assert "runs in current mode" in estimates  # the XL330s: the host's law, not the servo
    assert len(list((out / "gap").glob("gap-*.png"))) == koch.dof
    capsys.readouterr()


@pytest.mark.slow
@pytest.mark.parametrize("robot", ["so101", "koch"])
def test_the_acceptance_run_beside_its_twin(robot: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "runs"
    argv = [
        "acceptance",
        f"emulated://{robot}?lockstep=1",
        "--robot",
        robot,
        "--joints",
        "wrist_flex",
        "--settle",
        "0.2",
        "--speed",
        "2",
        "--out",
        str(out),
        "--name",
        "a",
    ]
    twin = robot == "so101"  # the side-by-side once; the Koch's own run alone
    assert main(argv + ([] if twin else ["--no-twin"])) == 0
    arm = (out / "a" / "acceptance.txt").read_text()
    assert "result: passed" in arm and "sync read: median" in arm
    assert arm.count("errors: none") == 6 and arm.count("droop at pose") == 3
    assert "nan" not in arm.split("droop at pose 1")[1].split("step")[0]
    assert "step wrist_flex: rise" in arm
    assert (out / "a" / "side_by_side.json").is_file() == twin
    printed = capsys.readouterr().out
    assert ("beside its twin" in printed) == twin


def test_a_servo_in_error_stops_the_run_before_anything_moves() -> None:
    with jointlab.connect("emulated://so101?lockstep=1") as arm:
        arm.emulator.inject(3, 0x20)  # overload on the elbow's servo
        before = arm.read().position.copy()
        report = run_acceptance(arm, joints=["elbow_flex"], settle=0.1)
        assert not report.passed
        assert "servo 3 (elbow_flex)" in report.fault
        assert not arm.read().armed
        assert np.allclose(arm.read().position, before, atol=0.01)


def test_a_fault_mid_run_ends_it_held_and_disarmed_with_the_servos_words() -> None:
    """The supply browns out 2 s into the run (a Feetech sets its voltage bit): the report
    names it, and the run ends as every loop does on a fault (jointlab.faults)."""
    with jointlab.connect("emulated://so101?lockstep=1&brownout=2:30:3") as arm:
        report = run_acceptance(arm, joints=["elbow_flex"], settle=0.1)
        assert not report.passed
        assert "voltage" in report.fault, report.fault
        assert not arm.read().armed
