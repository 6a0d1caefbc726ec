"""The ``emulated://`` query keys of a servo bus's link and power faults and its supply.

``emulated://so101?lockstep=1&brownout=0.5:1:3.0`` gives the emulator
:class:`~jointlab.hardware.servo_emulator.faults.BusFaults` and a
:class:`~jointlab.hardware.servo_emulator.protection.Supply` (every time in seconds of the
servos' own clock, from when the bus starts):

=================  ===============================================================
``drop_status``    probability a status packet is not sent: ``0.1`` (every servo)
                   or ``ID:P,ID:P``
``corrupt_status`` probability a status packet's CRC/checksum is wrong (same forms)
``delay_ms``       milliseconds every status packet leaves late (0-1000)
``unplug``         ``AT:SECONDS``: the cable out
``power_cut``      ``AT:SECONDS``: the supply off; the servos reboot after it
``brownout``       ``AT:SECONDS:VOLTS``: the supply sags to ``VOLTS``
``supply``         the supply's voltage, V (within every servo's rated input range)
``supply_ohm``     its internal resistance plus the cables', Ω (default 0.05)
``ambient``        the air around the servos, °C (default 25; below every servo's
                   Temperature Limit): a warm enclosure, a hot day
=================  ===============================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jointlab.errors import ConfigurationError
from jointlab.hardware.servo.control_table import ServoModel
from jointlab.hardware.servo_emulator.faults import BusFaults
from jointlab.hardware.servo_emulator.protection import Supply, check_ambient

if TYPE_CHECKING:
    from jointlab.connection import RobotURL

__all__ = ["FAULT_KEYS", "bus_ambient", "bus_faults", "bus_supply"]

#: The query keys this module reads.
FAULT_KEYS = (
    "drop_status",
    "corrupt_status",
    "delay_ms",
    "unplug",
    "power_cut",
    "brownout",
    "supply",
    "supply_ohm",
    "ambient",
)


def _numbers(count: int) -> Any:
    def convert(text: str) -> tuple[float, ...]:
        parts = [float(p) for p in text.split(":")]
        if len(parts) != count:
            names = ["AT", "SECONDS", "VOLTS"][:count]
            raise ValueError(f"expected {':'.join(names)} ({count} numbers joined by ':')")
        return tuple(parts)

    return convert


def _per_servo(ids: list[int]) -> Any:
    def convert(text: str) -> dict[int, float]:
        if ":" not in text:
            return dict.fromkeys(ids, float(text))
        found = {}
        for item in text.split(","):
            servo, _, p = item.partition(":")
            if int(servo) not in ids:
                raise ValueError(f"no servo id {int(servo)} on this bus (it has {ids})")
            found[int(servo)] = float(p)
        return found

    return convert


def bus_faults(url: RobotURL, ids: list[int], seed: int) -> BusFaults | None:
    """The faults the URL's keys ask for (None: none); range errors name the key.

    Raises:
        ConfigurationError: a value that is not a number, out of its range, or a servo id
            the bus does not have (each names the URL and the key).
    """
    given = {
        "drop_status": url.take("drop_status", _per_servo(ids), None),
        "corrupt_status": url.take("corrupt_status", _per_servo(ids), None),
        "delay_status": url.take("delay_ms", lambda t: float(t) / 1000.0, None),
        "unplugged": url.take("unplug", _numbers(2), None),
        "power_cut": url.take("power_cut", _numbers(2), None),
        "brownout": url.take("brownout", _numbers(3), None),
    }
    given = {key: value for key, value in given.items() if value is not None}
    if not given:
        return None
    keys = {"delay_status": "delay_ms", "unplugged": "unplug"}
    try:
        return BusFaults(seed=seed, **given)
    except ConfigurationError as exc:
        field = next((k for k in given if f"BusFaults.{k}" in str(exc)), None)
        key = keys.get(field, field) if field else "a fault key"
        raise ConfigurationError(f"{url.url}: query parameter {key!r}: {exc}") from None


def bus_supply(url: RobotURL, models: list[ServoModel]) -> Supply | None:
    """The supply the URL's ``supply`` and ``supply_ohm`` ask for (None: the default).

    Raises:
        ConfigurationError: a voltage outside a servo's rated input range, or a resistance
            outside [0, 100] Ω (names the URL, the key, the model and its range).
    """
    volts = url.take("supply", float, None)
    ohms = url.take("supply_ohm", float, None)
    if volts is None and ohms is None:
        return None
    supply = Supply(voltage=volts, resistance=0.05 if ohms is None else ohms)
    try:
        supply.check(models)
    except ConfigurationError as exc:
        key = "supply_ohm" if "resistance" in str(exc) else "supply"
        raise ConfigurationError(f"{url.url}: query parameter {key!r}: {exc}") from None
    return supply


def bus_ambient(url: RobotURL, models: list[ServoModel]) -> float | None:
    """The ambient temperature the URL's ``ambient`` asks for, °C (None: the default).

    Raises:
        ConfigurationError: not a number, below -20 °C, or not below a servo's Temperature
            Limit (names the URL, the key, the model and its limit).
    """
    celsius = url.take("ambient", float, None)
    if celsius is None:
        return None
    try:
        check_ambient(celsius, models)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{url.url}: query parameter 'ambient': {exc}") from None
    return celsius
