"""A survey of a servo bus: one row per servo and the bus's latency and error counts.

What ``jointlab check`` shows for a Dynamixel or Feetech arm: for each servo its id, joint,
model (from the Model Number register), firmware version, present position, input voltage,
temperature, load and hardware-error bits (named); for the bus, the round-trip time of
pings (median, p99, max) and the exchanges, retries, missing and corrupt status packets
counted since the port was opened.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from jointlab.hardware.vendors import vendor

__all__ = ["BusSurvey", "ServoRow", "survey"]


@dataclass(frozen=True)
class ServoRow:
    """One servo as read over the bus.

    Attributes:
        id: Servo id.
        joint: The joint it drives.
        model: Model name (from its Model Number), or the number when unknown.
        firmware: Firmware version as the servo reports it (``"3.10"``, ``"52"``).
        position: Present joint position, rad (through the calibration when there is one).
        voltage: Input voltage, V.
        temperature: Temperature, °C.
        load: Present load (Feetech: % of maximum torque) or current (Dynamixel: A).
        load_unit: ``"%"`` or ``"A"``.
        errors: Names of the hardware-error bits set (empty: none).
    """

    id: int
    joint: str
    model: str
    firmware: str
    position: float
    voltage: float
    temperature: float
    load: float
    load_unit: str
    errors: tuple[str, ...]


@dataclass(frozen=True)
class BusSurvey:
    """Every servo's row and the bus figures.

    Attributes:
        protocol: ``"dynamixel"`` or ``"feetech"``.
        baud: Line rate, bit/s.
        rows: One per servo, in joint order.
        ping_ms: Ping round trips, ms, ``(n,)``.
        exchanges: Exchanges since the port opened.
        retries: Retries spent.
        missing: Missing status packets.
        corrupt: Corrupt status packets.
    """

    protocol: str
    baud: int
    rows: tuple[ServoRow, ...]
    ping_ms: np.ndarray
    exchanges: int
    retries: int
    missing: int
    corrupt: int


def _firmware(robot: object, joint: int, table: object) -> str:
    read = robot.read_register  # type: ignore[attr-defined]
    if "firmware_major" in table:  # type: ignore[operator]
        return f"{read(joint, 'firmware_major')}.{read(joint, 'firmware_minor')}"
    return str(read(joint, "firmware_version"))


def survey(robot: object, pings: int = 20) -> BusSurvey:
    """Read every servo of ``robot`` (a :class:`ServoBusRobot`) and time ``pings`` pings.

    Raises:
        LinkError: a servo does not answer (names its id and joint).
    """
    driver = robot.driver  # type: ignore[attr-defined]
    description = robot.description  # type: ignore[attr-defined]
    protocol = description.bus.protocol.value
    record = vendor(protocol)
    state = robot.read()  # type: ignore[attr-defined]
    rows = []
    for j, (servo_id, model) in enumerate(zip(robot.servo_ids, robot.models, strict=True)):  # type: ignore[attr-defined]
        table = model.table
        read = robot.read_register  # type: ignore[attr-defined]
        number = read(j, "model_number")
        load_name = "present_load" if "present_load" in table else "present_current"
        load = read(j, load_name) * table[load_name].unit  # A, or a fraction of stall torque
        unit = "A" if load_name == "present_current" else "%"
        if unit == "%":
            load *= 100.0
        rows.append(
            ServoRow(
                id=servo_id,
                joint=description.joint_names[j],
                model=record.model_named(number),
                firmware=_firmware(robot, j, table),
                position=float(state.position[j]),
                voltage=read(j, "present_input_voltage") * table["present_input_voltage"].unit,
                temperature=float(read(j, "present_temperature")),
                load=float(load),
                load_unit=unit,
                errors=record.error_names(read(j, "hardware_error_status")),
            )
        )
    times = []
    for k in range(pings):
        servo_id = robot.servo_ids[k % len(rows)]  # type: ignore[attr-defined]
        start = time.perf_counter()
        driver.ping(servo_id)
        times.append((time.perf_counter() - start) * 1e3)
    stats = driver.stats
    return BusSurvey(
        protocol=protocol,
        baud=int(getattr(driver, "baud", description.bus.baud)),
        rows=tuple(rows),
        ping_ms=np.array(times),
        exchanges=int(stats.exchanges),
        retries=int(stats.retries),
        missing=int(sum(stats.missing.values())),
        corrupt=int(sum(stats.corrupt.values())),
    )
