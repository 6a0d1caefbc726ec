"""The emulated servos' own protection rules, in lockstep, through the vendors' SDKs.

Each rule against its documented behaviour (module docstring of
``jointlab.hardware.servo_emulator.protection`` for the sources):

* Feetech STS3215 (SO-101 gripper closing on a fixed cube): the output above Overload
  Torque (36, 80 %) for Protection Time (35, 200 × 10 ms) sets Status bit 5 and, with bit 5 in
  Unloading Condition (19), releases the torque; without it the output is held to Protective
  Torque (34, 20 %); enabling the torque clears the Status.
* Dynamixel XL330 (Koch gripper): the output held at its maximum sets the Overload Error bit
  of Hardware Error Status (70) and the Alert bit of every status packet; with the bit in
  Shutdown (63) Torque Enable (64) goes to 0 and stays 0 until a reboot.
* A stalled joint heats (copper loss, one thermal mass) and trips its temperature limit at the
  time the model's own equation gives; a brown-out sets the voltage bit, cutting the torque of
  the servos whose Shutdown has it (XL330) and not of the others (XL430, STS3215).

A "fixed cube" is the gripper's travel stopped short: the emulated arm's gripper range ends
where the jaw meets the cube (a hard stop, as the simulator enforces joint limits), while the
host commands the closed position beyond it. Every trip time is measured to 10 ms (the rules'
sampling period) and printed against the documented one.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from servo_helpers import emulated_bus, sdk_port, with_cube

from jointlab import load_robot
from jointlab.hardware.servo_emulator.faults import BusFaults
from jointlab.hardware.servo_emulator.protection import (
    DYNAMIXEL_OVERLOAD_SECONDS,
    PERIOD,
    heating_time,
)

dxl = pytest.importorskip("dynamixel_sdk")
scs = pytest.importorskip("scservo_sdk")

GRIPPER = 6
#: The rules sample every PERIOD firmware ticks (1 kHz): a trip is known to this, s.
SAMPLE = PERIOD / 1000.0
#: Feetech STS addresses (memory table) and Dynamixel X addresses (e-Manual).
STS = {
    "unloading": 19,
    "protective": 34,
    "protection_time": 35,
    "overload_torque": 36,
    "temperature_limit": 13,
    "torque_enable": 40,
    "goal": 42,
    "torque_limit": 48,
    "load": 60,
    "voltage": 62,
    "temperature": 63,
    "status": 65,
}
DXL = {
    "operating_mode": 11,
    "shutdown": 63,
    "torque_enable": 64,
    "error": 70,
    "goal": 116,
    "voltage": 144,
}


def advance(bus, seconds: float) -> None:
    """Run the lockstep servos ``seconds`` after everything the host sent (in short calls, so
    a loaded machine stays within the control pipe's timeout)."""
    rx_bytes = bus.report().rx_bytes
    while seconds > 1e-9:
        chunk = min(seconds, 0.25)
        bus.advance(chunk, rx_bytes)
        seconds -= chunk


def goal_ticks(description, joint: str, q: float) -> int:
    """Goal Position ticks of ``joint`` at ``q`` rad (the file's transmission, no calibration)."""
    j = description.joint_names.index(joint)
    return round(float(description.transmissions.to_motor(np.eye(description.dof)[j] * q)[j]))


def sign_magnitude(value: int, bit: int = 15) -> int:
    return -(value & ((1 << bit) - 1)) if value & (1 << bit) else value


def read1(ph, port, servo_id: int, address: int) -> tuple[int, int]:
    """``(value, error byte)`` of a 1-byte register, retried until a status packet answers.

    Stale input is dropped first: on a loaded machine a status packet may come after the
    SDK's timeout, and must not answer the next read.
    """
    for _ in range(5):
        port.ser.reset_input_buffer()
        value, result, error = ph.read1ByteTxRx(port, servo_id, address)
        if result == 0:
            return value, error
        time.sleep(0.05)
    raise AssertionError(f"servo {servo_id} did not answer a read of {address}")


def first_time(bus, check, start: float, stop: float) -> float:
    """Advance to ``start`` s, then in SAMPLE steps until ``check()``; the time it first holds."""
    advance(bus, start)
    t = start
    while t < stop:
        if check():
            return t
        advance(bus, SAMPLE)
        t += SAMPLE
    raise AssertionError(f"the rule had not tripped after {stop} s")


def test_feetech_overload_releases_the_gripper_after_protection_time() -> None:
    """SO-101 gripper on a cube: Status bit 5 and the torque released at 2.00 s, not before."""
    cube, _, pose, closed_q = with_cube("so101")
    with emulated_bus(cube, lockstep=True) as bus, sdk_port(scs, bus.path) as port:
        ph = scs.PacketHandler(0)
        bus.move(pose)  # the jaw resting on the cube
        assert ph.write1ByteTxRx(port, GRIPPER, STS["torque_enable"], 1) == (0, 0)
        closed = goal_ticks(load_robot("so101"), "gripper", closed_q)
        assert ph.write2ByteTxRx(port, GRIPPER, STS["goal"], closed) == (0, 0)
        advance(bus, 0.05)  # squeezing: Present Load at the full torque, above 80 %
        assert abs(sign_magnitude(ph.read2ByteTxRx(port, GRIPPER, STS["load"])[0], 10)) > 800

        def released() -> bool:
            return bool(read1(ph, port, GRIPPER, STS["status"])[0] & 0x20)

        tripped = first_time(bus, released, 1.9, 2.2) + 0.05
        print(
            f"Feetech overload: tripped after {tripped:.2f} s, documented 2.00 s "
            "(Protection Time 200 x 10 ms)"
        )
        assert abs(tripped - 2.0) <= 2 * SAMPLE + 1e-9
        assert read1(ph, port, GRIPPER, STS["status"])[1] & 0x20  # every status packet

        assert read1(ph, port, GRIPPER, STS["torque_enable"])[0] == 0  # limp
        advance(bus, 0.05)
        assert abs(sign_magnitude(ph.read2ByteTxRx(port, GRIPPER, STS["load"])[0], 10)) < 20
        # Torque Enable clears the Status; squeezing the cube again trips again
        assert ph.write1ByteTxRx(port, GRIPPER, STS["torque_enable"], 1)[1] == 0
        assert read1(ph, port, GRIPPER, STS["status"])[0] == 0
        assert ph.write2ByteTxRx(port, GRIPPER, STS["goal"], closed) == (0, 0)
        again = first_time(bus, released, 1.9, 2.2)
        assert abs(again - 2.0) <= 2 * SAMPLE + 1e-9


def test_feetech_overload_holds_protective_torque_when_it_does_not_unload() -> None:
    """Bit 5 out of Unloading Condition: the servo keeps its torque, at Protective Torque."""
    cube, _, pose, closed_q = with_cube("so101")
    with emulated_bus(cube, lockstep=True) as bus, sdk_port(scs, bus.path) as port:
        ph = scs.PacketHandler(0)
        bus.move(pose)
        assert ph.write1ByteTxRx(port, GRIPPER, STS["unloading"], 44 & ~0x20) == (0, 0)
        assert ph.write1ByteTxRx(port, GRIPPER, STS["protection_time"], 50) == (0, 0)  # 0.5 s
        assert ph.write1ByteTxRx(port, GRIPPER, STS["torque_enable"], 1) == (0, 0)
        closed = goal_ticks(load_robot("so101"), "gripper", closed_q)
        assert ph.write2ByteTxRx(port, GRIPPER, STS["goal"], closed) == (0, 0)
        advance(bus, 0.6)
        status, error = read1(ph, port, GRIPPER, STS["status"])
        assert status & 0x20 and error & 0x20
        assert read1(ph, port, GRIPPER, STS["torque_enable"])[0] == 1
        load = abs(sign_magnitude(ph.read2ByteTxRx(port, GRIPPER, STS["load"])[0], 10))
        assert 150 <= load <= 200  # 0.1 % units: held to Protective Torque, 20 %


def _dxl_gripper_on_cube(bus, ph, port, pose, closed_q) -> None:
    bus.move(pose)
    assert ph.write1ByteTxRx(port, GRIPPER, DXL["operating_mode"], 3) == (0, 0)  # position
    assert ph.write1ByteTxRx(port, GRIPPER, DXL["torque_enable"], 1) == (0, 0)
    closed = goal_ticks(load_robot("koch"), "gripper", closed_q)
    assert ph.write4ByteTxRx(port, GRIPPER, DXL["goal"], closed & 0xFFFFFFFF) == (0, 0)


def test_dynamixel_overload_shuts_down_until_a_reboot() -> None:
    """Koch XL330 gripper on a cube: Overload Error, Alert, torque off; only a reboot clears."""
    cube, _, pose, closed_q = with_cube("koch")
    with emulated_bus(cube, lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        _dxl_gripper_on_cube(bus, ph, port, pose, closed_q)

        def overloaded() -> bool:
            return bool(read1(ph, port, GRIPPER, DXL["error"])[0] & 0x20)

        tripped = first_time(
            bus, overloaded, DYNAMIXEL_OVERLOAD_SECONDS - 0.05, DYNAMIXEL_OVERLOAD_SECONDS + 0.2
        )
        print(
            f"Dynamixel overload: tripped after {tripped:.2f} s at the PWM Limit "
            f"(this model's {DYNAMIXEL_OVERLOAD_SECONDS} s; the e-Manual gives no time)"
        )
        assert abs(tripped - DYNAMIXEL_OVERLOAD_SECONDS) <= 2 * SAMPLE + 1e-9
        value, error = read1(ph, port, GRIPPER, DXL["torque_enable"])
        assert value == 0 and error & 0x80  # Shutdown 53 has bit 5: torque off; Alert bit
        ph.write1ByteTxRx(port, GRIPPER, DXL["torque_enable"], 1)
        advance(bus, 0.05)
        assert read1(ph, port, GRIPPER, DXL["torque_enable"])[0] == 0  # no, not yet
        assert ph.reboot(port, GRIPPER)[0] == dxl.COMM_SUCCESS
        advance(bus, 0.05)
        value, error = read1(ph, port, GRIPPER, DXL["error"])
        assert value == 0 and error == 0
        assert ph.write1ByteTxRx(port, GRIPPER, DXL["torque_enable"], 1) == (0, 0)
        assert read1(ph, port, GRIPPER, DXL["torque_enable"])[0] == 1


def test_dynamixel_shutdown_decides_which_bits_cut_the_torque() -> None:
    """Overload out of Shutdown (63): the bit and the Alert are set, the torque stays on."""
    cube, _, pose, closed_q = with_cube("koch")
    with emulated_bus(cube, lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        assert ph.write1ByteTxRx(port, GRIPPER, DXL["shutdown"], 0x15) == (0, 0)  # no bit 5
        _dxl_gripper_on_cube(bus, ph, port, pose, closed_q)
        advance(bus, DYNAMIXEL_OVERLOAD_SECONDS + 0.05)
        value, error = read1(ph, port, GRIPPER, DXL["error"])
        assert value == 0x20 and error & 0x80
        assert read1(ph, port, GRIPPER, DXL["torque_enable"])[0] == 1


def test_a_stalled_joint_heats_and_trips_over_temperature() -> None:
    """SO-101 gripper pushing at 70 % (below Overload Torque): the winding heats to the limit.

    The trip time is the model's: ``heating_time(I²R, limit + 1)``, with I = 70 % of the
    STS3215's stall current and R = 12 V / 2.7 A. Temperature Limit (13) is set to 30 °C so
    the test takes seconds; the rule is "Present Temperature above the limit". (The default
    limit: the next test.)
    """
    cube, _, pose, closed_q = with_cube("so101")
    model = load_robot("so101")
    with emulated_bus(cube, lockstep=True) as bus, sdk_port(scs, bus.path) as port:
        ph = scs.PacketHandler(0)
        bus.move(pose)
        assert ph.write1ByteTxRx(port, GRIPPER, STS["temperature_limit"], 30) == (0, 0)
        assert ph.write2ByteTxRx(port, GRIPPER, STS["torque_limit"], 700) == (0, 0)
        assert ph.write1ByteTxRx(port, GRIPPER, STS["torque_enable"], 1) == (0, 0)
        closed = goal_ticks(model, "gripper", closed_q)
        assert ph.write2ByteTxRx(port, GRIPPER, STS["goal"], closed) == (0, 0)
        assert read1(ph, port, GRIPPER, STS["temperature"])[0] == 25

        def hot() -> bool:
            return bool(read1(ph, port, GRIPPER, STS["status"])[0] & 0x04)

        current = 0.7 * 2.7
        expected = heating_time(current**2 * 12.0 / 2.7, 31.0)
        tripped = first_time(bus, hot, expected - 0.3, expected + 0.3)
        print(
            f"over-temperature: tripped after {tripped:.2f} s, the model's equation gives "
            f"{expected:.2f} s (70 % stall, limit 30 C)"
        )
        assert abs(tripped - expected) <= 2 * SAMPLE
        assert read1(ph, port, GRIPPER, STS["temperature"])[0] == 31
        assert read1(ph, port, GRIPPER, STS["torque_enable"])[0] == 0  # bit 2 unloads
        status = read1(ph, port, GRIPPER, STS["status"])[0]
        assert status & 0x20 == 0  # 70 % never started the overload timer


@pytest.mark.slow
def test_a_stall_in_a_warm_enclosure_trips_the_default_temperature_limit() -> None:
    """The same stall at 79 % (just under Overload Torque), every register at its default
    (Max Temperature Limit 70 °C), the servos in 50 °C air (``ambient=50``): the winding
    reaches 71 °C when the model's equation says, some 30 s of servo time.
    """
    cube, _, pose, closed_q = with_cube("so101")
    model = load_robot("so101")
    with emulated_bus(cube, lockstep=True, ambient=50.0) as bus, sdk_port(scs, bus.path) as port:
        ph = scs.PacketHandler(0)
        bus.move(pose)
        assert read1(ph, port, GRIPPER, STS["temperature_limit"])[0] == 70
        assert ph.write2ByteTxRx(port, GRIPPER, STS["torque_limit"], 790) == (0, 0)
        assert ph.write1ByteTxRx(port, GRIPPER, STS["torque_enable"], 1) == (0, 0)
        assert ph.write2ByteTxRx(
            port, GRIPPER, STS["goal"], goal_ticks(model, "gripper", closed_q)
        ) == (0, 0)
        assert read1(ph, port, GRIPPER, STS["temperature"])[0] == 50

        def hot() -> bool:
            return bool(read1(ph, port, GRIPPER, STS["status"])[0] & 0x04)

        expected = heating_time((0.79 * 2.7) ** 2 * 12.0 / 2.7, 71.0, ambient=50.0)
        tripped = first_time(bus, hot, expected - 0.3, expected + 0.3)
        print(
            f"over-temperature at the default limit: tripped after {tripped:.2f} s, the "
            f"model's equation gives {expected:.2f} s (79 % stall, 50 C air, limit 70 C)"
        )
        assert abs(tripped - expected) <= 2 * SAMPLE
        assert read1(ph, port, GRIPPER, STS["temperature"])[0] == 71
        assert read1(ph, port, GRIPPER, STS["status"])[0] & 0x20 == 0  # never overloaded


@pytest.mark.parametrize("name", ["so101", "koch"])
def test_a_brownout_sets_the_voltage_bit(name: str) -> None:
    """The supply sags to 3 V for 0.3 s: every servo's voltage bit; torque cut per its mask.

    SO-101: Unloading Condition 44 lacks bit 0, every servo keeps its torque. Koch: the
    XL330s' Shutdown (53) has bit 0, the XL430s' (52) does not.
    """
    faults = BusFaults(brownout=(0.2, 0.3, 3.0))
    feetech = name == "so101"
    with (
        emulated_bus(name, lockstep=True, faults=faults) as bus,
        sdk_port(scs if feetech else dxl, bus.path) as port,
    ):
        ph = scs.PacketHandler(0) if feetech else dxl.PacketHandler(2.0)
        te, volts = (
            (STS["torque_enable"], STS["voltage"])
            if feetech
            else (DXL["torque_enable"], DXL["voltage"])
        )
        bus.move(np.zeros(6))
        for servo in range(1, 7):
            assert ph.write1ByteTxRx(port, servo, te, 1)[1] == 0
        advance(bus, 0.1)
        read_volts = ph.read1ByteTxRx if feetech else ph.read2ByteTxRx
        assert read_volts(port, 1, volts)[0] >= (110 if feetech else 100)
        advance(bus, 0.2)  # in the brown-out
        assert read_volts(port, 1, volts)[0] == 30
        advance(bus, 0.3)
        for servo in range(1, 7):
            if feetech:
                status, error = read1(ph, port, servo, STS["status"])
                assert status & 0x01 and error & 0x01
            else:
                status, error = read1(ph, port, servo, DXL["error"])
                assert status & 0x01 and error & 0x80
            cut = not feetech and servo >= 3  # the XL330s
            assert read1(ph, port, servo, te)[0] == (0 if cut else 1), servo


def test_a_power_cut_reboots_every_servo() -> None:
    """Silent while the power is off; afterwards torque off, RAM reset, the EEPROM kept."""
    with (
        emulated_bus("so101", lockstep=True, faults=BusFaults(power_cut=(0.2, 0.2))) as bus,
        sdk_port(scs, bus.path) as port,
    ):
        ph = scs.PacketHandler(0)
        bus.move(np.zeros(6))
        assert ph.write1ByteTxRx(port, 1, 55, 0) == (0, 0)  # Lock 0: EEPROM writes persist
        assert ph.write1ByteTxRx(port, 1, STS["temperature_limit"], 60) == (0, 0)  # EEPROM
        assert ph.write2ByteTxRx(port, 1, STS["torque_limit"], 500) == (0, 0)  # RAM
        assert ph.write1ByteTxRx(port, 1, STS["torque_enable"], 1) == (0, 0)
        advance(bus, 0.3)
        assert ph.ping(port, 1)[1] != scs.COMM_SUCCESS  # nobody home
        advance(bus, 0.2)
        assert ph.ping(port, 1)[1] == scs.COMM_SUCCESS
        assert read1(ph, port, 1, STS["torque_enable"])[0] == 0
        assert ph.read2ByteTxRx(port, 1, STS["torque_limit"])[0] == 1000
        assert read1(ph, port, 1, STS["temperature_limit"])[0] == 60
        assert bus.report().unheard > 0


def test_an_unplugged_cable_silences_the_bus_for_its_time() -> None:
    with (
        emulated_bus(
            "koch", lockstep=True, faults=BusFaults(unplugged=(0.1, 0.2), delay_status=0.004)
        ) as bus,
        sdk_port(dxl, bus.path) as port,
    ):
        ph = dxl.PacketHandler(2.0)
        assert ph.write1ByteTxRx(port, 1, DXL["torque_enable"], 1) == (0, 0)
        wire = bus.report().wire_seconds
        assert ph.ping(port, 2)[1] == dxl.COMM_SUCCESS
        assert bus.report().wire_seconds - wire >= 0.004  # the late status packet
        advance(bus, 0.15)
        assert ph.ping(port, 2)[1] != dxl.COMM_SUCCESS
        advance(bus, 0.2)
        assert ph.ping(port, 2)[1] == dxl.COMM_SUCCESS
        assert read1(ph, port, 1, DXL["torque_enable"])[0] == 1  # it kept running


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("brownout=1:2", "brownout"),
        ("brownout=1:2:500", "brownout"),
        ("drop_status=1.5", "drop_status"),
        ("drop_status=9:0.5", "drop_status"),
        ("delay_ms=5000", "delay_ms"),
        ("unplug=-1:2", "unplug"),
        ("power_cut=1:x", "power_cut"),
        ("supply=30", "supply"),
        ("supply_ohm=-1", "supply_ohm"),
        ("brown_out=1:2:3", "brown_out"),
        ("ambient=hot", "ambient"),
        ("ambient=-40", "ambient"),
        ("ambient=71", "ambient"),
    ],
)
def test_fault_url_keys_are_checked_before_the_bus_starts(query: str, named: str) -> None:
    import jointlab
    from jointlab.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=named):
        jointlab.connect(f"emulated://so101?lockstep=1&{query}")


def test_supply_outside_the_servos_rating_names_the_model() -> None:
    import jointlab
    from jointlab.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"xl330-m\d+'s rated input range 3.5-7 V"):
        jointlab.connect("emulated://koch?lockstep=1&supply=12")
    assert math.isinf(heating_time(1.0, 80.0))  # 3.7 K of rise never reaches 80 C


def test_an_ambient_a_servo_would_fault_in_names_the_model_and_its_limit() -> None:
    import jointlab
    from jointlab.errors import ConfigurationError

    with pytest.raises(
        ConfigurationError, match=r"'ambient'.*sts3215's Temperature Limit \(70 C\)"
    ):
        jointlab.connect("emulated://so101?lockstep=1&ambient=75")
