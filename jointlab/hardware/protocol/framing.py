"""Frames of the JointLab wire protocol: header, CRC-32, COBS and a streaming decoder.

A frame on the wire is ``00 | COBS(header | payload | crc) | 00``:

* ``header`` (7 bytes, little-endian): protocol version uint8, message class uint8, message
  type uint8, sequence number uint16 (wrapping), payload length uint16;
* ``crc``: CRC-32 (IEEE 802.3, ``zlib.crc32``) of header and payload, appended
  little-endian (4 bytes). A receiver checks a frame in one call: the CRC-32 of header,
  payload *and* CRC is the constant :data:`CRC32_RESIDUE`;
* COBS (the ``cobs`` package) removes every 0x00 from the frame, so 0x00 only ever delimits
  frames. Frames start and end with 0x00 so line noise before a frame never corrupts it; a
  receiver treats any run of 0x00 as one delimiter.

**The handshake keeps version 1's frame format.** REQ HELLO and ACK HELLO frames carry
header version 1 and version 1's CRC-16/CCITT-FALSE (big-endian) in every protocol version,
and their payloads never change, so any two versions can tell each other theirs. The header
version byte says which CRC a frame carries: 1 → CRC-16, anything else → CRC-32.

This module encodes frames and decodes single ones; the streaming decoder and its counters
are :mod:`~jointlab.hardware.protocol.decoder`. Layering follows pyserial's
``serial.threaded``: transport (port, reader thread) → framing → codec (message classes) →
backend (``SerialRobot``).
"""

from __future__ import annotations

import struct
import zlib
from binascii import crc_hqx
from dataclasses import dataclass
from typing import NamedTuple

from cobs import cobs

from jointlab.errors import PackingError
from jointlab.hardware.protocol.table import MESSAGE_TYPES, AckType, ReqType
from jointlab.hardware.protocol.wire import (
    HELLO_FRAME_VERSION,
    PROTOCOL_VERSION,
    Message,
    MessageClass,
    NackReason,
    PayloadLengthError,
)

__all__ = [
    "CRC16_INIT",
    "CRC32_RESIDUE",
    "HEADER",
    "HELLO_REQUEST_TYPE",
    "HELLO_TYPES",
    "MAX_ENCODED_SIZE",
    "MAX_PAYLOAD",
    "MIN_FRAME_SIZE",
    "Frame",
    "FrameEncoder",
    "Unparsed",
    "check_crc",
    "crc16",
    "crc32",
    "decode_frame",
    "encode_frame",
    "frame_body",
]

#: version, class, type, sequence number, payload length.
HEADER = struct.Struct("<BBBHH")
#: Initial value of the CRC-16/CCITT-FALSE register (HELLO frames).
CRC16_INIT = 0xFFFF
#: CRC-32 of any frame body followed by its own little-endian CRC-32.
CRC32_RESIDUE = 0x2144DF1C
#: Largest payload in bytes (a 255-actuator geometry reply is 12779 bytes).
MAX_PAYLOAD = 16384
#: Longest COBS-encoded frame between delimiters; longer runs are garbage.
MAX_ENCODED_SIZE = cobs.max_encoded_length(HEADER.size + MAX_PAYLOAD + 4)
_DELIMITER = b"\x00"
_HEADER_SIZE = HEADER.size
#: Shortest frame body: a header and version 1's CRC-16 (shorter runs are runts).
MIN_FRAME_SIZE = _HEADER_SIZE + 2
_MIN_FRAME = _HEADER_SIZE + 4
_cobs_encode = cobs.encode
_crc32 = zlib.crc32

#: ``(class, type)`` of REQ HELLO: it starts a new session (and sequence count).
HELLO_REQUEST_TYPE = (int(MessageClass.REQ), int(ReqType.HELLO))
#: ``(class, type)`` of the HELLO frames, which keep version 1's format in every version.
HELLO_TYPES = frozenset({HELLO_REQUEST_TYPE, (int(MessageClass.ACK), int(AckType.HELLO))})


@dataclass(frozen=True)
class Unparsed:
    """A frame with a good CRC whose payload could not be turned into a message.

    A device answers one of class CMD or REQ with a NACK carrying ``reason``. ``pack()``
    returns the payload, so ``encode_frame`` can send one (tests use that to probe devices).
    """

    #: Header class byte.
    msg_class: int
    #: Header type byte.
    msg_type: int
    #: The payload as received.
    payload: bytes
    #: BAD_LENGTH, INVALID_VALUE, UNSUPPORTED (unknown class/type) or VERSION_MISMATCH.
    reason: NackReason
    #: What was wrong, for logs.
    error: str = ""

    def pack(self) -> bytes:
        """Return the payload as received."""
        return self.payload

    @property
    def size(self) -> int:
        """Payload length in bytes."""
        return len(self.payload)


class Frame(NamedTuple):
    """One decoded frame: header fields plus the message (a NamedTuple: cheap to build)."""

    #: Header protocol version.
    version: int
    #: Header sequence number (uint16).
    seq: int
    #: The decoded message, or :class:`Unparsed`.
    message: Message | Unparsed

    @property
    def msg_class(self) -> int:
        """Header class byte."""
        return int(self.message.msg_class)

    @property
    def msg_type(self) -> int:
        """Header type byte."""
        return int(self.message.msg_type)


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (``crc16(b"123456789") == 0x29B1``); HELLO frames."""
    return crc_hqx(data, CRC16_INIT)


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE 802.3) of ``data`` (``crc32(b"123456789") == 0xCBF43926``)."""
    return _crc32(data)


