"""The Dynamixel SDK (``dynamixel_sdk``, Protocol 2.0) behind :class:`ServoDriver`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jointlab.hardware.servo.control_table import Register
from jointlab.hardware.servo_host.driver import ServoDriver

__all__ = ["DynamixelDriver"]

#: The status packet's Alert bit: Hardware Error Status (70) is non-zero.
ALERT = 0x80


class DynamixelDriver(ServoDriver):
    """Protocol 2.0 through ROBOTIS' SDK; mixed goal registers go out in one Bulk Write."""

    vendor = "dynamixel"

    def _sdk(self) -> Any:
        import dynamixel_sdk

        return dynamixel_sdk

    def _packet_handler(self) -> Any:
        return self.sdk.PacketHandler(2.0)

    def hardware_bits(self, error: int) -> int:
        """The Alert bit (the servo's Hardware Error Status says which error)."""
        return int(error) & ALERT

    def _sync_read_tx(self, address: int, length: int, ids: list[int]) -> int:
        return self.packets.syncReadTx(self.port, address, length, ids, len(ids), False)

    @property
    def has_bulk_write(self) -> bool:
        """Protocol 2.0 has Bulk Write."""
        return True

    def bulk_write(self, entries: Sequence[tuple[int, Register, int]]) -> None:
        """One Bulk Write packet: ``(servo id, register, value)`` per servo (no status)."""
        group = self.sdk.GroupBulkWrite(self.port, self.packets)
        for servo_id, register, value in entries:
            raw = register.encode([value])[0].tolist()
            group.addParam(int(servo_id), register.address, register.size, raw)
        self.stats.exchanges += 1
        group.txPacket()
