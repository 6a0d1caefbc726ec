"""Set up a new arm's servos one at a time: find each at any id and baud, give it its own.

A new servo ships with id 1 at its factory baud (Feetech STS: 1 Mbit/s; Dynamixel X:
57 600 bit/s), so an arm's servos cannot share a bus until each has the id of the robot
file's ``bus.servos`` and the bus's ``bus.baud``. :func:`setup_servo` does that for one servo
connected alone: a broadcast ping at each candidate baud (the bus's, the factory's, then the
others the model has) finds it, its model is checked, torque is turned off, the ID and then
the Baud Rate registers are written (EEPROM; Feetech's Lock is opened for it and closed
after), and a ping at the new id and baud verifies it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from jointlab.errors import ConfigurationError, LinkError
from jointlab.hardware.servo_host.driver import ServoDriver, UnsupportedBaud, make_driver
from jointlab.hardware.vendors import baud_code, baud_rates, servo_model
from jointlab.robots import RobotDescription

__all__ = ["FACTORY_BAUD", "SetupResult", "broadcast_ping", "candidate_bauds", "setup_servo"]

#: Baud a new servo ships with, per protocol, bit/s.
FACTORY_BAUD = {"feetech": 1_000_000, "dynamixel": 57_600}
#: Feetech SCS/STS broadcast ping: header, id 0xFE, length 2, PING, checksum.
_FEETECH_PING = bytes([0xFF, 0xFF, 0xFE, 0x02, 0x01, (~(0xFE + 0x02 + 0x01)) & 0xFF])


@dataclass(frozen=True)
class SetupResult:
    """What :func:`setup_servo` found and wrote.

    Attributes:
        joint: The joint the servo drives.
        model: Its model name.
        found_id: The id it answered to.
        found_baud: The baud it answered at, bit/s.
        id: Its id now (the robot file's).
        baud: Its baud now (the bus's), bit/s.
    """

    joint: str
    model: str
    found_id: int
    found_baud: int
    id: int
    baud: int

    @property
    def changed(self) -> bool:
        """True when an id or a baud was written."""
        return (self.found_id, self.found_baud) != (self.id, self.baud)


def candidate_bauds(protocol: str, bus_baud: int) -> list[int]:
    """Bauds to try, in order: the bus's, the factory's, then the model's others (fastest first)."""
    order = [bus_baud, FACTORY_BAUD[protocol]]
    order += sorted(baud_rates(protocol).values(), reverse=True)
    return list(dict.fromkeys(order))


def _feetech_ping(driver: ServoDriver, window: float) -> dict[int, int]:
    port = driver.port
    port.writePort(list(_FEETECH_PING))
    data = bytearray()
    deadline = time.monotonic() + window
    quiet_until = None
    while time.monotonic() < deadline:
        chunk = bytes(port.readPort(256))
        if chunk:
            data += chunk
            quiet_until = time.monotonic() + 0.02
        elif quiet_until is not None and time.monotonic() > quiet_until:
            break
    found: dict[int, int] = {}
    counts: dict[int, int] = {}
    at = data.find(b"\xff\xff")
    while at >= 0 and at + 6 <= len(data):
        servo_id, length = data[at + 2], data[at + 3]
        packet = data[at + 2 : at + 4 + length]
        if len(packet) == 2 + length and (~sum(packet[:-1])) & 0xFF == packet[-1]:
            counts[servo_id] = counts.get(servo_id, 0) + 1
            found[servo_id] = packet[2]  # the error byte
        at = data.find(b"\xff\xff", at + 2)
    duplicated = [i for i, n in counts.items() if n > 1]
    if duplicated:
        raise ConfigurationError(
            f"two servos answered as id {duplicated[0]} on {driver.port_name!r}: connect one "
            "servo at a time to set ids"
        )
    return found


def broadcast_ping(driver: ServoDriver, window: float = 0.25) -> dict[int, int]:
    """Servo id -> model number of every servo that answers a broadcast ping on ``driver``.

    Raises:
        ConfigurationError: two servos answered with one id (their packets collide).
    """
    if driver.vendor == "dynamixel":
        data, result = driver.packets.broadcastPing(driver.port)
        if result not in (driver.sdk.COMM_SUCCESS, driver.sdk.COMM_RX_TIMEOUT):
            if result == driver.sdk.COMM_RX_CORRUPT:
                raise ConfigurationError(
                    f"the status packets on {driver.port_name!r} collide (two servos at one id?): "
                    "connect one servo at a time to set ids"
                )
        return {int(i): int(v[0]) for i, v in (data or {}).items()}
    ids = _feetech_ping(driver, window)
    register = servo_model("feetech", "sts3215").table["model_number"]
    return {servo_id: driver.read(servo_id, register) for servo_id in sorted(ids)}


def _open(protocol: str, port: str, baud: int, timeout_ms: float) -> ServoDriver:
    driver = make_driver(protocol, port, baud, {}, retries=1, extra_timeout_ms=timeout_ms)
    driver.open()
    return driver


def setup_servo(port: str, description: RobotDescription, joint: str,
                timeout_ms: float = 0.0) -> SetupResult:  # fmt: skip
    """Find the one servo on ``port`` and give it ``joint``'s id and the bus's baud.

    Args:
        port: The bus's port (device path or pty).
        description: The robot (its ``bus`` section says the id, model and baud).
        joint: The joint whose servo is connected alone.
        timeout_ms: Added to the SDK's status timeout (an emulated bus on a busy machine).

    Raises:
        LinkError: no servo answers at any baud, or the servo does not answer after set-up.
        ConfigurationError: several servos answer, or the servo is another model.
    """
    bus = description.bus
    if bus is None:
        raise ConfigurationError(f"robot {description.name!r} has no bus section to set up")
    servos = {s.joint: s for s in bus.servos}
    if joint not in servos:
        raise ConfigurationError(
            f"robot {description.name!r} has no servo for joint {joint!r}; it has {list(servos)}"
        )
    spec = servos[joint]
    protocol = bus.protocol.value
    model = servo_model(protocol, spec.model)
    table = model.table
    bauds = candidate_bauds(protocol, bus.baud)
    found: dict[int, int] = {}
    tried = []
    for baud in bauds:
        try:
            driver = _open(protocol, port, baud, timeout_ms)
        except UnsupportedBaud:  # a rate the servos have but the vendor's SDK cannot set
            continue
        tried.append(baud)
        try:
            found = broadcast_ping(driver)
        finally:
            driver.close()
        if found:
            break
    else:
        raise LinkError(
            f"no servo answered on {port!r} at any baud ({', '.join(map(str, tried))} bit/s): "
            f"connect the {joint} servo alone and power it (the USB adapter alone powers none)"
        )
    if len(found) > 1:
        raise ConfigurationError(
            f"servos {sorted(found)} answered at {baud} bit/s on {port!r}: connect only the "
            f"{joint} servo (one servo at a time), then run it again"
        )
    ((found_id, number),) = found.items()
    if number != model.model_number:
        raise ConfigurationError(
            f"the servo on {port!r} (id {found_id}) is model number {number}; joint {joint!r} "
            f"needs a {model.name} ({model.model_number}): connect the right servo, or fix "
            f"bus.servos.{joint}.model in the robot file"
        )
    result = SetupResult(joint, model.name, found_id, baud, spec.id, bus.baud)
    if not result.changed:
        return result
    driver = _open(protocol, port, baud, timeout_ms)
    try:
        driver.write(found_id, table["torque_enable"], 0)
        if "lock" in table:
            driver.write(found_id, table["lock"], 0)
        if found_id != spec.id:
            driver.write(found_id, table["id"], spec.id)
        if baud != bus.baud:
            driver.write(spec.id, table["baud_rate"], baud_code(protocol, bus.baud))
    finally:
        driver.close()
    driver = _open(protocol, port, bus.baud, timeout_ms)
    try:
        answered = driver.ping(spec.id)
        if answered is not None and "lock" in table:
            driver.write(spec.id, table["lock"], 1)
    finally:
        driver.close()
    if answered != model.model_number:
        raise LinkError(
            f"after writing id {spec.id} and {bus.baud} bit/s, the {joint} servo does not "
            f"answer at id {spec.id}, {bus.baud} bit/s on {port!r}: power it off and on and "
            "run it again"
        )
    return result
