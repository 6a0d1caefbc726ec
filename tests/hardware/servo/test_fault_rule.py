"""What the host does when a servo faults: one rule, from ServoBusRobot to ``jointlab run``.

A servo's protection cutting its torque, a servo going silent, or the host's stall guard:
the robot holds the other joints for one bus cycle, turns every torque off, disarms and
raises a ``DeviceFault`` naming the servo, the joint, the bit and the fix; ``run()`` logs it
as a ``fault`` event; ``jointlab run`` exits non-zero with the message and keeps the log.
Recovery is the one arming path. Lockstep buses, so every figure is exact.
"""

from __future__ import annotations

import numpy as np
import pytest
from servo_helpers import wait_servo_time, with_cube

import jointlab
from jointlab.controllers import run
from jointlab.errors import CommandRefused, DeviceFault, DeviceLost, LinkError
from jointlab.hardware.servo_emulator.emulator_process import BusEmulatorProcess
from jointlab.hardware.servo_host.robot import ServoBusRobot
from jointlab.hardware.servo_host.stall import StallLimits
from jointlab.hardware.servo_host.urls import emulated_calibration
from jointlab.interface import NJointAction
from jointlab.recording import Recorder, load_log
from jointlab.robots import load_robot

FAST = {"timeout_ms": 500, "retries": 4}


class Squeeze:
    """A controller that closes the gripper beyond the cube and holds the other joints."""

    def __init__(self, target: np.ndarray) -> None:
        self.target = target

    def reset(self, state) -> None:
        pass

    def compute(self, state) -> NJointAction:
        return NJointAction.Position(self.target)


def _robot_on_cube(bus, **options) -> ServoBusRobot:
    description = load_robot("so101")
    offsets = np.array(description.transmissions.offset)
    return ServoBusRobot(
        bus.path,
        description,
        advance=bus.advance,
        calibration=emulated_calibration(description, offsets),
        **FAST,
        **options,
    )


def _squeeze_target(robot: ServoBusRobot, closed: float) -> np.ndarray:
    target = robot.read().position.copy()
    target[5] = closed
    return target


def test_a_servo_overload_stops_the_robot_and_names_servo_joint_bit_and_fix(tmp_path) -> None:
    cube, _, _, closed = with_cube("so101")
    with (
        BusEmulatorProcess(cube, lockstep=True) as bus,
        _robot_on_cube(bus, stall_protection=False) as robot,
    ):
        robot.write_register("gripper", "protection_time", 30)  # 0.3 s: a short test
        robot.arm()
        target = _squeeze_target(robot, closed)
        with Recorder(tmp_path / "log.npz") as recorder, pytest.raises(DeviceFault) as info:
            run(robot, Squeeze(target), duration=2.0, recorder=recorder)
        error = info.value
        message = str(error)
        for words in (
            "servo id 6 (gripper, sts3215)",
            "overload error",
            "Fix: lower the load",
            "arm again",
        ):
            assert words in message, message
        assert (error.joint, error.reasons, error.bits) == ("gripper", ("overload error",), 0x20)
        assert robot.fault is error and not robot.armed and not robot.read().armed
        for joint in robot.description.joint_names:  # every torque off
            assert robot.read_register(joint, "torque_enable") == 0
        held = robot.read().position
        # the other joints were held where they were (no jump at the fault), then went limp
        np.testing.assert_allclose(held[:5], target[:5], atol=0.05)
        events = [e for e in load_log(tmp_path / "log.npz").events if e.kind == "fault"]
        assert len(events) == 1 and events[0].fields["joint"] == "gripper"
        assert events[0].fields["reasons"] == ["overload error"]
        # Recovery through the one arming path: Torque Enable clears a Feetech's Status
        robot.arm()
        robot.step()
        state = robot.read()
        assert state.armed and not state.extras["hardware_error"].any()
        np.testing.assert_allclose(state.position[:5], held[:5], atol=0.02)  # holds the pose


