"""Wire constants, value enums and the message base classes of the JointLab serial protocol.

Every message class (:mod:`~jointlab.hardware.protocol.messages`,
:mod:`~jointlab.hardware.protocol.vectors`, :mod:`~jointlab.hardware.protocol.feedback`)
describes one payload and offers:

* ``pack() -> bytes``: the **payload only** (no header, CRC or COBS; see
  :func:`jointlab.hardware.protocol.framing.encode_frame` for a whole frame);
* ``unpack(payload) -> message`` (classmethod): the inverse, raising
  :class:`~jointlab.errors.PackingError` for a short, long or invalid payload;
* ``size``: the payload length in bytes (a class constant for fixed-size messages, computed
  from ``dof`` for the others); ``len(message)`` is the same number.

Its wire numbers (``msg_class``, ``msg_type``) are **not** written in the class: the message
table (:mod:`~jointlab.hardware.protocol.table`) declares them once, with the message's
direction, reply and device handler, and sets them on the class.

Byte order is little-endian everywhere. Floats are IEEE-754 binary32 on the wire: values
are rounded to float32 when packed, NaN and infinities travel unchanged, and a finite value
outside the float32 range raises ``PackingError`` instead of silently becoming infinite.
Whether a value makes sense (a NaN torque, a joint index) is the receiver's business: a
device answers with a NACK. Equality is wire equality: two messages are equal when they
have the same type and pack to the same bytes.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

import numpy as np

from jointlab.errors import PackingError

__all__ = [
    "DOC_TYPES",
    "FLOAT32_MAX",
    "HELLO_FRAME_VERSION",
    "MAX_DOF",
    "PROTOCOL_VERSION",
    "FixedMessage",
    "Message",
    "MessageClass",
    "NackReason",
    "PayloadLengthError",
    "Reply",
    "StopMode",
    "WatchdogAction",
    "build",
    "payload",
]

#: The protocol version this code speaks (header byte 0 of every frame but HELLO's).
PROTOCOL_VERSION = 2
#: Header version byte of every REQ HELLO and ACK HELLO frame, in every protocol version:
#: the handshake keeps version 1's frame format (CRC-16) so that any two versions can tell
#: each other theirs (docs/protocol.md section 11).
HELLO_FRAME_VERSION = 1
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

    @property
    def from_host(self) -> bool:
        """True for classes the host sends (CMD, REQ), False for the device's."""
        return self in (MessageClass.CMD, MessageClass.REQ)


class NackReason(enum.IntEnum):
    """Why a device refused a command or request (NACK byte 4)."""

    UNSPECIFIED = 0
    DISARMED = 1
    OUT_OF_LIMITS = 2
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
    NackReason.OUT_OF_LIMITS: "a value is outside the joint's limits",
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


def payload(cls: type[_M]) -> type[_M]:
    """Class decorator for message classes: a frozen dataclass with wire equality."""
    return dataclass(frozen=True, eq=False)(cls)


def build(cls: type[_M], **values: Any) -> _M:
    """Make a message from already-validated wire values, skipping ``__post_init__``.

    The decode hot path uses it; every value must be exactly what the field holds.
    """
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


class Message:
    """Base of every message: ``pack``/``unpack``/``size``, wire equality, wire numbers.

    ``msg_class`` and ``msg_type`` are set by the message table; ``SIZE_TEXT`` is the
    payload size as docs/protocol.md writes it (``"8"``, ``"1 + 20·n"``).
    """

    #: Header byte 1 (set by the message table).
    msg_class: ClassVar[MessageClass]
    #: Header byte 2 (set by the message table).
    msg_type: ClassVar[int]
    #: Payload size for the protocol document (variable-size messages set it).
    SIZE_TEXT: ClassVar[str] = ""

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
#: struct code -> the type name of docs/protocol.md.
DOC_TYPES = {
    "b": "i8",
    "B": "u8",
    "h": "i16",
    "H": "u16",
    "i": "i32",
    "I": "u32",
    "Q": "u64",
    "f": "f32",
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
        cls.SIZE_TEXT = str(cls.size)

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

    @classmethod
    def layout(cls) -> list[tuple[int, str, str]]:
        """``(offset, field, docs type)`` of every field, for the protocol document."""
        rows, offset = [], 0
        for name, code in cls._LAYOUT:
            size = struct.calcsize("<" + code)
            doc_type = f"{size} bytes" if code.endswith("s") else DOC_TYPES[code]
            kind = dict(cls._KINDS).get(name)
            rows.append((offset, name, "bool" if kind is bool else doc_type))
            offset += size
        return rows

    def pack(self) -> bytes:
        """Return the payload bytes (no header, CRC or framing).

        A message parsed by :meth:`unpack` packs to exactly the bytes it came from (a
        float32 signalling NaN would otherwise come back quiet through Python's float).
        """
        wire = self.__dict__.get("_wire")
        if wire is not None:
            return wire
        return self._STRUCT.pack(*[getattr(self, name) for name, _ in self._LAYOUT])

    @classmethod
    def unpack(cls: type[_M], data: bytes) -> _M:
        """Parse a payload; raise ``PackingError`` if it is short, long or invalid."""
        if len(data) != cls.size:
            raise PayloadLengthError(
                f"{cls.__name__} payload must be {cls.size} bytes, got {len(data)}"
            )
        values = dict(zip((n for n, _ in cls._LAYOUT), cls._STRUCT.unpack(data), strict=True))
        message = cls(**values)
        message.__dict__["_wire"] = bytes(data)
        return message


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


class Reply:
    """Replies (ACK, NACK) start with the echo of the frame they answer.

    The host routes every message of a reply class to the request it echoes; the message
    table decides which classes those are (every class of ACK and NACK).
    """

    ref_class: int
    ref_type: int
    ref_seq: int

    @classmethod
    def reply_to(cls, frame: _FrameLike, **values: Any) -> Any:
        """Build a reply echoing ``frame``'s class, type and sequence number."""
        return cls(  # type: ignore[call-arg]
            ref_class=int(frame.msg_class),
            ref_type=int(frame.msg_type),
            ref_seq=int(frame.seq),
            **values,
        )
