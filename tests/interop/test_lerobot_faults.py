"""A servo's protection reaches LeRobot's unmodified followers as a real servo's would.

LeRobot's ``SO101Follower`` and ``KochFollower`` connect to an emulated bus (real time, as
LeRobot runs), configure it (torque on), and drive the servos; the emulated servos' own
rules then stop them: the SO-101's gripper squeezing a fixed cube overloads (Feetech: Status
bit 5 after Protection Time, torque released), the Koch's supply browns out (Dynamixel: the
Input Voltage Error cuts the XL330s, whose Shutdown has that bit). LeRobot learns of it the
way it does from real servos: the error byte of the next status packet, which its bus turns
into ``RuntimeError`` with the vendor SDK's own text.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from jointlab import load_robot
from jointlab.hardware.servo_emulator.emulator_process import BusEmulatorProcess
from jointlab.hardware.servo_emulator.faults import BusFaults
from jointlab.robots import with_limits

pytestmark = pytest.mark.slow
pytest.importorskip("lerobot")


def _wait_servo_time(emulator: BusEmulatorProcess, seconds: float) -> None:
    """Wait until the emulated servos have run ``seconds`` of firmware ticks (1 kHz)."""
    start = emulator.report().ticks
    while emulator.report().ticks - start < seconds * 1000:
        time.sleep(0.02)


def _with_cube(name: str):
    """``name`` with a cube between the gripper's jaws, the pose on it, the closed ticks.

    As ``tests/hardware/servo/servo_helpers.with_cube``: the gripper's wider side is cut at
    its middle, where the jaw meets the cube; the host commands the original end.
    """
    description = load_robot(name)
    g = description.joint_names.index("gripper")
    centre = description.actuators[g].centre
    lower, upper = description.lower.copy(), description.upper.copy()
    if centre - lower[g] > upper[g] - centre:
        closed, lower[g] = lower[g], centre - 0.5 * (centre - lower[g])
        cube, stop = with_limits(description, min_position=lower), lower[g]
    else:
        closed, upper[g] = upper[g], centre + 0.5 * (upper[g] - centre)
        cube, stop = with_limits(description, max_position=upper), upper[g]
    pose, q = np.zeros(description.dof), np.zeros(description.dof)
    pose[g], q[g] = stop, closed
    return cube, pose, round(float(description.transmissions.to_motor(q)[g]))


def test_so101_follower_sees_the_overload_a_real_sts3215_reports(tmp_path) -> None:
    from lerobot.robots.so_follower import SO101Follower, SO101FollowerConfig

    cube, pose, closed = _with_cube("so101")
    with BusEmulatorProcess(cube, fifo=True) as emulator:
        emulator.move(pose)  # the jaw on the cube
        config = SO101FollowerConfig(port=emulator.path, id="faults", calibration_dir=tmp_path)
        robot = SO101Follower(config)
        robot.connect(calibrate=False)  # configures every servo, torque on
        bus = robot.bus
        try:
            bus.write("Goal_Position", "gripper", closed, normalize=False)
            _wait_servo_time(emulator, 2.3)  # Protection Time: 2 s above 80 %
            assert emulator.report().errors[5] & 0x20
            with pytest.raises(RuntimeError, match=r"\[RxPacketError\] Overload error!"):
                bus.read("Present_Position", "gripper", normalize=False)
            bus.read("Present_Position", "shoulder_pan", normalize=False)  # the others answer
        finally:
            try:
                robot.disconnect()  # LeRobot's torque-off write meets the same error byte
            except RuntimeError as exc:
                assert "Overload error" in str(exc)
                bus.port_handler.closePort()


def test_koch_follower_sees_the_brownout_a_real_xl330_reports(tmp_path) -> None:
    from lerobot.robots.koch_follower import KochFollower, KochFollowerConfig

    faults = BusFaults(brownout=(3.0, 600.0, 3.0))  # after LeRobot has configured the bus
    with BusEmulatorProcess("koch", faults=faults, fifo=True) as emulator:
        config = KochFollowerConfig(port=emulator.path, id="faults", calibration_dir=tmp_path)
        robot = KochFollower(config)
        robot.connect(calibrate=False)
        bus = robot.bus
        try:
            _wait_servo_time(emulator, max(0.0, 3.2 - emulator.report().ticks / 1000))
            errors = emulator.report().errors
            assert all(e & 0x01 for e in errors)
            with pytest.raises(RuntimeError, match=r"\[RxPacketError\] Hardware error occurred"):
                bus.read("Present_Position", "gripper", normalize=False)
        finally:
            try:
                robot.disconnect()
            except RuntimeError as exc:
                assert "Hardware error occurred" in str(exc)
                bus.port_handler.closePort()
