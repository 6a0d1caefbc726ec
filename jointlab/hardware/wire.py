"""Wire numbers and the message base class of the JointLab serial protocol.

Every message class (see :mod:`jointlab.hardware.messages` and
:mod:`jointlab.hardware.vectors`) carries its wire numbers as the class attributes
``msg_class`` and ``msg_type``, and offers:

* ``pack() -> bytes``: the **payload only** (no header, CRC or COBS; see
  :func:`jointlab.hardware.framing.encode_frame` for a whole frame);
* ``unpack(payload) -> message`` (classmethod): the inverse, raising
  :class:`~jointlab.errors.PackingError` for a short, long or invalid payload;
* ``size``: the payload length in bytes (a class constant for fixed-size messages, computed
  from ``dof`` for the others); ``len(message)`` is the same number.

Byte order is little-endian everywhere. Floats are IEEE-754 binary32 on the wire: values
are rounded to float32 when packed, NaN and infinities travel unchanged, and a finite value
outside the float32 range raises ``PackingError`` instead of silently becoming infinite.
Whether a value makes sense (a NaN torque, a joint index) is the receiver's business: a
device answers with a NACK. Equality is wire equality: two messages are equal when they
have the same type and pack to the same bytes. docs/protocol.md is the byte-level
specification; tests check that its worked examples are what this code produces.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from jointlab.errors import PackingError

__all__ = [
    "FLOAT32_MAX",
    "MAX_DOF",
    "MESSAGE_TYPES",
    "PROTOCOL_VERSION",
    "TYPE_ENUMS",
    "AckType",
    "CmdType",
    "DataType",
    "FixedMessage",
    "Message",
    "MessageClass",
    "NackReason",
    "NackType",
    "PayloadLengthError",
    "ReplyMixin",
    "ReqType",
    "StopMode",
    "WatchdogAction",
    "build",
    "message",
]

#: Version byte of every frame header; HELLO frames keep their layout in every version.
PROTOCOL_VERSION = 1
#: Largest number of actuators a vector message can carry (counts are uint8).
MAX_DOF = 255
#: Largest finite float32, the bound of every float field on the wire.
FLOAT32_MAX = float(np.finfo(np.float32).max)

_M = TypeVar("_M", bound="Message")


class PayloadLengthError(PackingError):
    """A payload's length does not match its message type (or its own count field)."""


class MessageClass(enum.IntEnum):
    """Header byte 1: the message class (Player's message kinds plus replies)."""

    CMD = 1
    REQ = 2
    DATA = 3
    ACK = 4
    NACK = 5


class CmdType(enum.IntEnum):
    """Types of class CMD; 1-7 are Player actarray command numbers."""

    POS = 1
    MULTI_POS = 2
    SPEED = 3
    MULTI_SPEED = 4
    HOME = 5
    CURRENT = 6
    MULTI_CURRENT = 7
    NJOINT = 16


class ReqType(enum.IntEnum):
    """Types of class REQ; 1-5 are Player actarray request numbers."""

    POWER = 1
    BRAKES = 2
    GET_GEOM = 3
    SPEED = 4
    ACCEL = 5
    HELLO = 16
    ARM = 17
    DISARM = 18
    STOP = 19
    HEARTBEAT = 20
    WATCHDOG = 21
    STREAM = 22


class DataType(enum.IntEnum):
    """Types of class DATA (Player's DATA STATE number)."""

    STATE = 1


class AckType(enum.IntEnum):
    """Types of class ACK: the reply layout (numbered as the request they answer)."""

    ACK = 0
    GEOMETRY = 3
    HELLO = 16


class NackType(enum.IntEnum):
    """Types of class NACK."""

    NACK = 0


class NackReason(enum.IntEnum):
    """Why a device refused a command or request (NACK byte 4)."""

    UNSPECIFIED = 0
    DISARMED = 1
    OUT_OF_RANGE = 2
    UNKNOWN_JOINT = 3
    BRAKED = 4
    UNPOWERED = 5
    BAD_LENGTH = 6
    UNSUPPORTED = 7
    BUSY = 8
    INVALID_VALUE = 9
    VERSION_MISMATCH = 10

    @property
    def text(self) -> str:
        """A sentence for users, e.g. ``"the robot is disarmed"``."""
        return _NACK_TEXT[self]

    @property
    def slug(self) -> str:
        """Lower-case name for ``CommandRefused.reason``, e.g. ``"disarmed"``."""
        return self.name.lower()


_NACK_TEXT = {
    NackReason.UNSPECIFIED: "the device refused without giving a reason",
    NackReason.DISARMED: "the robot is disarmed",
    NackReason.OUT_OF_RANGE: "a value is outside the joint's limits",
    NackReason.UNKNOWN_JOINT: "the joint index does not exist on the device",
    NackReason.BRAKED: "the brakes are engaged",
    NackReason.UNPOWERED: "motor power is off",
    NackReason.BAD_LENGTH: "the payload length or vector count is wrong for this device",
    NackReason.UNSUPPORTED: "the device does not implement this message",
    NackReason.BUSY: "the device is busy with an earlier request",
    NackReason.INVALID_VALUE: "a value is invalid (NaN or infinite where not allowed, "
    "negative gain, unknown mode)",
    NackReason.VERSION_MISMATCH: "the frame's protocol version differs from the device's",
}


#: Header byte 2's enum for each message class.
TYPE_ENUMS: dict[int, type[enum.IntEnum]] = {
    MessageClass.CMD: CmdType,
    MessageClass.REQ: ReqType,
    MessageClass.DATA: DataType,
    MessageClass.ACK: AckType,
    MessageClass.NACK: NackType,
}


