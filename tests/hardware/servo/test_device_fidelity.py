"""What the emulated servos do that clients rely on, seen through the vendors' own SDKs.

Model numbers, homing offsets applied to Present Position (with each vendor's sign and the
wrap at one turn), position limits clamping goals, ID changes, and each vendor's EEPROM rule:
Dynamixel refuses EEPROM writes while torque is on and keeps them across a reboot; a Feetech
STS takes them at any time and keeps them across a power cycle only while Lock is 0.
The shoulder pan (id 1) is used wherever the arm must stay put: its axis is vertical. The
buses run in lockstep: the servos tick only when the test advances them, so no reading
depends on the machine's load.
"""

from __future__ import annotations

import pytest
from servo_helpers import emulated_bus, sdk_port

dxl = pytest.importorskip("dynamixel_sdk")
scs = pytest.importorskip("scservo_sdk")


def feetech_reboot(ph, port, servo_id: int) -> int:
    """Send the STS Reboot instruction (0x08), which the SDK has no call for; the result."""
    packet = [0] * 6
    packet[2], packet[3], packet[4] = servo_id, 2, 0x08  # id, length, instruction
    return ph.txRxPacket(port, packet)[1]


def advance(bus, seconds: float) -> None:
    """Run the lockstep servos ``seconds`` after everything the host has sent."""
    bus.advance(seconds, bus.report().rx_bytes)


def test_dynamixel_model_numbers_homing_limits_and_ids() -> None:
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        assert ph.read2ByteTxRx(port, 1, 0)[:2] == (1060, dxl.COMM_SUCCESS)  # Model Number
        assert ph.read2ByteTxRx(port, 3, 0)[:2] == (1200, dxl.COMM_SUCCESS)
        assert ph.read1ByteTxRx(port, 1, 8)[0] == 3  # Baud Rate: 3 is 1 Mbaud on the X series
        present = ph.read4ByteTxRx(port, 1, 132)[0]
        # Homing Offset (20): Present Position = actual + offset.
        assert ph.write4ByteTxRx(port, 1, 20, 100) == (dxl.COMM_SUCCESS, 0)
        assert abs(ph.read4ByteTxRx(port, 1, 132)[0] - (present + 100)) <= 2
        assert ph.write4ByteTxRx(port, 1, 20, 0) == (dxl.COMM_SUCCESS, 0)
        # Max Position Limit (48) clamps goals in position mode.
        assert ph.write4ByteTxRx(port, 1, 48, present + 60) == (dxl.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, 64, 1) == (dxl.COMM_SUCCESS, 0)
        assert ph.write4ByteTxRx(port, 1, 116, present + 500) == (dxl.COMM_SUCCESS, 0)
        advance(bus, 2.0)
        reached = ph.read4ByteTxRx(port, 1, 132)[0]
        assert abs(reached - (present + 60)) <= 20  # (the pan's friction deadband: ~10 ticks)
        # EEPROM locked while torque is on (Access Error 7); open once torque is off.
        assert ph.write1ByteTxRx(port, 1, 7, 9) == (dxl.COMM_SUCCESS, 7)
        assert ph.write1ByteTxRx(port, 1, 64, 0) == (dxl.COMM_SUCCESS, 0)
        # ID (7): the write is answered by the old id, then the servo answers to the new one.
        assert ph.write1ByteTxRx(port, 1, 7, 9) == (dxl.COMM_SUCCESS, 0)
        assert ph.ping(port, 9)[:2] == (1060, dxl.COMM_SUCCESS)
        assert ph.ping(port, 1)[1] == dxl.COMM_RX_TIMEOUT
        # EEPROM survives a reboot: still id 9, still the limit written above.
        assert ph.reboot(port, 9) == (dxl.COMM_SUCCESS, 0)
        assert ph.ping(port, 9)[:2] == (1060, dxl.COMM_SUCCESS)
        assert ph.read4ByteTxRx(port, 9, 48)[0] == present + 60


