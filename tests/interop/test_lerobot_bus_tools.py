"""LeRobot's own bus tools on the emulated buses: scans by broadcast ping, and motor set-up.

``FeetechMotorsBus.broadcast_ping`` must find every servo of an emulated SO-101 with its model
number; ``setup_motor`` must find a factory-fresh STS3215 (id 1, one servo on the bus), give
it the id LeRobot's SO-101 numbering wants, and find it there afterwards, as
``lerobot-setup-motors`` does one servo at a time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jointlab.hardware.servo_emulator.emulator_process import BusEmulatorProcess

pytestmark = pytest.mark.slow

ONE_SERVO = Path(__file__).parent / "robots" / "one_sts3215.yaml"


def _so101_bus(port: str):
    from lerobot.motors import Motor, MotorNormMode
    from lerobot.motors.feetech import FeetechMotorsBus

    names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
    motors = {
        name: Motor(i + 1, "sts3215", MotorNormMode.RANGE_M100_100) for i, name in enumerate(names)
    }
    return FeetechMotorsBus(port=port, motors=motors)


def test_broadcast_ping_finds_every_servo_of_an_so101() -> None:
    with BusEmulatorProcess("so101", fifo=True) as emulator:
        bus = _so101_bus(emulator.path)
        bus.connect(handshake=True)  # pings each motor and checks its model number
        try:
            found = bus.broadcast_ping()
            assert found == {i: 777 for i in range(1, 7)}
        finally:
            bus.disconnect(disable_torque=False)


def test_setup_motor_gives_a_factory_fresh_servo_its_id() -> None:
    with BusEmulatorProcess(ONE_SERVO, fifo=True) as emulator:
        bus = _so101_bus(emulator.path)
        try:
            bus.setup_motor("wrist_flex")  # found at id 1, becomes id 4
            assert bus.ping(4) == 777
            assert bus.ping(1) is None
            assert bus.read("ID", "wrist_flex", normalize=False) == 4
        finally:
            bus.disconnect(disable_torque=False)
