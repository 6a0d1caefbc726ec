"""The emulated Feetech STS servos' instruction handling, on a ``ServoArray``.

Ping (also broadcast: every servo answers, in id order), Read, Write, Reg Write / Action,
Sync Read, Sync Write and Reboot. The status packet's
error byte carries the servo's error bits (voltage 0x01, angle sensor 0x02, overheating 0x04,
over-current 0x08, overload 0x20) while a hardware error is set; writing Torque Enable = 1
clears an error, as re-enabling clears a real STS servo's protection. A packet with a bad
checksum is ignored (no status), as the servos do. Response Status Level (8) 0 answers only
ping and reads.
"""

from __future__ import annotations

from typing import Any

from jointlab.hardware.feetech.protocol import (
    BROADCAST_ID,
    Instruction,
    Packet,
    PacketDecoder,
    encode_status,
)
from jointlab.hardware.servo.control_table import MemoryRefused

__all__ = ["ERROR_ACCESS", "FeetechDevice"]

Reply = tuple[int, bytes]
#: The error bit the emulated servo sets for a refused access (the instruction error bit).
ERROR_ACCESS = 0x40


class FeetechDevice:
    """The SCS/STS protocol on the servos of ``servos`` (see the module docstring)."""

    protocol = "feetech"

    def __init__(self, servos: Any) -> None:
        """``servos``: a :class:`~jointlab.hardware.servo_emulator.firmware.ServoArray`."""
        self.servos = servos
        self.decoder = PacketDecoder()
        self._registered: dict[int, tuple[int, bytes]] = {}
        self.last_heard = 0.0

    def _status(self, k: int, params: bytes = b"", error: int = 0, sender: int = -1) -> Reply:
        """Servo ``k``'s status packet, from id ``sender`` (default: its id now)."""
        servo_id = int(self.servos.ids[k])
        code = (int(self.servos.faults[k]) & 0x3F) | error
        return servo_id, encode_status(servo_id if sender < 0 else sender, code, params)

    def return_delay(self, servo_id: int) -> float:
        """The servo's Return Delay Time, s."""
        return float(self.servos.get("return_delay_time")[self.servos.index[servo_id]]) * 2e-6

    def handle(self, packet: Packet) -> list[Reply]:
        """Act on one instruction packet; return the status packets to send, in order."""
        servos = self.servos
        self.last_heard = servos.tick_count * servos.dt
        if not packet.crc_ok:
            return []
        inst, p = packet.instruction, packet.params
        if inst == Instruction.SYNC_WRITE and packet.id == BROADCAST_ID:
            address, length = p[0], p[1]
            for at in range(2, len(p) - length + 1, length + 1):
                k = servos.index.get(p[at])
                if k is not None:
                    try:
                        servos.write_memory(k, address, p[at + 1 : at + 1 + length])
                    except MemoryRefused:
                        pass
            return []
        if inst == Instruction.SYNC_READ and packet.id == BROADCAST_ID:
            address, length = p[0], p[1]
            replies = []
            for servo_id in p[2:]:
                k = servos.index.get(servo_id)
                if k is not None:
                    try:
                        replies.append(self._status(k, servos.read_memory(k, address, length)))
                    except MemoryRefused:
                        replies.append(self._status(k, error=ERROR_ACCESS))
            return replies
        targets = (
            sorted(range(servos.n), key=lambda k: int(servos.ids[k]))
            if packet.id == BROADCAST_ID
            else [servos.index[packet.id]]
            if packet.id in servos.index
            else []
        )
        replies = []
        for k in targets:
            reply = self._single(k, inst, p)
            level = int(servos.get("status_return_level")[k])
            answered = inst in (Instruction.PING, Instruction.READ) or level >= 1
            if (packet.id != BROADCAST_ID or inst == Instruction.PING) and answered:
                replies.append(reply)  # a broadcast ping is answered by every servo
        return replies

    def _single(self, k: int, inst: int, p: bytes) -> Reply:
        servos = self.servos
        try:
            if inst == Instruction.PING:
                return self._status(k)
            if inst == Instruction.READ and len(p) == 2:
                return self._status(k, servos.read_memory(k, p[0], p[1]))
            if inst == Instruction.WRITE and len(p) >= 2:
                sender = int(servos.ids[k])  # an ID write answers from the old id
                servos.write_memory(k, p[0], p[1:])
                return self._status(k, sender=sender)
            if inst == Instruction.REG_WRITE and len(p) >= 2:
                self._registered[k] = (p[0], p[1:])
                return self._status(k)
            if inst == Instruction.ACTION:
                if k in self._registered:
                    servos.write_memory(k, *self._registered.pop(k))
                return self._status(k)
            if inst == Instruction.REBOOT:
                servos.reboot(int(servos.ids[k]))
                return self._status(k)
            if inst == Instruction.RESET:  # factory values; the id is kept
                servos.factory_reset(int(servos.ids[k]))
                return self._status(k)
        except MemoryRefused:
            return self._status(k, error=ERROR_ACCESS)
        return self._status(k, error=ERROR_ACCESS)

    def tick(self) -> None:
        """Firmware duties between instructions (none on STS servos)."""
