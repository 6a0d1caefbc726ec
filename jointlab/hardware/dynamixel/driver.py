"""The Dynamixel SDK (``dynamixel_sdk``, Protocol 2.0): its part of the host's one driver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jointlab.errors import ConfigurationError
from jointlab.hardware.servo.control_table import Register

__all__ = ["ALERT", "DynamixelSdk"]

#: The status packet's Alert bit: Hardware Error Status (70) is non-zero.
ALERT = 0x80


class DynamixelSdk:
    """Protocol 2.0 through ROBOTIS' SDK; mixed goal registers go out in one Bulk Write.

    A :class:`~jointlab.hardware.servo.vendor.VendorSdk`.
    """

    module = "dynamixel_sdk"
    has_bulk_write = True

    def packet_handler(self, sdk: Any) -> Any:
        """Protocol 2.0's packet handler."""
        return sdk.PacketHandler(2.0)

    def hardware_bits(self, error: int) -> int:
        """The Alert bit (the servo's Hardware Error Status says which error)."""
        return int(error) & ALERT

    def sync_read_tx(
        self, packets: Any, port: Any, address: int, length: int, ids: list[int]
    ) -> int:
        """A Sync Read instruction (not the Fast one)."""
        return packets.syncReadTx(port, address, length, ids, len(ids), False)

    def bulk_write(
        self, sdk: Any, packets: Any, port: Any, entries: Sequence[tuple[int, Register, int]]
    ) -> None:
        """One Bulk Write packet: ``(servo id, register, value)`` per servo (no status)."""
        group = sdk.GroupBulkWrite(port, packets)
        for servo_id, register, value in entries:
            raw = register.encode([value])[0].tolist()
            group.addParam(int(servo_id), register.address, register.size, raw)
        group.txPacket()

    def broadcast_ping(
        self, sdk: Any, packets: Any, port: Any, window: float
    ) -> dict[int, int | None]:
        """Servo id -> model number of every servo answering the SDK's broadcast ping.

        Raises:
            ConfigurationError: the status packets collide (two servos at one id).
        """
        data, result = packets.broadcastPing(port)
        if result == sdk.COMM_RX_CORRUPT:
            raise ConfigurationError(
                f"the status packets on {port.port_name!r} collide (two servos at one id?): "
                "connect one servo at a time to set ids"
            )
        return {int(i): int(v[0]) for i, v in (data or {}).items()}

    def reboot(self, packets: Any, port: Any, servo_id: int) -> None:
        """The SDK's Reboot instruction."""
        packets.reboot(port, servo_id)