def _frame_version(message: Message | Unparsed, version: int) -> int:
    """HELLO frames keep version 1's format in every version."""
    if (int(message.msg_class), int(message.msg_type)) in HELLO_TYPES:
        return HELLO_FRAME_VERSION
    return version


#: ``(message class, version) -> header bytes 0-2``, filled on first use (the encode hot path).
_PREFIXES: dict[tuple[type, int], bytes] = {}
_SEQ_LENGTH = struct.Struct("<HH")


def _prefix(message: Message | Unparsed, version: int) -> bytes:
    """Header version, class and type bytes of ``message``'s frame."""
    kind = type(message)
    prefix = _PREFIXES.get((kind, version)) if kind is not Unparsed else None
    if prefix is None:
        frame_version = _frame_version(message, version)
        try:
            prefix = bytes((frame_version, int(message.msg_class), int(message.msg_type)))
        except ValueError as exc:
            raise PackingError(
                f"frame header needs a version in [0, 255], got {version!r}"
            ) from exc
        if kind is not Unparsed:
            _PREFIXES[kind, version] = prefix
    return prefix


def frame_body(message: Message | Unparsed, seq: int, *, version: int = PROTOCOL_VERSION) -> bytes:
    """Return header, payload and CRC of a frame: what COBS encodes (for tools and docs).

    ``version`` is the header's version byte; REQ HELLO and ACK HELLO frames always get 1
    (and CRC-16). Version 1 frames carry a big-endian CRC-16, others a little-endian CRC-32.

    Raises:
        PackingError: the payload exceeds :data:`MAX_PAYLOAD` or ``seq`` is out of range.
    """
    payload = message.pack()
    length = len(payload)
    if length > MAX_PAYLOAD:
        raise PackingError(f"payload of {length} bytes exceeds MAX_PAYLOAD={MAX_PAYLOAD}")
    prefix = _prefix(message, version)
    try:
        body = prefix + _SEQ_LENGTH.pack(seq, length) + payload
    except struct.error as exc:
        raise PackingError(f"frame header needs seq in [0, 65535], got seq={seq!r}") from exc
    if prefix[0] == HELLO_FRAME_VERSION:
        return body + crc_hqx(body, CRC16_INIT).to_bytes(2, "big")
    return body + _crc32(body).to_bytes(4, "little")


def encode_frame(
    message: Message | Unparsed, seq: int, *, version: int = PROTOCOL_VERSION
) -> bytes:
    """Return the whole frame for ``message``: ``00 | COBS(header, payload, CRC) | 00``.

    Args:
        message: Any message (or an :class:`Unparsed`, re-sent as is).
        seq: Sequence number in [0, 65535]; senders count up by one per frame, wrapping.
        version: Header version byte (HELLO frames: always 1).

    Raises:
        PackingError: the payload exceeds :data:`MAX_PAYLOAD` or ``seq`` is out of range.
    """
    return b"\x00%b\x00" % _cobs_encode(frame_body(message, seq, version=version))


def check_crc(raw: bytes) -> int:
    """Length of the CRC trailer of a decoded run; 0 if the CRC does not check."""
    if raw[0] == HELLO_FRAME_VERSION:
        return 0 if crc_hqx(raw, CRC16_INIT) else 2
    if len(raw) < _MIN_FRAME or _crc32(raw) != CRC32_RESIDUE:
        return 0
    return 4


def decode_frame(data: bytes) -> Frame:
    """Decode exactly one frame (delimiters optional), strictly.

    Unlike :class:`FrameDecoder` it raises instead of counting, also for payloads that
    would become :class:`Unparsed`; the header version is returned, not checked.

    Raises:
        PackingError: bad COBS, bad CRC, bad length, unknown type or invalid payload.
    """
    chunk = data.strip(_DELIMITER)
    if _DELIMITER in chunk:
        raise PackingError("decode_frame got more than one frame (0x00 inside the data)")
    try:
        raw = cobs.decode(chunk)
    except cobs.DecodeError as exc:
        raise PackingError(f"frame is not valid COBS: {exc}") from exc
    if len(raw) < MIN_FRAME_SIZE:
        raise PackingError(f"frame of {len(raw)} bytes is shorter than header and CRC")
    trailer = check_crc(raw)
    if not trailer:
        raise PackingError("frame CRC does not check")
    version, msg_class, msg_type, seq, length = HEADER.unpack_from(raw)
    if length != len(raw) - _HEADER_SIZE - trailer:
        raise PayloadLengthError(
            f"header says {length} payload bytes, frame has {len(raw) - _HEADER_SIZE - trailer}"
        )
    cls = MESSAGE_TYPES.get((msg_class, msg_type))
    if cls is None:
        raise PackingError(f"unknown message class {msg_class} type {msg_type}")
    return Frame(version, seq, cls.unpack(raw[HEADER.size : -trailer]))


class FrameEncoder:
    """Numbers outgoing frames: one sequence counter per sending side (not thread-safe)."""

    def __init__(self, version: int = PROTOCOL_VERSION, first_seq: int = 0) -> None:
        self.version = version
        self._next = first_seq & 0xFFFF

    @property
    def next_seq(self) -> int:
        """The sequence number the next frame will carry."""
        return self._next

    def encode(self, message: Message | Unparsed) -> tuple[int, bytes]:
        """Return ``(seq, frame bytes)`` for ``message`` and advance the counter."""
        seq = self._next
        frame = encode_frame(message, seq, version=self.version)
        self._next = (seq + 1) & 0xFFFF
        return seq, frame
