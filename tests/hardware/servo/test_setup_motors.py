"""``jointlab setup-motors``: six factory-fresh servos, each connected alone, get their ids.

Each servo is an emulated bus holding that one servo as it ships (id 1, the factory baud:
1 Mbit/s for the SO-101's STS3215, 57 600 bit/s for the Koch's Dynamixels); the command finds
it by broadcast ping, writes its id and the bus baud, and verifies it by a ping; the test
pings it again through the vendor's SDK at the new id and baud. Bad input: two servos
connected at once, a servo of another model, nothing connected.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from jointlab import load_robot
from jointlab.cli import main
from jointlab.errors import ConfigurationError, LinkError
from jointlab.hardware.servo_emulator.emulator_process import BusEmulatorProcess
from jointlab.hardware.servo_host.driver import make_driver
from jointlab.hardware.servo_host.setup import FACTORY_BAUD, setup_servo
from jointlab.hardware.vendors import vendor

LIBRARY = Path(__import__("jointlab.robots").robots.__file__).parent / "library"


def loose_servos(
    tmp_path: Path, robot: str, joints: list[str], ids: list[int], model: str | None = None
) -> Path:
    """A robot file holding only ``joints``' servos, as shipped: ``ids``, position mode."""
    data = yaml.safe_load((LIBRARY / f"{robot}.yaml").read_text())
    data["actuators"] = [dict(a) for a in data["actuators"] if a["name"] in joints]
    for actuator in data["actuators"]:
        actuator.pop("parent", None)
    servos = data["bus"]["servos"]
    data["bus"]["servos"] = {
        joint: {"id": i, "model": model or servos[joint]["model"], "mode": "position"}
        for joint, i in zip(joints, ids, strict=True)
    }
    data["name"] = f"loose-{robot}"
    path = tmp_path / f"loose-{robot}-{'-'.join(joints)}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def ping(protocol: str, port: str, baud: int, servo_id: int) -> int | None:
    driver = make_driver(protocol, port, baud, {}, retries=1, extra_timeout_ms=200)
    driver.open()
    try:
        return driver.ping(servo_id)
    finally:
        driver.close()


@pytest.mark.slow
@pytest.mark.parametrize("robot", ["so101", "koch"])
def test_six_factory_fresh_servos_get_their_ids_and_the_bus_baud(tmp_path, robot, capsys):
    description = load_robot(robot)
    protocol = description.bus.protocol.value
    for servo in description.bus.servos:
        fresh = loose_servos(tmp_path, robot, [servo.joint], [1])
        with BusEmulatorProcess(fresh, baud=FACTORY_BAUD[protocol]) as bus:
            url = f"{protocol}://{bus.path}?timeout_ms=200"
            argv = ["setup-motors", url, "--robot", robot, "--joints", servo.joint, "--yes"]
            assert main(argv) == 0
            number = vendor(protocol).model(servo.model).model_number
            assert ping(protocol, bus.path, description.bus.baud, servo.id) == number
            if servo.id != 1:
                assert ping(protocol, bus.path, description.bus.baud, 1) is None
            if description.bus.baud != FACTORY_BAUD[protocol]:
                assert ping(protocol, bus.path, FACTORY_BAUD[protocol], servo.id) is None
    out = capsys.readouterr().out
    assert f"found at id 1, {FACTORY_BAUD[protocol]} bit/s; now id 6, 1000000 bit/s" in out


def test_a_servo_at_an_unexpected_baud_is_found_and_set(tmp_path) -> None:
    fresh = loose_servos(tmp_path, "so101", ["elbow_flex"], [7])
    with BusEmulatorProcess(fresh, baud=115_200) as bus:
        result = setup_servo(bus.path, load_robot("so101"), "elbow_flex", timeout_ms=200)
        assert (result.found_id, result.found_baud, result.id, result.baud) == (
            7,
            115_200,
            3,
            1_000_000,
        )
        assert ping("feetech", bus.path, 1_000_000, 3) == 777


def test_two_servos_connected_at_once_are_refused(tmp_path) -> None:
    two = loose_servos(tmp_path, "so101", ["shoulder_pan", "shoulder_lift"], [1, 2])
    with BusEmulatorProcess(two) as bus:
        with pytest.raises(
            ConfigurationError,
            match=r"servos \[1, 2\] answered .* connect only "
            "the gripper servo",
        ):
            setup_servo(bus.path, load_robot("so101"), "gripper", timeout_ms=200)
        assert ping("feetech", bus.path, 1_000_000, 2) is not None  # nothing was written


def test_a_servo_of_another_model_is_refused(tmp_path) -> None:
    wrong = loose_servos(tmp_path, "koch", ["shoulder_pan"], [1], model="xl330-m288")
    with BusEmulatorProcess(wrong, baud=57_600) as bus:
        with pytest.raises(
            ConfigurationError,
            match=r"model number 1200; joint 'shoulder_pan' "
            r"needs a xl430-w250",
        ):
            setup_servo(bus.path, load_robot("koch"), "shoulder_pan", timeout_ms=50)


def test_nothing_connected_names_the_bauds_tried(tmp_path) -> None:
    quiet = loose_servos(tmp_path, "so101", ["gripper"], [1])
    with BusEmulatorProcess(quiet, baud=1_000_000) as bus:
        bus.set_faults(drop_status={1: 1.0})  # a servo that never answers: as if unpowered
        with pytest.raises(LinkError, match=r"no servo answered .* at any baud \(1000000, "):
            setup_servo(bus.path, load_robot("so101"), "gripper", timeout_ms=10)
