"""Feetech SCS/STS packets, the device side: decoding instructions, encoding status.

A packet is ``FF FF | ID | LEN | INST | PARAMS... | CHK`` with ``LEN = len(PARAMS) + 2`` and
``CHK = ~(ID + LEN + INST + sum(PARAMS)) & 0xFF``; a status packet carries the error byte in
place of the instruction. Words are little-endian (the SDK's ``PacketHandler(0)``).
"""

from __future__ import annotations

import enum

from jointlab.hardware.servo.packets import Packet

__all__ = ["HEADER", "Instruction", "Packet", "PacketDecoder", "checksum", "encode_packet"]

HEADER = b"\xff\xff"
BROADCAST_ID = 0xFE


class Instruction(enum.IntEnum):
    """SCS/STS instructions."""

    PING = 0x01
    READ = 0x02
    WRITE = 0x03
    REG_WRITE = 0x04
    ACTION = 0x05
    RESET = 0x06
    REBOOT = 0x08
    SYNC_READ = 0x82
    SYNC_WRITE = 0x83


def checksum(body: bytes) -> int:
    """``~sum(body) & 0xFF`` over id, length, instruction (or error) and parameters."""
    return ~sum(body) & 0xFF


def encode_packet(servo_id: int, code: int, params: bytes = b"") -> bytes:
    """A packet with instruction (or status error) ``code`` and ``params``."""
    body = bytes([servo_id, len(params) + 2, code]) + bytes(params)
    return HEADER + body + bytes([checksum(body)])


def encode_status(servo_id: int, error: int, params: bytes = b"") -> bytes:
    """A status packet: ``error`` in the instruction's place."""
    return encode_packet(servo_id, error, params)


class PacketDecoder:
    """Splits a byte stream into :class:`Packet` objects."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.skipped = 0

    def feed(self, data: bytes) -> list[Packet]:
        """Add ``data``; return the packets completed by it, in order."""
        self._buffer += data
        buffer = self._buffer
        packets = []
        while True:
            start = buffer.find(HEADER)
            if start < 0:
                keep = 1 if buffer[-1:] == b"\xff" else 0
                self.skipped += len(buffer) - keep
                del buffer[: len(buffer) - keep]
                break
            if start:
                self.skipped += start
                del buffer[:start]
            if len(buffer) < 4:
                break
            if buffer[2] == 0xFF:  # a third FF: the header starts one byte later
                self.skipped += 1
                del buffer[:1]
                continue
            length = buffer[3]
            if length < 2:
                self.skipped += 1
                del buffer[:1]
                continue
            total = 4 + length
            if len(buffer) < total:
                break
            raw = bytes(buffer[:total])
            del buffer[:total]
            ok = checksum(raw[2:-1]) == raw[-1]
            packets.append(
                Packet(id=raw[2], instruction=raw[4], params=raw[5:-1], wire_bytes=total, crc_ok=ok)
            )
        return packets
