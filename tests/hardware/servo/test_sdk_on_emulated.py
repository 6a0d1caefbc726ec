"""The vendors' SDKs, driven directly, use the emulated servos at the documented addresses."""

from __future__ import annotations

import time

import pytest
from servo_helpers import emulated_bus, sdk_port, wait_servo_time

dxl = pytest.importorskip("dynamixel_sdk")
scs = pytest.importorskip("scservo_sdk")


def wait_until(check, seconds: float = 10.0) -> bool:
    """Poll ``check`` until it holds. A poll lost to a loaded machine is tried again: the SDKs
    index a late (stale) status packet without checking it, and may raise on one."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return True
        except IndexError:
            time.sleep(0.05)
        time.sleep(0.02)
    return False


def test_dynamixel_sdk_on_an_emulated_koch() -> None:
    with emulated_bus("koch") as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        assert ph.ping(port, 1)[:2] == (1060, dxl.COMM_SUCCESS)  # XL430-W250
        assert ph.ping(port, 3)[:2] == (1200, dxl.COMM_SUCCESS)  # XL330-M288
        assert ph.ping(port, 9)[1] == dxl.COMM_RX_TIMEOUT  # nobody has id 9
        found, result = ph.broadcastPing(port)
        assert result == dxl.COMM_SUCCESS and sorted(found) == [1, 2, 3, 4, 5, 6]
        assert ph.read1ByteTxRx(port, 1, 11)[0] == 3  # Operating Mode: position
        assert ph.read1ByteTxRx(port, 3, 11)[0] == 0  # current, as the robot file sets it up
        # EEPROM is locked while the torque is on: Access Error (7).
        assert ph.write1ByteTxRx(port, 1, 64, 1) == (dxl.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, 11, 1) == (dxl.COMM_SUCCESS, 7)
        # Sync Write of Goal Position (116), then Sync Read of Present Position (132).
        write = dxl.GroupSyncWrite(port, ph, 116, 4)
        assert write.addParam(1, list((2048 + 300).to_bytes(4, "little")))
        assert write.txPacket() == dxl.COMM_SUCCESS
        read = dxl.GroupSyncRead(port, ph, 132, 4)
        for servo_id in range(1, 7):
            read.addParam(servo_id)

        def pan_arrived() -> bool:  # (a read lost to a loaded machine is tried again)
            # (the limp arm rests on the table: dragging it at the documented contact friction
            # of 1 leaves the pan about 45 ticks short; 20 at the 0.5 links had before)
            done = read.txRxPacket() == dxl.COMM_SUCCESS
            return done and abs(read.getData(1, 132, 4) - 2348) < 60

        assert wait_until(pan_arrived)
        # Bulk Write: goal current on an XL330 (102) with a goal position (116) in one packet.
        assert ph.write1ByteTxRx(port, 3, 64, 1)[0] == dxl.COMM_SUCCESS
        bulk = dxl.GroupBulkWrite(port, ph)
        bulk.addParam(1, 116, 4, list((2048).to_bytes(4, "little")))
        bulk.addParam(3, 102, 2, list((120).to_bytes(2, "little")))
        assert bulk.txPacket() == dxl.COMM_SUCCESS
        assert wait_until(lambda: ph.read2ByteTxRx(port, 3, 126)[0] == 120)  # Present Current, mA
        # Bus Watchdog (98): silence stops the servo and flags -1; goals are then refused.
        assert ph.write1ByteTxRx(port, 1, 98, 2)[0] == dxl.COMM_SUCCESS  # 40 ms
        wait_servo_time(bus, 0.3)  # silence on the bus, then a read (which is not a goal)
        assert ph.read1ByteTxRx(port, 1, 98)[0] == 0xFF
        assert ph.write4ByteTxRx(port, 1, 116, 1000)[1] == 4  # Data Range Error
        # Reboot clears it all: torque off, watchdog 0.
        bus.inject(2, 0x20)  # an overload on servo 2: the Alert bit in every status packet
        assert ph.read1ByteTxRx(port, 2, 70) == (0x20, dxl.COMM_SUCCESS, 0x80)
        for servo_id in (1, 2):
            assert ph.reboot(port, servo_id) == (dxl.COMM_SUCCESS, 0)
        assert ph.read1ByteTxRx(port, 1, 98)[0] == 0 and ph.read1ByteTxRx(port, 1, 64)[0] == 0
        assert ph.read1ByteTxRx(port, 2, 70) == (0, dxl.COMM_SUCCESS, 0)
        assert bus.report().instructions > 20


def test_feetech_sdk_on_an_emulated_so101() -> None:
    with emulated_bus("so101") as bus, sdk_port(scs, bus.path) as port:
        ph = scs.PacketHandler(0)
        assert ph.ping(port, 1)[:2] == (777, scs.COMM_SUCCESS)  # STS3215
        assert ph.ping(port, 9)[1] == scs.COMM_RX_TIMEOUT
        assert ph.read1ByteTxRx(port, 1, 33)[0] == 0  # Operating Mode: position
        assert ph.read2ByteTxRx(port, 1, 56)[0] == 2048  # Present Position, home of the pan
        assert ph.write1ByteTxRx(port, 1, 40, 1) == (scs.COMM_SUCCESS, 0)  # Torque Enable
        write = scs.GroupSyncWrite(port, ph, 42, 2)  # Goal Position
        assert write.addParam(1, [0x00, 0x0A])  # 2560
        assert write.txPacket() == scs.COMM_SUCCESS
        read = scs.GroupSyncRead(port, ph, 56, 15)  # Present Position .. Present Current
        for servo_id in range(1, 7):
            read.addParam(servo_id)

        def arrived() -> bool:
            return read.txRxPacket() == scs.COMM_SUCCESS and abs(read.getData(1, 56, 2) - 2560) < 40

        assert wait_until(arrived)
        assert read.getData(2, 62, 1) == 120  # Present Voltage: 12.0 V
        # Negative speeds are sign-magnitude (bit 15), as the SDK's SCS_TOHOST decodes them.
        assert ph.write2ByteTxRx(port, 1, 42, 1536)[0] == scs.COMM_SUCCESS
        speeds = []

        def moving_back() -> bool:
            speeds.append(ph.read2ByteTxRx(port, 1, 58)[0])
            return bool(speeds[-1] & 0x8000)

        assert wait_until(moving_back)
        assert scs.SCS_TOHOST(speeds[-1], 15) < 0
        # A hardware error rides in every status packet's error byte until torque is re-enabled.
        bus.inject(3, 0x20)
        assert ph.read1ByteTxRx(port, 3, 65)[2] == 0x20
        assert ph.write1ByteTxRx(port, 3, 40, 1) == (scs.COMM_SUCCESS, 0)  # cleared
        assert ph.read1ByteTxRx(port, 3, 65) == (0, scs.COMM_SUCCESS, 0)
