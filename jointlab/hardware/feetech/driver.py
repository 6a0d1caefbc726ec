"""The Feetech SDK (``scservo_sdk``, SCS/STS protocol): its part of the host's one driver."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from jointlab.errors import ConfigurationError
from jointlab.hardware.servo.control_table import Register

__all__ = ["HARDWARE_BITS", "FeetechSdk"]

#: Error-byte bits that are hardware errors (voltage, angle sensor, overheat, current, load).
HARDWARE_BITS = 0x01 | 0x02 | 0x04 | 0x08 | 0x20
#: The SCS/STS Reboot instruction (the SDK has no method for it).
INST_REBOOT = 0x08
#: Broadcast ping: header, id 0xFE, length 2, PING, checksum.
BROADCAST_PING = bytes([0xFF, 0xFF, 0xFE, 0x02, 0x01, (~(0xFE + 0x02 + 0x01)) & 0xFF])


class FeetechSdk:
    """STS/SCS through Feetech's SDK (``PacketHandler(0)``: little-endian words).

    A :class:`~jointlab.hardware.servo.vendor.VendorSdk`.
    """

    module = "scservo_sdk"
    has_bulk_write = False

    def packet_handler(self, sdk: Any) -> Any:
        """The SCS/STS packet handler, little-endian words."""
        return sdk.PacketHandler(0)

    def hardware_bits(self, error: int) -> int:
        """The error byte's hardware-error bits."""
        return int(error) & HARDWARE_BITS

    def sync_read_tx(
        self, packets: Any, port: Any, address: int, length: int, ids: list[int]
    ) -> int:
        """A Sync Read instruction."""
        return packets.syncReadTx(port, address, length, ids, len(ids))

    def bulk_write(
        self, sdk: Any, packets: Any, port: Any, entries: Sequence[tuple[int, Register, int]]
    ) -> None:
        """The SCS/STS protocol has no Bulk Write."""
        raise NotImplementedError("feetech has no bulk write")

    def broadcast_ping(
        self, sdk: Any, packets: Any, port: Any, window: float
    ) -> dict[int, int | None]:
        """Servo id -> None (the model number is read afterwards) of every servo answering.

        The SDK has no broadcast ping: one is written to the port and every status packet
        heard within ``window`` seconds (until the line has been quiet for 20 ms) is parsed.

        Raises:
            ConfigurationError: two servos answered with one id (their packets collide).
        """
        port.writePort(list(BROADCAST_PING))
        data = bytearray()
        deadline = time.monotonic() + window
        quiet_until = None
        while time.monotonic() < deadline:
            chunk = bytes(port.readPort(256))
            if chunk:
                data += chunk
                quiet_until = time.monotonic() + 0.02
            elif quiet_until is not None and time.monotonic() > quiet_until:
                break
        counts: dict[int, int] = {}
        at = data.find(b"\xff\xff")
        while at >= 0 and at + 6 <= len(data):
            servo_id, length = data[at + 2], data[at + 3]
            packet = data[at + 2 : at + 4 + length]
            if len(packet) == 2 + length and (~sum(packet[:-1])) & 0xFF == packet[-1]:
                counts[servo_id] = counts.get(servo_id, 0) + 1
            at = data.find(b"\xff\xff", at + 2)
        duplicated = [i for i, n in counts.items() if n > 1]
        if duplicated:
            raise ConfigurationError(
                f"two servos answered as id {duplicated[0]} on {port.port_name!r}: connect one "
                "servo at a time to set ids"
            )
        return dict.fromkeys(counts)

    def reboot(self, packets: Any, port: Any, servo_id: int) -> None:
        """The Reboot instruction, sent through the SDK's packet layer (it has no method)."""
        packets.txRxPacket(port, [0, 0, int(servo_id), 2, INST_REBOOT, 0])
