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

:class:`FrameDecoder` is not thread-safe: one reader owns it. Layering follows pyserial's
``serial.threaded``: transport (port, reader thread) → framing (this module) → codec
(message classes) → backend (``SerialRobot``).
"""

from __future__ import annotations

import struct
import zlib
from binascii import crc_hqx
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

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
    "MAX_ENCODED_SIZE",
    "MAX_PAYLOAD",
    "Frame",
    "FrameDecoder",
    "FrameEncoder",
    "LinkStats",
    "Unparsed",
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
_MIN_HELLO_FRAME = _HEADER_SIZE + 2  # version 1 format: CRC-16
_MIN_FRAME = _HEADER_SIZE + 4
_cobs_decode = cobs.decode
_cobs_encode = cobs.encode
_unpack_header = HEADER.unpack_from
_crc32 = zlib.crc32

_message_type = MESSAGE_TYPES.get
_HELLO_REQUEST = (int(MessageClass.REQ), int(ReqType.HELLO))
# HELLO frames use version 1's format and are parsed whatever their version.
_HELLO = {_HELLO_REQUEST, (int(MessageClass.ACK), int(AckType.HELLO))}


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


@dataclass(frozen=True)
class LinkStats:
    """Counters of one direction of a link (a :class:`FrameDecoder` and its reader)."""

    #: Bytes fed to the decoder.
    bytes_received: int = 0
    #: Bytes thrown away (bad frames, garbage, a partial frame at start-up; delimiters not
    #: counted).
    bytes_dropped: int = 0
    #: Frames with a good CRC (including :class:`Unparsed` ones).
    frames: int = 0
    #: Runs between delimiters that are not valid COBS.
    cobs_errors: int = 0
    #: Frames whose CRC did not check.
    crc_errors: int = 0
    #: Runs too short to hold a header and a CRC.
    runts: int = 0
    #: Runs longer than :data:`MAX_ENCODED_SIZE` without a delimiter.
    overruns: int = 0
    #: Good-CRC frames with a bad length or payload (delivered as :class:`Unparsed`).
    malformed: int = 0
    #: Good-CRC frames of an unknown class or type (delivered as :class:`Unparsed`).
    unknown_types: int = 0
    #: Good-CRC non-HELLO frames of another protocol version (delivered as :class:`Unparsed`).
    version_mismatches: int = 0
    #: Times the sequence number jumped forward (frames lost in between).
    sequence_gaps: int = 0
    #: Frames missing according to the sequence numbers (sum over the gaps).
    frames_missed: int = 0
    #: Times the sequence number went back (duplicate, reordering or a peer restart).
    out_of_order: int = 0
    #: Well-formed messages the receiver refused to use (a DATA STATE whose joint count
    #: differs from the robot's); counted by the host, not by the decoder.
    rejected: int = 0

    @property
    def errors(self) -> int:
        """Corrupted runs: COBS errors, CRC errors, runts and overruns."""
        return self.cobs_errors + self.crc_errors + self.runts + self.overruns


_STAT_NAMES = tuple(f.name for f in fields(LinkStats))


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (``crc16(b"123456789") == 0x29B1``); HELLO frames."""
    return crc_hqx(data, CRC16_INIT)


def crc32(data: bytes) -> int:
    """CRC-32 (IEEE 802.3) of ``data`` (``crc32(b"123456789") == 0xCBF43926``)."""
    return _crc32(data)


def _frame_version(message: Message | Unparsed, version: int) -> int:
    """HELLO frames keep version 1's format in every version."""
    if (int(message.msg_class), int(message.msg_type)) in _HELLO:
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
            raise PackingError(f"frame header needs a version in [0, 255], got {version!r}"
                               ) from exc  # fmt: skip
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


def _check_crc(raw: bytes) -> int:
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
    if len(raw) < _MIN_HELLO_FRAME:
        raise PackingError(f"frame of {len(raw)} bytes is shorter than header and CRC")
    trailer = _check_crc(raw)
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