def test_feetech_homing_wrap_lock_and_ids() -> None:
    with emulated_bus("so101", lockstep=True) as bus, sdk_port(scs, bus.path) as port:
        ph = scs.PacketHandler(0)
        assert ph.read1ByteTxRx(port, 1, 6)[0] == 0  # Baud Rate: 0 is 1 Mbaud on the STS series
        present = ph.read2ByteTxRx(port, 1, 56)[0]
        # Homing Offset (31, sign-magnitude in bit 11): Present Position = actual - offset.
        assert ph.write2ByteTxRx(port, 1, 31, 100) == (scs.COMM_SUCCESS, 0)
        assert abs(ph.read2ByteTxRx(port, 1, 56)[0] - (present - 100)) <= 2
        # ... wrapped to one turn: turned 10 ticks past 2048, an offset of -2047 reads 10 - 1.
        pose = list(bus.report().position)
        pose[0] += 10 * 2 * 3.141592653589793 / 4096
        bus.move(pose)
        assert ph.write2ByteTxRx(port, 1, 31, 2047 | (1 << 11)) == (scs.COMM_SUCCESS, 0)
        assert abs(ph.read2ByteTxRx(port, 1, 56)[0] - 9) <= 2
        assert ph.write2ByteTxRx(port, 1, 31, 0) == (scs.COMM_SUCCESS, 0)
        present = ph.read2ByteTxRx(port, 1, 56)[0]
        assert abs(present - 2058) <= 2
        negative = 100 | (1 << 11)  # -100
        assert ph.write2ByteTxRx(port, 1, 31, negative) == (scs.COMM_SUCCESS, 0)
        assert abs(ph.read2ByteTxRx(port, 1, 56)[0] - (present + 100)) <= 2
        # EEPROM writes with torque on are taken (no Dynamixel-style lock) ...
        assert ph.write1ByteTxRx(port, 1, 40, 1) == (scs.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, 21, 20) == (scs.COMM_SUCCESS, 0)  # P Coefficient
        assert ph.read1ByteTxRx(port, 1, 21)[0] == 20
        # ... but with Lock (55) at 1, as after power-up, they are lost at the next power cycle.
        assert feetech_reboot(ph, port, 1) == scs.COMM_SUCCESS
        assert ph.read1ByteTxRx(port, 1, 21)[0] == 32
        assert ph.read2ByteTxRx(port, 1, 31)[0] == 0
        # With Lock 0 they persist, the ID among them; the write answers from the old id.
        assert ph.write1ByteTxRx(port, 1, 55, 0) == (scs.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, 21, 20) == (scs.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, 5, 10) == (scs.COMM_SUCCESS, 0)
        assert ph.ping(port, 10)[:2] == (777, scs.COMM_SUCCESS)
        assert ph.ping(port, 1)[1] == scs.COMM_RX_TIMEOUT
        assert feetech_reboot(ph, port, 10) == scs.COMM_SUCCESS
        assert ph.read1ByteTxRx(port, 10, 21)[0] == 20
        # Writes past the table, and to read-only registers, get the instruction error bit.
        assert ph.write1ByteTxRx(port, 10, 56, 1)[1] == 0x40
        assert ph.read1ByteTxRx(port, 10, 85)[1] == scs.COMM_SUCCESS  # Maximum Acceleration


def test_dynamixel_factory_reset_restores_the_eeprom() -> None:
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        assert ph.write4ByteTxRx(port, 2, 48, 3000) == (dxl.COMM_SUCCESS, 0)  # Max Position Limit
        assert ph.reboot(port, 2) == (dxl.COMM_SUCCESS, 0)
        assert ph.read4ByteTxRx(port, 2, 48)[0] == 3000
        assert ph.factoryReset(port, 2, 0x02) == (dxl.COMM_SUCCESS, 0)  # all but id and baud
        assert ph.read4ByteTxRx(port, 2, 48)[0] == 4095
        assert ph.ping(port, 2)[:2] == (1060, dxl.COMM_SUCCESS)
        # 0x01 keeps the id but not the Baud Rate: the servo is back at its factory 57600 bit/s.
        assert ph.factoryReset(port, 2, 0x01) == (dxl.COMM_SUCCESS, 0)
        assert ph.ping(port, 2)[1] == dxl.COMM_RX_TIMEOUT
        port.setBaudRate(57600)
        assert ph.ping(port, 2)[:2] == (1060, dxl.COMM_SUCCESS)
