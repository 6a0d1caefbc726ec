"""A servo's protection reaches LeRobot's unmodified followers as a real servo's would.

LeRobot's ``SO101Follower`` and ``KochFollower`` connect to an emulated bus (real time, as
LeRobot runs), configure it (torque on), and drive the servos; the emulated servos' own
rules then stop them. Each of the three rules on each arm:

* **overload**: the gripper squeezing a fixed cube (Feetech: Overload Torque, which LeRobot
  sets to 25 %, held for Protection Time 2 s: Status bit 5, the torque released; Dynamixel:
  the XL330's output held at its PWM limit for 1 s in LeRobot's current-based position mode);
* **over-temperature**: the same squeeze by servos whose air is 70.9 °C (``ambient``): a
  servo at its limit, which the squeeze's heat pushes over before the overload timer ends;
* **input voltage**: the supply browning out to 3 V once LeRobot has configured the bus
  (set then: a window timed from the bus's start raced LeRobot's set-up on a loaded host).

LeRobot learns of each the way it does from real servos: the error byte of the next status
packet, which its bus turns into ``RuntimeError`` with the vendor SDK's own text (Feetech's
SDK names the bit; Dynamixel's Protocol 2.0 sets the Alert bit, "Hardware error occurred").
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


#: The rule, its hardware-error bit and the text LeRobot's bus raises, per arm.
SDK_TEXT = {
    "so101": {
        0x20: r"\[RxPacketError\] Overload error!",
        0x04: r"\[RxPacketError\] Overheat error!",
        0x01: r"\[RxPacketError\] Input voltage error!",
    },
    "koch": dict.fromkeys((0x20, 0x04, 0x01), r"\[RxPacketError\] Hardware error occurred"),
}
RULES = {"overload": 0x20, "over-temperature": 0x04, "brown-out": 0x01}
#: Air just under the servos' 70 °C limit + 1: they read 70 °C at rest, and fault on heating.
HOT_AIR = 70.9


def _follower(name: str, port: str, calibration_dir):
    if name == "so101":
        from lerobot.robots.so_follower import SO101Follower, SO101FollowerConfig

        config = SO101FollowerConfig(port=port, id="faults", calibration_dir=calibration_dir)
        return SO101Follower(config)
    from lerobot.robots.koch_follower import KochFollower, KochFollowerConfig

    config = KochFollowerConfig(port=port, id="faults", calibration_dir=calibration_dir)
    return KochFollower(config)


def _first_error(emulator: BusEmulatorProcess, servo: int, seconds: float) -> tuple[int, float]:
    """Servo ``servo``'s (index) first non-zero error bits and the servo time they came, s."""
    start = emulator.report().ticks
    while True:
        report = emulator.report()
        elapsed = (report.ticks - start) / 1000.0
        if report.errors[servo]:
            return report.errors[servo], elapsed
        if elapsed > seconds:
            raise AssertionError(f"no error after {elapsed:.1f} s of servo time: {report}")
        time.sleep(0.01)


@pytest.mark.parametrize("name", ["so101", "koch"])
@pytest.mark.parametrize("rule", list(RULES))
def test_the_follower_sees_the_error_a_real_servo_reports(name, rule, tmp_path) -> None:
    bit = RULES[rule]
    options: dict = {"fifo": True}
    if rule == "brown-out":
        robot_file, pose, closed = name, None, None
    else:
        robot_file, pose, closed = _with_cube(name)
        if rule == "over-temperature":
            options["ambient"] = HOT_AIR
    with BusEmulatorProcess(robot_file, **options) as emulator:
        if pose is not None:
            emulator.move(pose)  # the jaw on the cube
        robot = _follower(name, emulator.path, tmp_path)
        robot.connect(calibrate=False)  # configures every servo, torque on
        bus = robot.bus
        try:
            if closed is not None:
                bus.write("Goal_Position", "gripper", closed, normalize=False)
            else:  # the supply sags once LeRobot's set-up is over, however long it took
                emulator.set_faults(BusFaults(brownout=(0.0, 600.0, 3.0)))
            limit = 4.0 if rule != "brown-out" else 6.0
            errors, after = _first_error(emulator, 5, limit)
            print(f"{name} {rule}: error bits 0x{errors:02x} after {after:.2f} s")
            assert errors == bit, f"0x{errors:02x}: another rule tripped first"
            with pytest.raises(RuntimeError, match=SDK_TEXT[name][bit]):
                bus.read("Present_Position", "gripper", normalize=False)
            if rule != "brown-out":
                bus.read("Present_Position", "shoulder_pan", normalize=False)  # the others answer
        finally:
            try:
                robot.disconnect()  # LeRobot's torque-off write meets the same error byte
            except RuntimeError as exc:
                assert "RxPacketError" in str(exc)
                bus.port_handler.closePort()
