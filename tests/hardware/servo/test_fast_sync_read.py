"""Fast Sync Read (Protocol 2.0 instruction 0x8A), answered as the e-Manual specifies and read
by the Dynamixel SDK's own ``GroupSyncRead.fastSyncRead``.

One status packet for all servos (broadcast id, instruction 0x55), each servo's block being its
error, id, data and a CRC-16 of the packet so far; the last block's CRC is the packet's. The bus
runs in lockstep, so a Fast Sync Read and a Sync Read of the same instant read the same data.
"""

from __future__ import annotations

import pytest
from servo_helpers import emulated_bus, sdk_port

dxl = pytest.importorskip("dynamixel_sdk")
if not hasattr(dxl.GroupSyncRead, "fastSyncRead"):  # dynamixel-sdk < 3.8
    pytest.skip("this dynamixel_sdk has no GroupSyncRead.fastSyncRead", allow_module_level=True)

IDS = [1, 2, 3, 4, 5, 6]


def test_fast_sync_read_matches_sync_read_through_the_sdk() -> None:
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        slow, fast = dxl.GroupSyncRead(port, ph, 132, 4), dxl.GroupSyncRead(port, ph, 132, 4)
        for servo_id in IDS:
            assert slow.addParam(servo_id) and fast.addParam(servo_id)
        assert slow.txRxPacket() == dxl.COMM_SUCCESS
        assert fast.fastSyncRead() == dxl.COMM_SUCCESS
        for servo_id in IDS:
            assert fast.isAvailable(servo_id, 132, 4)
            assert fast.getData(servo_id, 132, 4) == slow.getData(servo_id, 132, 4)
        # Two registers at once: Present Velocity and Present Position (128, 8 bytes)
        both = dxl.GroupSyncRead(port, ph, 128, 8)
        for servo_id in (3, 1):  # in the host's order, whatever the ids
            both.addParam(servo_id)
        assert both.fastSyncRead() == dxl.COMM_SUCCESS
        assert both.getData(1, 132, 4) == slow.getData(1, 132, 4)
        assert both.getData(3, 132, 4) == slow.getData(3, 132, 4)


def test_the_combined_status_packet_byte_by_byte() -> None:
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        bus.inject(2, 0x20)  # an overload on servo 2: the Alert bit in its block only
        param = [1, 2, 3]
        assert ph.syncReadTx(port, 7, 1, param, len(param), True) == dxl.COMM_SUCCESS
        packet, result = ph.rxPacket(port, True)
        assert result == dxl.COMM_SUCCESS
        # header, broadcast id, length = 1 + 3 · (4 + 1), instruction 0x55
        assert packet[:8] == [0xFF, 0xFF, 0xFD, 0x00, 0xFE, 16, 0, 0x55]
        blocks = [packet[8 + 5 * i : 8 + 5 * (i + 1)] for i in range(3)]
        # error, id, data (the ID register, 7: each servo's own id), CRC of the packet so far
        assert [b[:3] for b in blocks] == [[0x00, 1, 1], [0x80, 2, 2], [0x00, 3, 3]]
        for i, block in enumerate(blocks):
            end = 8 + 5 * i + 3
            crc = ph.updateCRC(0, packet[:end], end)
            assert block[3:] == [crc & 0xFF, crc >> 8]
        assert len(packet) == 8 + 15


def test_a_missing_servo_ends_the_chain() -> None:
    """Nobody has id 9: servo 2, listed after it, never gets its turn; the packet carries
    servo 1's block only. (The SDK's ``fastSyncRead`` indexes past the end of such a short
    packet and raises IndexError, so the packet is read raw.)"""
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        assert ph.syncReadTx(port, 132, 4, [1, 9, 2], 3, True) == dxl.COMM_SUCCESS
        packet, result = ph.rxPacket(port, True)
        assert result == dxl.COMM_SUCCESS
        assert packet[5] | packet[6] << 8 == 1 + 4 + 4 and packet[9] == 1
        assert len(packet) == 8 + 8
        assert bus.report().replies == 1
