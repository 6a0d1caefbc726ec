"""The streaming frame decoder of the wire protocol, and the link counters it keeps.

:class:`FrameDecoder` turns chunks of bytes into
:class:`~jointlab.hardware.protocol.framing.Frame` objects: it splits on 0x00, COBS-decodes,
checks the CRC that the header's version byte names, parses header and payload, and counts
everything it drops in :class:`LinkStats`. It is not thread-safe: one reader owns it.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, fields
from typing import Any

from cobs import cobs

from jointlab.errors import PackingError
from jointlab.hardware.protocol.framing import (
    CRC32_RESIDUE,
    HEADER,
    HELLO_REQUEST_TYPE,
    HELLO_TYPES,
    MAX_ENCODED_SIZE,
    MIN_FRAME_SIZE,
    Frame,
    Unparsed,
    check_crc,
)
from jointlab.hardware.protocol.table import MESSAGE_TYPES
from jointlab.hardware.protocol.wire import (
    PROTOCOL_VERSION,
    Message,
    NackReason,
    PayloadLengthError,
)

__all__ = ["FrameDecoder", "LinkStats"]

_DELIMITER = b"\x00"
_cobs_decode = cobs.decode
_HEADER_SIZE = HEADER.size
_unpack_header = HEADER.unpack_from
_message_type = MESSAGE_TYPES.get
_crc32 = zlib.crc32


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
            if len(raw) < MIN_FRAME_SIZE:
                counts["runts"] += 1
                counts["bytes_dropped"] += len(chunk)
                continue
            if raw[0] == version_wanted and _crc32(raw) == CRC32_RESIDUE:
                trailer = 4  # the hot path: a frame of this side's version
            else:
                trailer = check_crc(raw)
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
            if (msg_class, msg_type) not in HELLO_TYPES:
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
        if expected is None or (msg_class, msg_type) == HELLO_REQUEST_TYPE:
            return
        delta = (seq - expected) & 0xFFFF
        if delta < 0x8000:
            self._counts["sequence_gaps"] += 1
            self._counts["frames_missed"] += delta
        else:
            self._counts["out_of_order"] += 1
