"""The RoboCup SSL ``ControlMessage``: a 10-byte base-station-to-robot command.

Bit-exact with the RoboCup SSL ControlMessage crate (the layout below is the whole spec)::

    byte 0     team << 7 | robot_id << 3 | shoot_mode << 2 | trigger_mode
    bytes 1-2  body_x   int16 little-endian, m/s × 1000
    bytes 3-4  body_y   int16 little-endian, m/s × 1000
    bytes 5-6  body_w   int16 little-endian, rad/s × 1000
    byte 7     dribbler_speed  int8
    byte 8     kick_strength   uint8
    byte 9     role << 6 | mode

Like the crate's struct, the fields hold **wire values** (raw int16, int8, uint8);
:meth:`ControlMessage.from_velocity` scales floats and :meth:`ControlMessage.get_velocity`
undoes it. :func:`holonomic_joint_velocities` maps a message to joint velocity targets of
the ``ssl_robot`` description.
"""

from __future__ import annotations

import enum
import math
import struct
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from jointlab.errors import PackingError

__all__ = [
    "SSL_JOINTS",
    "VELOCITY_SCALE_FACTOR",
    "ControlMessage",
    "Mode",
    "ShootMode",
    "Team",
    "TriggerMode",
    "holonomic_joint_velocities",
]

#: Body velocities travel as ``int16(value * VELOCITY_SCALE_FACTOR)`` (mm/s, mrad/s).
VELOCITY_SCALE_FACTOR = 1000.0
#: Joint order of the ``ssl_robot`` description that :func:`holonomic_joint_velocities` uses.
SSL_JOINTS = ("base_x", "base_y", "base_w", "dribbler", "kicker")

_INT16 = (-32768, 32767)
_BODY = struct.Struct("<BhhhbBB")


class Team(enum.IntEnum):
    """Byte 0 bit 7."""

    BLUE = 0
    YELLOW = 1


class ShootMode(enum.IntEnum):
    """Byte 0 bit 2."""

    KICK = 0
    CHIP = 1


class TriggerMode(enum.IntEnum):
    """Byte 0 bits 0-1 (3 is not used)."""

    STAND_DOWN = 0
    IMMEDIATE = 1
    ON_BREAK_BEAM = 2


class Mode(enum.IntEnum):
    """Byte 9 bits 0-5 (8-63 are not used)."""

    DEFAULT = 0
    IMU_TEST = 1
    RECEIVE_BENCHMARK = 2
    SEND_BENCHMARK = 3
    PROGRAM_KICK_ON_BREAKBEAM = 4
    PROGRAM_KICKER = 5
    KICKER_TEST = 6
    FPGA_TEST = 7


