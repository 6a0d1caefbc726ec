"""The robot file's ``bus`` section and per-actuator ``transmission``: what a servo arm is wired as.

::

    bus:
      protocol: feetech          # dynamixel (Protocol 2.0) | feetech (STS/SCS)
      baud: 1000000              # line rate, bit/s
      rate: 500                  # host bus cycles per second (one sync write + one sync read)
      servos:                    # one per joint, by joint name
        shoulder_pan: {id: 1, model: sts3215, mode: position}

``mode`` is how JointLab drives the servo: ``position`` (the servo's own position loop) or
``current`` (the host runs the NJointAction law and sends goal current; only for models with
current control). Whether a model exists and supports the mode is checked where the servo
tables live (``jointlab.hardware.servo``), when a bus is opened or emulated.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jointlab.robots.servo_character import (
    CHARACTER_DEFAULTS,
    character_to_dict,
    parse_character,
)
from jointlab.robots.transmission import Transmission

__all__ = ["BusProtocol", "BusSpec", "ServoMode", "ServoSpec", "parse_bus", "parse_transmission"]

BUS_KEYS = {"protocol", "baud", "rate", "servos"}
SERVO_KEYS = {"id", "model", "mode", *CHARACTER_DEFAULTS}
TRANSMISSION_KEYS = {"reduction", "offset", "direction", "ticks_per_rev"}
#: The highest servo id both vendors allow (253 and 254 are reserved / broadcast).
MAX_SERVO_ID = 252


class BusProtocol(str, enum.Enum):
    """Servo bus protocols JointLab speaks."""

    DYNAMIXEL = "dynamixel"
    FEETECH = "feetech"


class ServoMode(str, enum.Enum):
    """How JointLab drives one servo."""

    POSITION = "position"
    CURRENT = "current"


@dataclass(frozen=True)
class ServoSpec:
    """One servo on the bus: the joint it drives, its id, model, mode and character.

    The character (:mod:`jointlab.robots.servo_character`) is what identification found.
    """

    joint: str
    id: int
    model: str
    mode: ServoMode = ServoMode.POSITION
    #: Achieved position stiffness per P-register unit, as a factor on the datasheet's.
    stiffness: float = 1.0
    #: Total play of the gear train, joint rad.
    backlash: float = 0.0
    #: Command-to-motion delay the servo adds, s.
    delay: float = 0.0


@dataclass(frozen=True)
class BusSpec:
    """The ``bus`` section: protocol, line rate, host cycle rate and one servo per joint."""

    protocol: BusProtocol
    #: Line rate in bit/s.
    baud: int
    #: Host bus cycles (sync write + sync read) per second, Hz.
    rate: float
    #: Servos in joint order.
    servos: tuple[ServoSpec, ...]

    @property
    def ids(self) -> tuple[int, ...]:
        """Servo ids in joint order."""
        return tuple(s.id for s in self.servos)


def _fail(where: Any, message: str, field: str, actuator: str | None = None) -> Exception:
    return where.error(message, actuator, field)


def _integer(where: Any, value: Any, field: str, actuator: str | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"must be a whole number, got {value!r}", field, actuator)
    return value


def parse_bus(where: Any, raw: Any, joint_names: tuple[str, ...]) -> BusSpec:
    """Validate a ``bus`` mapping; every joint needs exactly one servo with a unique id.

    Args:
        where: The schema's error formatter (``where.error(message, actuator, field)``).
        raw: The ``bus`` mapping of the robot file.
        joint_names: The description's joints in order.
    """
    if not isinstance(raw, Mapping):
        raise _fail(where, f"must be a mapping, got {type(raw).__name__}", "bus")
    unknown = sorted(set(raw) - BUS_KEYS)
    if unknown:
        raise _fail(
            where,
            f"unknown key {unknown[0]!r}; allowed keys: {sorted(BUS_KEYS)}",
            f"bus.{unknown[0]}",
        )
    try:
        protocol = BusProtocol(raw.get("protocol"))
    except ValueError as exc:
        raise _fail(
            where,
            f"unknown protocol {raw.get('protocol')!r}; expected one of "
            f"{[p.value for p in BusProtocol]}",
            "bus.protocol",
        ) from exc
    baud = _integer(where, raw.get("baud", 1_000_000), "bus.baud")
    if baud <= 0:
        raise _fail(where, f"= {baud} must be > 0 bit/s", "bus.baud")
    rate = raw.get("rate", 200.0)
    if (
        isinstance(rate, bool)
        or not isinstance(rate, (int, float))
        or not math.isfinite(rate)
        or rate <= 0
    ):
        raise _fail(
            where, f"must be a positive number of cycles per second, got {rate!r}", "bus.rate"
        )
    servos_raw = raw.get("servos")
    if not isinstance(servos_raw, Mapping) or not servos_raw:
        raise _fail(where, "must map every joint name to {id, model, mode}", "bus.servos")
    extra = [name for name in servos_raw if name not in joint_names]
    if extra:
        raise _fail(
            where,
            f"names no joint of this robot; joints: {list(joint_names)}",
            f"bus.servos.{extra[0]}",
        )
    missing = [name for name in joint_names if name not in servos_raw]
    if missing:
        raise _fail(
            where, f"joint {missing[0]!r} has no servo; every joint needs one", "bus.servos"
        )
    servos = []
    seen: dict[int, str] = {}
    for name in joint_names:
        entry = servos_raw[name]
        field = f"bus.servos.{name}"
        if not isinstance(entry, Mapping):
            raise _fail(where, f"must be a mapping {{id, model, mode}}, got {entry!r}", field)
        bad = sorted(set(entry) - SERVO_KEYS)
        if bad:
            raise _fail(
                where,
                f"unknown key {bad[0]!r}; allowed keys: {sorted(SERVO_KEYS)}",
                f"{field}.{bad[0]}",
            )
        servo_id = _integer(where, entry.get("id"), f"{field}.id")
        if not 0 <= servo_id <= MAX_SERVO_ID:
            raise _fail(where, f"= {servo_id} must lie in [0, {MAX_SERVO_ID}]", f"{field}.id")
        if servo_id in seen:
            raise _fail(
                where, f"= {servo_id} is already the id of joint {seen[servo_id]!r}", f"{field}.id"
            )
        seen[servo_id] = name
        model = entry.get("model")
        if not isinstance(model, str) or not model:
            raise _fail(where, f"must be a servo model name, got {model!r}", f"{field}.model")
        try:
            mode = ServoMode(entry.get("mode", "position"))
        except ValueError as exc:
            raise _fail(
                where,
                f"unknown mode {entry.get('mode')!r}; expected one of "
                f"{[m.value for m in ServoMode]}",
                f"{field}.mode",
            ) from exc
        character = parse_character(where, entry, field)
        servos.append(
            ServoSpec(joint=name, id=servo_id, model=model.lower(), mode=mode, **character)
        )
    return BusSpec(protocol=protocol, baud=baud, rate=float(rate), servos=tuple(servos))


def parse_transmission(where: Any, raw: Any, name: str) -> Transmission:
    """Validate one actuator's ``transmission`` mapping (see :mod:`.transmission`)."""
    if not isinstance(raw, Mapping):
        raise _fail(where, f"must be a mapping, got {type(raw).__name__}", "transmission", name)
    unknown = sorted(set(raw) - TRANSMISSION_KEYS)
    if unknown:
        raise _fail(
            where,
            f"unknown key {unknown[0]!r}; allowed keys: {sorted(TRANSMISSION_KEYS)}",
            f"transmission.{unknown[0]}",
            name,
        )
    values: dict[str, Any] = {}
    for key in ("reduction", "offset"):
        value = raw.get(key, 1.0 if key == "reduction" else 0.0)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise _fail(
                where, f"must be a finite number, got {value!r}", f"transmission.{key}", name
            )
        values[key] = float(value)
    if values["reduction"] <= 0:
        raise _fail(where, f"= {values['reduction']} must be > 0", "transmission.reduction", name)
    direction = raw.get("direction", 1)
    if direction not in (1, -1) or isinstance(direction, bool):
        raise _fail(where, f"must be 1 or -1, got {direction!r}", "transmission.direction", name)
    ticks = _integer(where, raw.get("ticks_per_rev", 4096), "transmission.ticks_per_rev", name)
    if ticks <= 0:
        raise _fail(where, f"= {ticks} must be > 0", "transmission.ticks_per_rev", name)
    return Transmission(
        reduction=values["reduction"],
        offset=values["offset"],
        direction=int(direction),
        ticks_per_rev=ticks,
    )


def bus_to_dict(bus: BusSpec) -> dict[str, Any]:
    """The ``bus`` section of a robot file for ``bus`` (round-trips through :func:`parse_bus`)."""
    return {
        "protocol": bus.protocol.value,
        "baud": bus.baud,
        "rate": bus.rate,
        "servos": {
            s.joint: {"id": s.id, "model": s.model, "mode": s.mode.value, **character_to_dict(s)}
            for s in bus.servos
        },
    }


def transmission_to_dict(transmission: Transmission) -> dict[str, Any]:
    """The ``transmission`` mapping of an actuator."""
    return {
        "reduction": transmission.reduction,
        "offset": transmission.offset,
        "direction": transmission.direction,
        "ticks_per_rev": transmission.ticks_per_rev,
    }