class WatchdogAction(enum.IntEnum):
    """What the device does when its command watchdog expires."""

    HOLD = 0
    BRAKE = 1


class StopMode(enum.IntEnum):
    """How REQ STOP stops the array (BB.Actuator's stop variants)."""

    IMMEDIATE = 0
    DECELERATE = 1


class _FrameLike(Protocol):
    msg_class: int
    msg_type: int
    seq: int


#: Every message class by ``(msg_class, msg_type)``, filled by the :func:`message` decorator.
MESSAGE_TYPES: dict[tuple[int, int], type[Message]] = {}


def message(cls: type[_M]) -> type[_M]:
    """Class decorator for messages: a frozen dataclass registered under its wire numbers.

    Equality comes from the base class (wire equality). Two classes with the same
    ``(msg_class, msg_type)`` are a programming error and raise ``TypeError`` at import.
    """
    key = (int(cls.msg_class), int(cls.msg_type))
    if key in MESSAGE_TYPES:
        raise TypeError(f"{cls.__name__} reuses the wire numbers of {MESSAGE_TYPES[key].__name__}")
    MESSAGE_TYPES[key] = cls
    return dataclass(frozen=True, eq=False)(cls)


def build(cls: type[_M], **values: Any) -> _M:
    """Make a message from already-validated wire values, skipping ``__post_init__``.

    The decode hot path uses it; every value must be exactly what the field holds.
    """
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


class Message:
    """Base of every message: wire numbers, ``pack``/``unpack``/``size`` and wire equality."""

    #: Header byte 1.
    msg_class: ClassVar[MessageClass]
    #: Header byte 2 (a :class:`CmdType`, :class:`ReqType`, ... value).
    msg_type: ClassVar[int]

    def pack(self) -> bytes:
        """Return the payload bytes (no header, CRC or framing)."""
        raise NotImplementedError

    @classmethod
    def unpack(cls: type[_M], data: bytes) -> _M:
        """Parse a payload; raise ``PackingError`` if it is short, long or invalid."""
        raise NotImplementedError

    @property
    def size(self) -> int:
        """Payload length in bytes."""
        return len(self.pack())

    def __len__(self) -> int:
        return self.size

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.pack() == other.pack()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.pack()))


_CODES = {
    "b": "int8",
    "B": "uint8",
    "h": "int16",
    "H": "uint16",
    "i": "int32",
    "I": "uint32",
    "Q": "uint64",
    "f": "float32",
}


class FixedMessage(Message):
    """A message whose payload is one ``struct`` layout, validated when built.

    Subclasses set ``_LAYOUT`` (field name, struct code) in wire order and ``_KINDS``
    (field name, ``bool`` or an ``IntEnum`` class) for fields with a restricted set of values.
    """

    _LAYOUT: ClassVar[tuple[tuple[str, str], ...]] = ()
    _KINDS: ClassVar[tuple[tuple[str, Any], ...]] = ()
    _STRUCT: ClassVar[struct.Struct] = struct.Struct("<")
    size: ClassVar[int] = 0  # type: ignore[misc]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._STRUCT = struct.Struct("<" + "".join(code for _, code in cls._LAYOUT))
        cls.size = cls._STRUCT.size

    def __post_init__(self) -> None:
        name = type(self).__name__
        for field_name, kind in self._KINDS:
            value = getattr(self, field_name)
            object.__setattr__(self, field_name, _convert(name, field_name, kind, value))
        for field_name, code in self._LAYOUT:
            value = getattr(self, field_name)
            if code.endswith("s"):
                length = int(code[:-1])
                if not isinstance(value, bytes) or len(value) != length:
                    raise PackingError(f"{name}.{field_name} must be {length} bytes, got {value!r}")
                continue
            try:
                struct.pack("<" + code, value)
            except (struct.error, OverflowError, TypeError) as exc:
                raise PackingError(
                    f"{name}.{field_name}={value!r} does not fit its wire type {_CODES[code]}"
                ) from exc

    def pack(self) -> bytes:
        """Return the payload bytes (no header, CRC or framing)."""
        return self._STRUCT.pack(*[getattr(self, name) for name, _ in self._LAYOUT])

    @classmethod
    def unpack(cls: type[_M], data: bytes) -> _M:
        """Parse a payload; raise ``PackingError`` if it is short, long or invalid."""
        if len(data) != cls.size:
            raise PayloadLengthError(
                f"{cls.__name__} payload must be {cls.size} bytes, got {len(data)}"
            )
        values = dict(zip((n for n, _ in cls._LAYOUT), cls._STRUCT.unpack(data), strict=True))
        return cls(**values)


def _convert(owner: str, field_name: str, kind: Any, value: Any) -> Any:
    if kind is bool:
        if isinstance(value, (bool, int, np.integer, np.bool_)) and value in (0, 1):
            return bool(value)
        raise PackingError(f"{owner}.{field_name} must be 0/False or 1/True, got {value!r}")
    try:
        return kind(value)
    except (ValueError, TypeError) as exc:
        allowed = ", ".join(f"{m.name}={m.value}" for m in kind)
        raise PackingError(
            f"{owner}.{field_name}={value!r} is not a {kind.__name__} ({allowed})"
        ) from exc


class ReplyMixin:
    """Replies (ACK, NACK) start with the echo of the frame they answer."""

    @classmethod
    def reply_to(cls, frame: _FrameLike, **values: Any) -> Any:
        """Build a reply echoing ``frame``'s class, type and sequence number."""
        return cls(  # type: ignore[call-arg]
            ref_class=int(frame.msg_class),
            ref_type=int(frame.msg_type),
            ref_seq=int(frame.seq),
            **values,
        )