def _scale(name: str, value: float) -> int:
    """Scale like the crate's ``(value * 1000.0) as i16``: float32, truncate, saturate."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise PackingError(f"ControlMessage.{name} must be a number in m/s or rad/s, got {value!r}")
    if math.isnan(value):
        raise PackingError(f"ControlMessage.{name} is NaN; expected a velocity")
    with np.errstate(over="ignore"):
        scaled = float(np.float32(value) * np.float32(VELOCITY_SCALE_FACTOR))
    if math.isinf(scaled):
        return _INT16[1] if scaled > 0 else _INT16[0]
    return min(max(math.trunc(scaled), _INT16[0]), _INT16[1])


@dataclass(frozen=True)
class ControlMessage:
    """A packed SSL robot command; fields hold wire values (the Packable idea).

    Out-of-range fields raise :class:`~jointlab.errors.PackingError` when the message is
    built; enum fields accept their ints and are stored as the enums.
    """

    #: Size on the wire in bytes (the crate's ``len()``).
    size: ClassVar[int] = 10

    #: Team of the robot.
    team: Team
    #: Robot id, 0-15.
    robot_id: int
    #: Kick or chip.
    shoot_mode: ShootMode
    #: When the kicker fires.
    trigger_mode: TriggerMode
    #: Body-frame x velocity in mm/s (int16).
    body_x: int
    #: Body-frame y velocity in mm/s (int16).
    body_y: int
    #: Body angular velocity in mrad/s (int16).
    body_w: int
    #: Dribbler speed, -128 to 127 (units of the robot firmware).
    dribbler_speed: int = 0
    #: Kick strength, 0-255 (units of the robot firmware).
    kick_strength: int = 0
    #: Role, 0-3.
    role: int = 0
    #: Robot mode.
    mode: Mode = Mode.DEFAULT

    _RANGES: ClassVar[tuple[tuple[str, int, int], ...]] = (
        ("robot_id", 0, 15),
        ("body_x", *_INT16),
        ("body_y", *_INT16),
        ("body_w", *_INT16),
        ("dribbler_speed", -128, 127),
        ("kick_strength", 0, 255),
        ("role", 0, 3),
    )
    _ENUMS: ClassVar[tuple[tuple[str, Any], ...]] = (
        ("team", Team),
        ("shoot_mode", ShootMode),
        ("trigger_mode", TriggerMode),
        ("mode", Mode),
    )

    def __post_init__(self) -> None:
        for name, kind in self._ENUMS:
            value = getattr(self, name)
            try:
                converted = kind(value)
            except (ValueError, TypeError) as exc:
                allowed = ", ".join(f"{m.name}={m.value}" for m in kind)
                raise PackingError(
                    f"ControlMessage.{name}={value!r} is not a {kind.__name__} ({allowed})"
                ) from exc
            object.__setattr__(self, name, converted)
        for name, low, high in self._RANGES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise PackingError(f"ControlMessage.{name} must be an integer, got {value!r}")
            if not low <= value <= high:
                raise PackingError(f"ControlMessage.{name}={value} is outside [{low}, {high}]")
            object.__setattr__(self, name, int(value))

    @classmethod
    def from_velocity(
        cls,
        team: Team | int,
        robot_id: int,
        body_x: float,
        body_y: float,
        body_w: float,
        *,
        dribbler_speed: int = 0,
        kick_strength: int = 0,
        shoot_mode: ShootMode | int = ShootMode.KICK,
        trigger_mode: TriggerMode | int = TriggerMode.STAND_DOWN,
        role: int = 0,
        mode: Mode | int = Mode.DEFAULT,
    ) -> ControlMessage:
        """Build from body velocities in m/s (x, y) and rad/s (w).

        Each is multiplied by 1000 in float32 and truncated toward zero, saturating at the
        int16 range, as the crate's ``(v * 1000.0) as i16`` does; NaN raises PackingError.
        """
        return cls(
            team,
            robot_id,
            shoot_mode,
            trigger_mode,
            _scale("body_x", body_x),
            _scale("body_y", body_y),
            _scale("body_w", body_w),
            dribbler_speed,
            kick_strength,
            role,
            mode,
        )

    def get_velocity(self) -> tuple[float, float, float]:
        """Body velocity ``(x m/s, y m/s, w rad/s)``: the wire values divided by 1000."""
        scale = VELOCITY_SCALE_FACTOR
        return (self.body_x / scale, self.body_y / scale, self.body_w / scale)

    def pack(self) -> bytes:
        """Return the 10 packed bytes."""
        head = self.team << 7 | self.robot_id << 3 | self.shoot_mode << 2 | self.trigger_mode
        tail = self.role << 6 | self.mode
        return _BODY.pack(
            head,
            self.body_x,
            self.body_y,
            self.body_w,
            self.dribbler_speed,
            self.kick_strength,
            tail,
        )

    @classmethod
    def unpack(cls, data: bytes) -> ControlMessage:
        """Parse 10 bytes.

        Raises:
            PackingError: ``data`` is not exactly 10 bytes, or holds trigger mode 3 or an
                unknown mode.
        """
        if len(data) != cls.size:
            raise PackingError(f"ControlMessage needs exactly {cls.size} bytes, got {len(data)}")
        head, body_x, body_y, body_w, dribbler, kick, tail = _BODY.unpack(data)
        return cls(
            Team(head >> 7),
            (head >> 3) & 0x0F,
            ShootMode((head >> 2) & 0x01),
            head & 0x03,
            body_x,
            body_y,
            body_w,
            dribbler,
            kick,
            tail >> 6,
            tail & 0x3F,
        )

    def __len__(self) -> int:
        return self.size


def holonomic_joint_velocities(
    message: ControlMessage,
    yaw: float = 0.0,
    *,
    dribbler_max_speed: float,
    kicker_speed: float,
    break_beam: bool = False,
) -> np.ndarray:
    """Joint velocity targets of a holonomic base for one ControlMessage (a pure function).

    The joints are :data:`SSL_JOINTS`: ``base_x``/``base_y`` are world-aligned linear joints
    and ``base_w`` the yaw joint, so the body-frame velocity is rotated by ``yaw``. The
    dribbler turns at ``dribbler_speed / 127`` of ``dribbler_max_speed`` (clipped to ±1).
    The kicker extends at ``kick_strength / 255`` of ``kicker_speed`` when the trigger
    fires: IMMEDIATE, or ON_BREAK_BEAM while ``break_beam`` is True; STAND_DOWN never fires.
    The shoot mode (kick or chip) and the robot mode do not change the targets: the model's
    kicker has one axis, and test modes are firmware matters.

    Args:
        message: The command.
        yaw: Current base yaw in rad (the ``base_w`` joint position).
        dribbler_max_speed: Dribbler speed at ``dribbler_speed = 127``, rad/s.
        kicker_speed: Kicker speed at ``kick_strength = 255``, m/s.
        break_beam: True while the ball breaks the kicker's beam.

    Returns:
        Velocities, shape ``(5,)``: m/s, m/s, rad/s, rad/s, m/s.
    """
    vx, vy, vw = message.get_velocity()
    cos_yaw, sin_yaw = math.cos(yaw), math.sin(yaw)
    fires = message.trigger_mode is TriggerMode.IMMEDIATE or (
        message.trigger_mode is TriggerMode.ON_BREAK_BEAM and break_beam
    )
    return np.array(
        [
            cos_yaw * vx - sin_yaw * vy,
            sin_yaw * vx + cos_yaw * vy,
            vw,
            min(max(message.dribbler_speed / 127.0, -1.0), 1.0) * dribbler_max_speed,
            message.kick_strength / 255.0 * kicker_speed if fires else 0.0,
        ]
    )
