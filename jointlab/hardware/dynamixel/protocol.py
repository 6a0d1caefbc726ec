"""Dynamixel Protocol 2.0 packets, the device side: decoding instructions, encoding status.

A packet is ``FF FF FD 00 | ID | LEN_L LEN_H | INST | PARAMS... | CRC_L CRC_H`` with
``LEN = len(PARAMS) + 3`` and a CRC-16 (polynomial 0x8005, initial value 0, no reflection)
over everything before it. Inside ``INST..PARAMS`` every ``FF FF FD`` is followed by a stuffed
``FD`` so that no header appears in the payload (e-Manual, "Protocol 2.0"). A status packet
has instruction 0x55 and an error byte first in its parameters.

The emulated bus needs its own codec (the SDK is the host's): the tests check this one
against the SDK's packets byte for byte.
"""

from __future__ import annotations

import enum

from jointlab.hardware.servo.packets import Packet

__all__ = [
    "HEADER",
    "ErrorCode",
    "Instruction",
    "Packet",
    "PacketDecoder",
    "crc16",
    "encode_packet",
    "stuff",
    "unstuff",
]

HEADER = b"\xff\xff\xfd\x00"
BROADCAST_ID = 0xFE
ALERT = 0x80


class Instruction(enum.IntEnum):
    """Protocol 2.0 instructions."""

    PING = 0x01
    READ = 0x02
    WRITE = 0x03
    REG_WRITE = 0x04
    ACTION = 0x05
    FACTORY_RESET = 0x06
    REBOOT = 0x08
    CLEAR = 0x10
    STATUS = 0x55
    SYNC_READ = 0x82
    SYNC_WRITE = 0x83
    FAST_SYNC_READ = 0x8A
    BULK_READ = 0x92
    BULK_WRITE = 0x93


class ErrorCode(enum.IntEnum):
    """The status packet's error number (bit 7, ``ALERT``, flags a hardware error)."""

    NONE = 0
    RESULT_FAIL = 1
    INSTRUCTION = 2
    CRC = 3
    DATA_RANGE = 4
    DATA_LENGTH = 5
    DATA_LIMIT = 6
    ACCESS = 7


def _table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else crc << 1
        table.append(crc & 0xFFFF)
    return table


_CRC_TABLE = _table()


def crc16(data: bytes) -> int:
    """CRC-16 of ``data`` (polynomial 0x8005, initial 0), as Protocol 2.0 uses it."""
    crc = 0
    table = _CRC_TABLE
    for byte in data:
        crc = ((crc << 8) ^ table[((crc >> 8) ^ byte) & 0xFF]) & 0xFFFF
    return crc


def stuff(payload: bytes) -> bytes:
    """Insert an ``FD`` after every ``FF FF FD`` of ``payload`` (instruction and parameters)."""
    return payload.replace(b"\xff\xff\xfd", b"\xff\xff\xfd\xfd")


def unstuff(payload: bytes) -> bytes:
    """Remove the stuffed ``FD`` after every ``FF FF FD``."""
    return payload.replace(b"\xff\xff\xfd\xfd", b"\xff\xff\xfd")


def encode_packet(servo_id: int, instruction: int, params: bytes = b"") -> bytes:
    """A complete packet: header, id, length, stuffed instruction and parameters, CRC."""
    body = stuff(bytes([instruction]) + bytes(params))
    length = len(body) + 2
    head = HEADER + bytes([servo_id, length & 0xFF, length >> 8])
    packet = head + body
    crc = crc16(packet)
    return packet + bytes([crc & 0xFF, crc >> 8])


def encode_status(servo_id: int, error: int, params: bytes = b"") -> bytes:
    """A status packet (instruction 0x55) with ``error`` and ``params``."""
    return encode_packet(servo_id, Instruction.STATUS, bytes([error]) + bytes(params))


def encode_fast_status(blocks: list[tuple[int, int, bytes]]) -> bytes:
    """The one status packet of a Fast Sync Read: ``(error, servo id, data)`` per servo.

    The e-Manual's layout: header, broadcast id, length, instruction 0x55, then per servo its
    error, id and data followed by a CRC-16 of the packet so far; the last servo's CRC is the
    packet's own. The length counts the instruction through the last CRC (``1 + Σ(4 + L)``).
    No byte stuffing: the blocks are read by position.
    """
    length = 1 + sum(4 + len(data) for _, _, data in blocks)
    packet = HEADER + bytes([BROADCAST_ID, length & 0xFF, length >> 8, Instruction.STATUS])
    for error, servo_id, data in blocks:
        packet += bytes([error, servo_id]) + bytes(data)
        crc = crc16(packet)
        packet += bytes([crc & 0xFF, crc >> 8])
    return packet


class PacketDecoder:
    """Splits a byte stream into :class:`Packet` objects (garbage before a header is skipped)."""

    #: Longest packet accepted; longer lengths are treated as garbage.
    MAX_LENGTH = 1024

    def __init__(self) -> None:
        self._buffer = bytearray()
        #: Bytes skipped while looking for a header.
        self.skipped = 0

    def feed(self, data: bytes) -> list[Packet]:
        """Add ``data``; return the packets completed by it, in order."""
        self._buffer += data
        packets = []
        buffer = self._buffer
        while True:
            start = buffer.find(HEADER)
            if start < 0:
                keep = 3 if len(buffer) >= 3 else len(buffer)
                self.skipped += len(buffer) - keep
                del buffer[: len(buffer) - keep]
                break
            if start:
                self.skipped += start
                del buffer[:start]
            if len(buffer) < 7:
                break
            length = buffer[5] | buffer[6] << 8
            if length < 3 or length > self.MAX_LENGTH:
                self.skipped += 1
                del buffer[:1]
                continue
            total = 7 + length
            if len(buffer) < total:
                break
            raw = bytes(buffer[:total])
            del buffer[:total]
            crc_ok = crc16(raw[:-2]) == (raw[-2] | raw[-1] << 8)
            body = unstuff(raw[7:-2])
            packets.append(
                Packet(
                    id=raw[4],
                    instruction=body[0] if body else -1,
                    params=body[1:],
                    wire_bytes=total,
                    crc_ok=crc_ok,
                )
            )
        return packets
