"""The Feetech SDK (``scservo_sdk``, SCS/STS protocol) behind :class:`ServoDriver`."""

from __future__ import annotations

from typing import Any

from jointlab.hardware.servo_host.driver import ServoDriver

__all__ = ["FeetechDriver"]

#: Error-byte bits that are hardware errors (voltage, angle sensor, overheat, current, load).
HARDWARE_BITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20
#: The SCS/STS Reboot instruction (the SDK has no method for it).
INST_REBOOT = 0x08


class FeetechDriver(ServoDriver):
    """STS/SCS through Feetech's SDK (``PacketHandler(0)``: little-endian words)."""

    vendor = "feetech"

    def _sdk(self) -> Any:
        import scservo_sdk

        return scservo_sdk

    def _packet_handler(self) -> Any:
        return self.sdk.PacketHandler(0)

    def hardware_bits(self, error: int) -> int:
        """The error byte's hardware-error bits."""
        return int(error) & HARDWARE_BITS

    def _sync_read_tx(self, address: int, length: int, ids: list[int]) -> int:
        return self.packets.syncReadTx(self.port, address, length, ids, len(ids))

    def reboot(self, servo_id: int) -> None:
        """Reboot one servo with the Reboot instruction, sent through the SDK's packet layer."""
        packet = [0, 0, int(servo_id), 2, INST_REBOOT, 0]
        self.stats.exchanges += 1
        self.packets.txRxPacket(self.port, packet)
        self.error_bits[servo_id] = 0
