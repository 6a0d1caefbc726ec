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

from dataclasses import dataclass

from jointlab.errors import ConfigurationError, LinkError
from jointlab.hardware.servo_host.driver import ServoDriver, UnsupportedBaud, make_driver
from jointlab.hardware.vendors import VENDORS, vendor
from jointlab.robots import RobotDescription

__all__ = ["FACTORY_BAUD", "SetupResult", "broadcast_ping", "candidate_bauds", "setup_servo"]

#: Baud a new servo ships with, per protocol, bit/s (each vendor record's ``factory_baud``).
FACTORY_BAUD = {name: v.factory_baud for name, v in VENDORS.items()}


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
    order += sorted(vendor(protocol).baud_rates.values(), reverse=True)
    return list(dict.fromkeys(order))


def broadcast_ping(driver: ServoDriver, window: float = 0.25) -> dict[int, int]:
    """Servo id -> model number of every servo that answers a broadcast ping on ``driver``.

    Raises:
        ConfigurationError: two servos answered with one id (their packets collide).
    """
    found = driver.vendor.sdk.broadcast_ping(driver.sdk, driver.packets, driver.port, window)
    register = next(iter(driver.vendor.models.values())).table["model_number"]
    return {
        servo_id: driver.read(servo_id, register) if number is None else number
        for servo_id, number in sorted(found.items())
    }


def _open(protocol: str, port: str, baud: int, timeout_ms: float) -> ServoDriver:
    driver = make_driver(protocol, port, baud, {}, retries=1, extra_timeout_ms=timeout_ms)
    driver.open()
    return driver


def setup_servo(
    port: str, description: RobotDescription, joint: str, timeout_ms: float = 0.0
) -> SetupResult:
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
    model = vendor(protocol).model(spec.model)
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
            driver.write(spec.id, table["baud_rate"], vendor(protocol).baud_code(bus.baud))
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