class FrameDecoder:
    """Streaming decoder: bytes in, :class:`Frame` objects out, bad frames counted.

    ``feed`` splits on 0x00, COBS-decodes, checks the CRC, then parses header and payload.
    A run that fails COBS or CRC is dropped and counted and never reaches the caller; the
    next delimiter resynchronises. A good-CRC frame that cannot be parsed is returned as an
    :class:`Unparsed` message (so a device can NACK it). Sequence numbers of good-CRC frames
    are checked for gaps; a REQ HELLO starts a new session and a new count.

    Args:
        version: The protocol version this side speaks.
        synced: False for a port just opened: the bytes before the first 0x00 may be the
            tail of a frame sent before the port was opened and are dropped (counted in
            ``bytes_dropped`` only, not as an error).
    """

    def __init__(self, version: int = PROTOCOL_VERSION, *, synced: bool = True) -> None:
        self.version = version
        self._buffer = b""
        self._discarding = not synced
        self._expected: int | None = None
        self._counts = dict.fromkeys(_STAT_NAMES, 0)

    @property
    def stats(self) -> LinkStats:
        """A snapshot of the counters."""
        return LinkStats(**self._counts)

    @property
    def pending(self) -> int:
        """Bytes held while waiting for the next delimiter."""
        return len(self._buffer)

    def reset(self, *, synced: bool = True) -> None:
        """Forget buffered bytes and the sequence baseline (counters are kept)."""
        self._buffer = b""
        self._discarding = not synced
        self._expected = None

    def feed(self, data: bytes) -> list[Frame]:
        """Consume ``data`` (any bytes-like object) and return the frames it completes, in order."""
        if type(data) is not bytes:
            data = bytes(data)  # parsed messages are read-only views of immutable bytes
        counts = self._counts
        counts["bytes_received"] += len(data)
        if self._buffer:
            data = self._buffer + data
        chunks = data.split(_DELIMITER)
        tail = chunks.pop()
        if self._discarding:
            if chunks:  # the end of an overlong run, or of a frame older than the port
                counts["bytes_dropped"] += len(chunks[0])
                chunks[0] = b""
                self._discarding = False
            else:
                counts["bytes_dropped"] += len(tail)
                tail = b""
        if len(tail) > MAX_ENCODED_SIZE:
            counts["overruns"] += 1
            counts["bytes_dropped"] += len(tail)
            tail = b""
            self._discarding = True
        self._buffer = tail
        frames: list[Frame] = []
        good = 0
        expected = self._expected
        version_wanted = self.version
        for chunk in chunks:
            if not chunk:
                continue
            try:
                raw = _cobs_decode(chunk)
            except cobs.DecodeError:
                counts["cobs_errors"] += 1
                counts["bytes_dropped"] += len(chunk)
                continue
            if len(raw) < _MIN_HELLO_FRAME:
                counts["runts"] += 1
                counts["bytes_dropped"] += len(chunk)
                continue
            if raw[0] == version_wanted and _crc32(raw) == CRC32_RESIDUE:
                trailer = 4  # the hot path: a frame of this side's version
            else:
                trailer = _check_crc(raw)
                if not trailer:
                    counts["crc_errors"] += 1
                    counts["bytes_dropped"] += len(chunk)
                    continue
            version, msg_class, msg_type, seq, length = _unpack_header(raw)
            good += 1
            if seq != expected:
                self._sequence_jump(seq, expected, msg_class, msg_type)
            expected = (seq + 1) & 0xFFFF
            payload = raw[_HEADER_SIZE:-trailer]
            cls = _message_type((msg_class, msg_type))
            if cls is not None and length == len(payload) and version == version_wanted:
                try:
                    message: Any = cls.unpack(payload)
                except PackingError as exc:
                    message = self._rejected(version, msg_class, msg_type, length, payload, exc)
            else:
                message = self._rejected(version, msg_class, msg_type, length, payload, None)
            frames.append(Frame(version, seq, message))
        counts["frames"] += good
        self._expected = expected
        return frames

    def _rejected(
        self,
        version: int,
        msg_class: int,
        msg_type: int,
        length: int,
        payload: bytes,
        exc: PackingError | None,
    ) -> Message | Unparsed:
        """Slow path: a good-CRC frame that is not a plain current-version message."""
        counts = self._counts
        if length != len(payload):
            counts["malformed"] += 1
            error = f"header says {length} payload bytes, frame has {len(payload)}"
            return Unparsed(msg_class, msg_type, payload, NackReason.BAD_LENGTH, error)
        cls = MESSAGE_TYPES.get((msg_class, msg_type))
        if cls is None:
            counts["unknown_types"] += 1
            error = f"no message class {msg_class} type {msg_type} in protocol {self.version}"
            return Unparsed(msg_class, msg_type, payload, NackReason.UNSUPPORTED, error)
        if exc is None and version != self.version:
            if (msg_class, msg_type) not in _HELLO:
                counts["version_mismatches"] += 1
                error = f"frame version {version}, expected {self.version}"
                return Unparsed(msg_class, msg_type, payload, NackReason.VERSION_MISMATCH, error)
            try:
                return cls.unpack(payload)
            except PackingError as hello_exc:
                exc = hello_exc
        counts["malformed"] += 1
        reason = (
            NackReason.BAD_LENGTH
            if isinstance(exc, PayloadLengthError)
            else NackReason.INVALID_VALUE
        )
        return Unparsed(msg_class, msg_type, payload, reason, str(exc))

    def _sequence_jump(self, seq: int, expected: int | None, msg_class: int, msg_type: int) -> None:
        if expected is None or (msg_class, msg_type) == _HELLO_REQUEST:
            return
        delta = (seq - expected) & 0xFFFF
        if delta < 0x8000:
            self._counts["sequence_gaps"] += 1
            self._counts["frames_missed"] += delta
        else:
            self._counts["out_of_order"] += 1