def test_a_dynamixel_error_needs_a_reboot_before_arming_again() -> None:
    from jointlab.view.feed import ViewFeed

    with jointlab.connect("emulated://koch?lockstep=1") as robot:
        feed = ViewFeed(robot.dof)
        robot.listen(feed)  # the live view's feed: the fault goes on its timeline
        robot.arm()
        robot.step()
        robot.emulator.inject(4, 0x04)  # the wrist servo overheated
        with pytest.raises(
            DeviceFault,
            match=r"servo id 4 \(wrist_flex.*overheating error.*"
            r"cool down.*reboot it",
        ) as info:
            for _ in range(5):
                robot.step()
        assert info.value.bits == 0x04 and not robot.armed
        marks = [e for e in feed.window().events if e.kind == "fault"]
        assert [m.text for m in marks] == ["fault: wrist_flex: overheating error"]
        with pytest.raises(CommandRefused, match="overheating error") as refused:
            robot.arm()
        assert refused.value.reason == "device_fault"
        robot.reboot("wrist_flex")
        robot.arm()
        robot.step()
        assert robot.read().armed


def test_a_silent_servo_is_a_lost_servo_after_its_cycles() -> None:
    with jointlab.connect("emulated://koch?lockstep=1") as robot:
        robot.arm()
        robot.step()
        robot.emulator.set_faults(drop_status={3: 1.0})
        with pytest.raises(
            DeviceLost,
            match=r"servo id 3 \(elbow_flex\) stopped answering for "
            r"3 bus cycle",
        ) as info:
            for _ in range(10):
                robot.step()
        assert isinstance(info.value, LinkError) and info.value.joint == "elbow_flex"
        assert not robot.armed
        robot.emulator.set_faults(drop_status={})
        assert robot.read_register("shoulder_pan", "torque_enable") == 0


def test_stall_protection_stops_a_squeezing_gripper_before_the_servo_overloads() -> None:
    """On by default for grippers: 60 % of the stall current, 2 degrees off, for 1 s."""
    cube, _, _, closed = with_cube("so101")
    with BusEmulatorProcess(cube, lockstep=True) as bus, _robot_on_cube(bus) as robot:
        robot.arm()
        target = _squeeze_target(robot, closed)
        robot.apply(NJointAction.Position(target))
        start = robot.time
        with pytest.raises(DeviceFault, match="stall protection: servo id 6 \\(gripper\\)") as info:
            for _ in range(400):
                robot.step()
        tripped = robot.time - start
        print(f"stall guard: tripped {tripped:.3f} s after the squeeze began (limit 1 s)")
        assert info.value.reasons == ("stall",)
        assert 1.0 <= tripped <= 1.0 + 0.1  # 1 s of stall, plus the travel to the cube
        assert robot.read_register("gripper", "hardware_error_status") == 0  # before the servo


def test_stall_protection_settings_are_checked() -> None:
    from jointlab.errors import ConfigurationError
    from jointlab.hardware.servo_host.stall import stall_limits

    joints = ["a", "gripper"]
    assert list(stall_limits(joints, None)) == [1]
    assert list(stall_limits(joints, True)) == [0, 1]
    assert stall_limits(joints, False) == {}
    with pytest.raises(ConfigurationError, match=r"joints \['wrist'\]"):
        stall_limits(joints, {"wrist": StallLimits()})
    with pytest.raises(ConfigurationError, match="current must be in"):
        StallLimits(current=1.5)


def test_jointlab_run_on_a_faulting_bus_exits_nonzero_and_keeps_the_log(tmp_path, capsys) -> None:
    """A brown-out during a program: the voltage bit stops the arm; the log has the fault."""
    from jointlab.cli import main

    program = tmp_path / "wave.yaml"
    program.write_text(
        "- set_positions: {positions: [0.3, 0.3, 1.1, 0.4, 0.3, 0.5]}\n- wait: 2.0\n"
    )
    url = "emulated://so101?lockstep=1&brownout=0.4:5:3.0"
    code = main(["run", url, str(program), "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 2
    assert "input voltage error" in err and "check the power supply" in err
    failed = next((tmp_path / "runs").glob("*.failed"))
    events = [e for e in load_log(failed / "log.npz").events if e.kind == "fault"]
    assert events and events[0].fields["reasons"] == ["input voltage error"]
    assert 0.4 <= events[0].time <= 0.6


def test_jointlab_check_shows_temperature_voltage_load_and_error_bits() -> None:
    """The survey behind ``jointlab check`` on a bus in a brown-out (real time): each row."""
    from jointlab.hardware.servo_host.survey import survey

    with jointlab.connect("emulated://so101?brownout=0:600:3.0") as robot:
        wait_servo_time(robot.emulator, 0.2)  # a few of the rules' 10 ms samples
        found = survey(robot, pings=2)
    for row in found.rows:
        assert row.voltage == pytest.approx(3.0) and row.temperature == 25.0
        assert row.errors == ("input voltage error",) and row.load_unit == "%"
