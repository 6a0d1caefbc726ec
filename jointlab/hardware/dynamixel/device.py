"""The emulated Dynamixel servos' instruction handling (Protocol 2.0), on a ``ServoArray``.

Ping, Read, Write, Reg Write / Action, Sync Read, Fast Sync Read (one combined status packet),
Sync Write, Bulk Read, Bulk Write, Reboot and Factory Reset, with the e-Manual's status rules:
Status Return Level (68) decides which instructions are answered, broadcast instructions
other than reads are never answered, the error byte carries the Alert bit (0x80) while
Hardware Error Status (70) is non-zero, and a packet with a bad CRC is answered with the CRC
error (3). The Bus Watchdog (98), when set, stops a servo that hears no instruction for its
period and flags it with -1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jointlab.hardware.dynamixel.protocol import (
    ALERT,
    BROADCAST_ID,
    ErrorCode,
    Instruction,
    Packet,
    PacketDecoder,
    encode_fast_status,
    encode_status,
)
from jointlab.hardware.servo.control_table import MemoryRefused

__all__ = ["DynamixelDevice", "Reply"]

#: (servo id, status packet bytes)
Reply = tuple[int, bytes]
_REASON = {
    "access": ErrorCode.ACCESS,
    "range": ErrorCode.DATA_RANGE,
    "length": ErrorCode.DATA_LENGTH,
}


def _word(data: bytes, at: int) -> int:
    return data[at] | data[at + 1] << 8


class DynamixelDevice:
    """Protocol 2.0 on the servos of ``servos`` (see the module docstring)."""

    protocol = "dynamixel"

    def __init__(self, servos: Any) -> None:
        """``servos``: a :class:`~jointlab.hardware.servo_emulator.firmware.ServoArray`."""
        self.servos = servos
        self.decoder = PacketDecoder()
        self._registered: dict[int, tuple[int, bytes]] = {}
        #: Firmware time (s) of the last instruction heard, for the bus watchdog.
        self.last_heard = 0.0

    # ------------------------------------------------------------------ helpers
    def _error(self, k: int, code: int = 0) -> int:
        return code | (ALERT if self.servos.faults[k] else 0)

    def _answers(self, k: int, instruction: int) -> bool:
        level = int(self.servos.get("status_return_level")[k])
        if instruction == Instruction.PING:
            return True
        if instruction in (Instruction.READ, Instruction.SYNC_READ, Instruction.BULK_READ):
            return level >= 1
        return level >= 2

    def _status(self, k: int, code: int = 0, params: bytes = b"", sender: int = -1) -> Reply:
        """Servo ``k``'s status packet, from id ``sender`` (default: its id now)."""
        servo_id = int(self.servos.ids[k])
        return servo_id, encode_status(
            servo_id if sender < 0 else sender, self._error(k, code), params
        )

    def return_delay(self, servo_id: int) -> float:
        """The servo's Return Delay Time, s."""
        k = self.servos.index[servo_id]
        return float(self.servos.get("return_delay_time")[k]) * 2e-6

    # ------------------------------------------------------------------ dispatch
    def handle(self, packet: Packet) -> list[Reply]:
        """Act on one instruction packet; return the status packets to send, in order."""
        servos = self.servos
        self.last_heard = servos.tick_count * servos.dt
        targets = (
            list(range(servos.n))
            if packet.id == BROADCAST_ID
            else [servos.index[packet.id]]
            if packet.id in servos.index
            else []
        )
        if not targets:
            return []
        if not packet.crc_ok:
            return [] if packet.id == BROADCAST_ID else [self._status(targets[0], ErrorCode.CRC)]
        inst, p = packet.instruction, packet.params
        if inst == Instruction.SYNC_WRITE:
            return self._sync_write(p)
        if inst == Instruction.SYNC_READ:
            return self._sync_read(p)
        if inst == Instruction.FAST_SYNC_READ:
            return self._fast_sync_read(p)
        if inst == Instruction.BULK_WRITE:
            return self._bulk_write(p)
        if inst == Instruction.BULK_READ:
            return self._bulk_read(p)
        if packet.id == BROADCAST_ID and inst == Instruction.PING:
            return [self._ping(k) for k in targets]
        replies = []
        for k in targets:
            reply = self._single(k, inst, p)
            if reply is not None and packet.id != BROADCAST_ID and self._answers(k, inst):
                replies.append(reply)
        return replies

    def _ping(self, k: int) -> Reply:
        model = self.servos.models[k]
        firmware = int(self.servos.memory[k, model.table["firmware_version"].address])
        number = model.model_number
        return self._status(k, 0, bytes([number & 0xFF, number >> 8, firmware]))

    def _single(self, k: int, inst: int, p: bytes) -> Reply | None:
        servos = self.servos
        try:
            if inst == Instruction.PING:
                return self._ping(k)
            if inst == Instruction.READ:
                if len(p) != 4:
                    return self._status(k, ErrorCode.DATA_LENGTH)
                return self._status(k, 0, servos.read_memory(k, _word(p, 0), _word(p, 2)))
            if inst == Instruction.WRITE:
                if len(p) < 3:
                    return self._status(k, ErrorCode.DATA_LENGTH)
                sender = int(servos.ids[k])  # an ID write answers from the old id
                servos.write_memory(k, _word(p, 0), p[2:])
                return self._status(k, sender=sender)
            if inst == Instruction.REG_WRITE:
                self._registered[k] = (_word(p, 0), p[2:])
                return self._status(k)
            if inst == Instruction.ACTION:
                if k in self._registered:
                    servos.write_memory(k, *self._registered.pop(k))
                return self._status(k)
            if inst == Instruction.REBOOT:
                servos.reboot(int(servos.ids[k]))
                return self._status(k)
            if inst == Instruction.FACTORY_RESET:
                # Parameter 0xFF resets everything, the id to 1; 0x01 keeps the id; 0x02
                # keeps the id and the Baud Rate (e-Manual, "Factory Reset"). The status
                # packet goes out before the reset takes effect.
                sender = int(servos.ids[k])
                everything = len(p) >= 1 and p[0] == 0xFF
                baud = servos.get("baud_rate")[k]
                servos.factory_reset(sender, new_id=1 if everything else None)
                if len(p) >= 1 and p[0] == 0x02:
                    k = servos.index[sender]
                    address = servos.register("baud_rate").address
                    servos.memory[k, address] = baud
                    servos.saved_memory(k)[address] = baud
                return self._status(k, sender=sender)
        except MemoryRefused as exc:
            return self._status(k, _REASON[exc.reason])
        return self._status(k, ErrorCode.INSTRUCTION)

    def _sync_write(self, p: bytes) -> list[Reply]:
        address, length = _word(p, 0), _word(p, 2)
        for at in range(4, len(p) - length + 1, length + 1):
            servo_id = p[at]
            if servo_id in self.servos.index:
                try:
                    self.servos.write_memory(
                        self.servos.index[servo_id], address, p[at + 1 : at + 1 + length]
                    )
                except MemoryRefused:
                    pass  # no status packet to carry the error
        return []

    def _read_reply(self, servo_id: int, address: int, length: int) -> list[Reply]:
        """The status packet of servo ``servo_id`` for a read (none if it is not on the bus)."""
        k = self.servos.index.get(servo_id)
        if k is None:
            return []
        try:
            return [self._status(k, 0, self.servos.read_memory(k, address, length))]
        except MemoryRefused as exc:
            return [self._status(k, _REASON[exc.reason])]

    def _sync_read(self, p: bytes) -> list[Reply]:
        address, length = _word(p, 0), _word(p, 2)
        return [r for servo_id in p[4:] for r in self._read_reply(servo_id, address, length)]

    def _fast_sync_read(self, p: bytes) -> list[Reply]:
        """Fast Sync Read (0x8A): the servos' data in one status packet, in the order asked.

        Each servo sends its block after its predecessor's, so the chain ends at the first id
        not on the bus (the host then sees a short packet). A servo that cannot read the block
        sends its error code and zeros in its place. The packet goes out with the first
        servo's return delay.
        """
        if len(p) < 5:
            return []
        address, length = _word(p, 0), _word(p, 2)
        blocks = []
        for servo_id in p[4:]:
            k = self.servos.index.get(servo_id)
            if k is None:
                break
            try:
                blocks.append(
                    (self._error(k), servo_id, self.servos.read_memory(k, address, length))
                )
            except MemoryRefused as exc:
                blocks.append((self._error(k, _REASON[exc.reason]), servo_id, bytes(length)))
        return [(blocks[0][1], encode_fast_status(blocks))] if blocks else []

    def _bulk_write(self, p: bytes) -> list[Reply]:
        at = 0
        while at + 5 <= len(p):
            servo_id, address, length = p[at], _word(p, at + 1), _word(p, at + 3)
            data = p[at + 5 : at + 5 + length]
            at += 5 + length
            if servo_id in self.servos.index:
                try:
                    self.servos.write_memory(self.servos.index[servo_id], address, data)
                except MemoryRefused:
                    pass
        return []

    def _bulk_read(self, p: bytes) -> list[Reply]:
        return [
            r
            for at in range(0, len(p) - 4, 5)
            for r in self._read_reply(p[at], _word(p, at + 1), _word(p, at + 3))
        ]

    # ------------------------------------------------------------------ per tick
    def tick(self) -> None:
        """Firmware duties between instructions: the bus watchdog."""
        servos = self.servos
        period = servos.get("bus_watchdog")
        armed = period > 0
        if not armed.any():
            return
        silent = servos.tick_count * servos.dt - self.last_heard
        expired = armed & (silent > period * 0.02)
        if expired.any():
            servos.refresh()
            servos.set("goal_position", servos.get("present_position"), expired)
            servos.setpoint[expired] = servos.get("present_position")[expired]
            servos.set("bus_watchdog", np.full(servos.n, -1), expired)
