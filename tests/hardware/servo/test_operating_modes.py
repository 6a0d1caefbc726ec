"""Operating modes and motion profiles, commanded through the vendors' SDKs on lockstep buses.

Dynamixel (e-Manual, X series): velocity mode (1) with Profile Acceleration ramping the
velocity trajectory, PWM mode (16), and position moves shaped by Profile Velocity and Profile
Acceleration (a trapezoid; a triangle when the move is short). Feetech STS: wheel mode (1,
Goal Speed) and position moves limited by Goal Speed and Acceleration. The shoulder pan (id 1)
is used throughout: its axis is vertical, so gravity does not load it; the other servos hold the
arm up at its zero pose, off the table (a limp arm lying on the table would drag). The buses
run in lockstep, so every figure is exact from run to run.
"""

from __future__ import annotations

import math

import pytest
from servo_helpers import emulated_bus, sdk_port

from jointlab import load_robot

dxl = pytest.importorskip("dynamixel_sdk")
scs = pytest.importorskip("scservo_sdk")

#: X series: rev/min per Goal Velocity count, rev/min² per Profile Acceleration count.
RPM, RPM2 = 0.229, 214.577


def advance(bus, seconds: float) -> None:
    """Run the lockstep servos ``seconds`` after everything the host has sent."""
    bus.advance(seconds, bus.report().rx_bytes)


def signed32(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


def signed16(value: int) -> int:
    return value - (1 << 16) if value >= 1 << 15 else value


def sign_magnitude(value: int, bit: int = 15) -> int:
    return -(value & ((1 << bit) - 1)) if value & (1 << bit) else value


def hold_arm_up(bus, ph, port, torque_enable: int) -> None:
    """Put the arm at its zero pose and let servos 2.. hold it there (position mode).

    ``torque_enable``: the Torque Enable address (64 on Dynamixel, 40 on Feetech).
    """
    bus.move([0.0] * 6)
    for servo_id in range(2, 7):
        if torque_enable == 64:  # Dynamixel: the Koch's XL330s are set up in current mode
            assert ph.write1ByteTxRx(port, servo_id, 11, 3) == (0, 0)
        assert ph.write1ByteTxRx(port, servo_id, torque_enable, 1) == (0, 0)
    advance(bus, 0.3)


def dxl_mode(ph, port, servo_id: int, mode: int) -> None:
    """Torque off, Operating Mode ``mode``, torque on (the EEPROM is locked while on)."""
    assert ph.write1ByteTxRx(port, servo_id, 64, 0) == (dxl.COMM_SUCCESS, 0)
    assert ph.write1ByteTxRx(port, servo_id, 11, mode) == (dxl.COMM_SUCCESS, 0)
    assert ph.write1ByteTxRx(port, servo_id, 64, 1) == (dxl.COMM_SUCCESS, 0)


def test_dynamixel_velocity_mode_ramps_at_the_profile_acceleration() -> None:
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        hold_arm_up(bus, ph, port, 64)
        dxl_mode(ph, port, 1, 1)
        assert ph.write4ByteTxRx(port, 1, 108, 10) == (dxl.COMM_SUCCESS, 0)  # 2145.77 rev/min²
        assert ph.write4ByteTxRx(port, 1, 104, 30) == (dxl.COMM_SUCCESS, 0)  # 6.87 rev/min
        advance(bus, 0.1)
        # the velocity trajectory (136) ramps at 10 · 214.577 rev/min²: 0.1 s of it is
        # 3.58 rev/min, 15.6 counts of 0.229 rev/min
        expected = 0.1 * 10 * RPM2 / 60.0 / RPM
        assert abs(signed32(ph.read4ByteTxRx(port, 1, 136)[0]) - expected) <= 1.0
        advance(bus, 0.9)
        assert signed32(ph.read4ByteTxRx(port, 1, 136)[0]) == 30
        speeds = []
        for _ in range(30):  # 1.5 s: the pan turns about 1 rad of its ±2.9
            advance(bus, 0.05)
            speeds.append(signed32(ph.read4ByteTxRx(port, 1, 128)[0]))
        # the velocity PI loop holds the goal on average (its integral), swinging a little
        # with the arm's inertia about the vertical axis
        assert abs(sum(speeds) / len(speeds) - 30) <= 1.5, str(speeds)
        assert all(abs(v - 30) <= 6 for v in speeds), str(speeds)
        # and backwards
        assert ph.write4ByteTxRx(port, 1, 104, -30 & 0xFFFFFFFF) == (dxl.COMM_SUCCESS, 0)
        advance(bus, 1.5)
        assert abs(signed32(ph.read4ByteTxRx(port, 1, 128)[0]) + 30) <= 6
        # without a profile acceleration the trajectory steps to the goal at once
        assert ph.write4ByteTxRx(port, 1, 108, 0) == (dxl.COMM_SUCCESS, 0)
        assert ph.write4ByteTxRx(port, 1, 104, 40) == (dxl.COMM_SUCCESS, 0)
        advance(bus, 0.002)
        assert signed32(ph.read4ByteTxRx(port, 1, 136)[0]) == 40


def test_dynamixel_pwm_mode_drives_the_goal_duty() -> None:
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        hold_arm_up(bus, ph, port, 64)
        dxl_mode(ph, port, 1, 16)
        start = signed32(ph.read4ByteTxRx(port, 1, 132)[0])
        assert ph.write2ByteTxRx(port, 1, 100, 150) == (dxl.COMM_SUCCESS, 0)  # 17 % duty
        advance(bus, 0.3)
        assert signed16(ph.read2ByteTxRx(port, 1, 124)[0]) == 150  # Present PWM
        assert signed32(ph.read4ByteTxRx(port, 1, 128)[0]) > 5  # turning forwards
        assert signed32(ph.read4ByteTxRx(port, 1, 132)[0]) > start + 20
        # PWM Limit (36) caps the duty: torque off, limit 100, torque on
        assert ph.write1ByteTxRx(port, 1, 64, 0) == (dxl.COMM_SUCCESS, 0)
        assert ph.write2ByteTxRx(port, 1, 36, 100) == (dxl.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, 64, 1) == (dxl.COMM_SUCCESS, 0)
        assert ph.write2ByteTxRx(port, 1, 100, (-150) & 0xFFFF) == (dxl.COMM_SUCCESS, 0)
        advance(bus, 0.05)
        assert signed16(ph.read2ByteTxRx(port, 1, 124)[0]) == -100


def test_dynamixel_goal_current_and_pwm_power_up_at_their_limits() -> None:
    """Goal Current (102) and Goal PWM (100) read Current Limit (38) and PWM Limit (36).

    So a servo in current-based position mode (5) whose Goal Current was never written drives
    up to its Current Limit, as LeRobot's Koch follower expects of its gripper (it writes
    mode 5 and Goal Position only); at 0 A the gripper was limp and stayed 12° from its goal.
    """
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        assert ph.read2ByteTxRx(port, 6, 38)[0] == ph.read2ByteTxRx(port, 6, 102)[0] == 1750
        assert ph.read2ByteTxRx(port, 6, 36)[0] == ph.read2ByteTxRx(port, 6, 100)[0] == 885
        hold_arm_up(bus, ph, port, 64)
        dxl_mode(ph, port, 5, 5)  # the wrist roll: gravity does not load it with the arm up
        start = signed32(ph.read4ByteTxRx(port, 5, 132)[0])
        assert ph.write4ByteTxRx(port, 5, 116, start + 300) == (dxl.COMM_SUCCESS, 0)
        advance(bus, 1.0)
        assert abs(signed32(ph.read4ByteTxRx(port, 5, 132)[0]) - (start + 300)) <= 10
        # Goal Current caps the current in mode 5: 20 mA cannot turn the wrist at all
        assert ph.write2ByteTxRx(port, 5, 102, 20) == (dxl.COMM_SUCCESS, 0)
        assert ph.write4ByteTxRx(port, 5, 116, start - 300) == (dxl.COMM_SUCCESS, 0)
        advance(bus, 1.0)
        assert abs(signed32(ph.read4ByteTxRx(port, 5, 132)[0]) - (start + 300)) <= 10


def profile_move(ph, port, bus, goal: int, seconds: float) -> tuple[list[int], list[int]]:
    """Velocity trajectory (136) and Present Velocity (128) every 10 ms of a move to ``goal``."""
    assert ph.write4ByteTxRx(port, 1, 116, goal) == (dxl.COMM_SUCCESS, 0)
    trajectory, present = [], []
    for _ in range(round(seconds / 0.01)):
        advance(bus, 0.01)
        trajectory.append(signed32(ph.read4ByteTxRx(port, 1, 136)[0]))
        present.append(signed32(ph.read4ByteTxRx(port, 1, 128)[0]))
    return trajectory, present


def test_dynamixel_profile_velocity_and_acceleration_shape_a_position_move() -> None:
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        hold_arm_up(bus, ph, port, 64)
        dxl_mode(ph, port, 1, 3)
        start = signed32(ph.read4ByteTxRx(port, 1, 132)[0])
        assert ph.write4ByteTxRx(port, 1, 112, 40) == (dxl.COMM_SUCCESS, 0)  # 9.16 rev/min
        assert ph.write4ByteTxRx(port, 1, 108, 20) == (dxl.COMM_SUCCESS, 0)  # 4291.5 rev/min²
        trajectory, present = profile_move(ph, port, bus, start + 800, 1.6)
        advance(bus, 0.4)
        # a trapezoid: the ramp up at the acceleration, a plateau at Profile Velocity, the ramp
        # down; never above Profile Velocity
        assert max(trajectory) == 40 and min(trajectory) >= 0
        ramp = 40 * RPM / (20 * RPM2 / 60.0)  # s to reach it: 0.128 s
        assert trajectory[int(ramp / 0.01) - 3] < 40 and trajectory[int(ramp / 0.01) + 2] == 40
        assert trajectory.count(40) >= 40  # the plateau: 800 ticks at 9.16 rev/min ≈ 1.3 s
        assert trajectory[-1] == 0  # arrived: the trajectory is cleared
        assert ph.read4ByteTxRx(port, 1, 140)[0] == start + 800  # Position Trajectory
        assert max(present) <= 40 * 1.25  # the servo tracks its profile
        assert abs(signed32(ph.read4ByteTxRx(port, 1, 132)[0]) - (start + 800)) <= 15
        # a short move never reaches Profile Velocity: a triangle, peak √(a·d)
        trajectory, _ = profile_move(ph, port, bus, start + 800 - 60, 0.5)
        peak = math.sqrt(20 * RPM2 / 60.0 * 4096 / 60.0 * 60) / (RPM * 4096 / 60.0)
        assert abs(min(trajectory)) < 40 and abs(abs(min(trajectory)) - peak) <= 4
        # Profile Velocity alone: a rectangle, the full velocity from the first tick
        assert ph.write4ByteTxRx(port, 1, 108, 0) == (dxl.COMM_SUCCESS, 0)
        trajectory, _ = profile_move(ph, port, bus, start + 1000, 0.05)
        assert trajectory[0] == 40


def test_feetech_wheel_mode_and_position_profile() -> None:
    with emulated_bus("so101", lockstep=True) as bus, sdk_port(scs, bus.path) as port:
        ph = scs.PacketHandler(0)
        hold_arm_up(bus, ph, port, 40)
        assert ph.write1ByteTxRx(port, 1, 40, 0) == (scs.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, 33, 1) == (scs.COMM_SUCCESS, 0)  # wheel mode
        assert ph.write1ByteTxRx(port, 1, 41, 50) == (scs.COMM_SUCCESS, 0)  # 5000 steps/s²
        assert ph.write1ByteTxRx(port, 1, 40, 1) == (scs.COMM_SUCCESS, 0)
        assert ph.write2ByteTxRx(port, 1, 46, 800) == (scs.COMM_SUCCESS, 0)  # steps/s
        advance(bus, 0.1)
        early = sign_magnitude(ph.read2ByteTxRx(port, 1, 58)[0])
        assert early < 800 * 0.7  # still ramping at 5000 steps/s² (500 after 0.1 s)
        advance(bus, 1.0)
        speeds = []
        for _ in range(10):
            advance(bus, 0.02)
            speeds.append(sign_magnitude(ph.read2ByteTxRx(port, 1, 58)[0]))
        assert all(abs(v - 800) <= 40 for v in speeds), speeds  # within 5 %
        assert ph.write2ByteTxRx(port, 1, 46, 400 | 1 << 15) == (scs.COMM_SUCCESS, 0)
        advance(bus, 1.0)
        assert abs(sign_magnitude(ph.read2ByteTxRx(port, 1, 58)[0]) + 400) <= 20
        # back to position mode: Goal Speed (46) caps the move's speed, Acceleration shapes it
        assert ph.write1ByteTxRx(port, 1, 40, 0) == (scs.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, 33, 0) == (scs.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, 40, 1) == (scs.COMM_SUCCESS, 0)
        advance(bus, 0.5)
        start = ph.read2ByteTxRx(port, 1, 56)[0]
        goal = start - 600  # (within the pan's position limits)
        assert ph.write2ByteTxRx(port, 1, 46, 400) == (scs.COMM_SUCCESS, 0)
        assert ph.write2ByteTxRx(port, 1, 42, goal) == (scs.COMM_SUCCESS, 0)
        speeds = []
        for _ in range(250):
            advance(bus, 0.01)
            speeds.append(-sign_magnitude(ph.read2ByteTxRx(port, 1, 58)[0]))
        assert 400 * 0.8 <= max(speeds) <= 400 * 1.25, str(speeds)
        assert abs(ph.read2ByteTxRx(port, 1, 56)[0] - goal) <= 15


def test_dynamixel_time_based_profile_takes_the_set_time() -> None:
    """Drive Mode bit 2: Profile Velocity is the move's time (ms), Profile Acceleration its
    ramp time (ms); the peak velocity is distance / (total - ramp)."""
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        hold_arm_up(bus, ph, port, 64)
        assert ph.write1ByteTxRx(port, 1, 64, 0) == (dxl.COMM_SUCCESS, 0)
        assert ph.write1ByteTxRx(port, 1, 10, 4) == (dxl.COMM_SUCCESS, 0)  # time-based
        dxl_mode(ph, port, 1, 3)
        start = signed32(ph.read4ByteTxRx(port, 1, 140)[0])
        assert ph.write4ByteTxRx(port, 1, 112, 800) == (dxl.COMM_SUCCESS, 0)  # 800 ms in all
        assert ph.write4ByteTxRx(port, 1, 108, 200) == (dxl.COMM_SUCCESS, 0)  # 200 ms ramps
        trajectory, _ = profile_move(ph, port, bus, start + 600, 0.78)
        peak = 600 / 0.6 / (RPM * 4096 / 60.0)  # 1000 ticks/s in 0.229 rev/min counts: 64
        assert abs(max(trajectory) - peak) <= 1.5
        assert ph.read4ByteTxRx(port, 1, 140)[0] != start + 600  # not there at 780 ms
        advance(bus, 0.03)
        assert ph.read4ByteTxRx(port, 1, 140)[0] == start + 600  # there by 810 ms


def sts_mode(ph, port, servo_id: int, mode: int) -> None:
    """Torque off, Operating Mode (33) ``mode``, torque on (STS3215)."""
    for address, value in ((40, 0), (33, mode), (40, 1)):
        assert ph.write1ByteTxRx(port, servo_id, address, value) == (scs.COMM_SUCCESS, 0)


def test_feetech_pwm_mode_drives_the_duty_in_goal_time() -> None:
    """STS mode 2 (Feetech's memory table: "PWM open-loop speed regulation", run by the
    running-time register 0x2C): Goal Time (44) is the duty in ‰, its direction in bit 10
    (Feetech's SDKs' ``WritePwm``) or bit 11 (the memory table). Open loop: the unloaded pan
    turns where the duty's torque meets the motor's back-EMF damping and friction."""
    with emulated_bus("so101", lockstep=True) as bus, sdk_port(scs, bus.path) as port:
        ph = scs.PacketHandler(0)
        hold_arm_up(bus, ph, port, 40)
        sts_mode(ph, port, 1, 2)
        pan = load_robot("so101").actuators[0]
        # 10 % of the 2.94 N m stall torque against 0.6243 N m s/rad, less 0.02 N m friction
        expected = (
            (0.1 * 2.942 - pan.dynamics.static_friction)
            / pan.dynamics.damping
            * 4096
            / (2 * math.pi)
        )
        assert ph.write2ByteTxRx(port, 1, 44, 100) == (scs.COMM_SUCCESS, 0)
        advance(bus, 0.5)
        speed = sign_magnitude(ph.read2ByteTxRx(port, 1, 58)[0])  # Present Speed, steps/s
        assert abs(speed - expected) <= 0.05 * expected, (speed, expected)
        for reverse in (100 | 1 << 10, 100 | 1 << 11):  # the SDK's bit, the table's bit
            assert ph.write2ByteTxRx(port, 1, 44, reverse) == (scs.COMM_SUCCESS, 0)
            advance(bus, 0.5)
            speed = sign_magnitude(ph.read2ByteTxRx(port, 1, 58)[0])
            assert abs(speed + expected) <= 0.05 * expected, (speed, expected)
        # Torque Limit (48) caps the open-loop duty as it caps every output
        assert ph.write2ByteTxRx(port, 1, 48, 50) == (scs.COMM_SUCCESS, 0)
        assert ph.write2ByteTxRx(port, 1, 44, 100) == (scs.COMM_SUCCESS, 0)
        advance(bus, 0.5)
        capped = (0.05 * 2.942 - pan.dynamics.static_friction) / pan.dynamics.damping
        speed = sign_magnitude(ph.read2ByteTxRx(port, 1, 58)[0])
        assert abs(speed - capped * 4096 / (2 * math.pi)) <= 0.05 * expected, speed


def test_feetech_step_mode_moves_by_the_steps_written(datasheet_arm) -> None:
    """STS mode 3 (the memory table: "step servo mode, the number of steps is represented by
    the goal position 0x2A, bit 15 the direction"): each Goal Position write moves the servo
    by that many steps from its target, across the turn's 4095/0 boundary as well (servos
    without play, which would stop each move half of it short)."""
    with (
        emulated_bus(datasheet_arm("so101"), lockstep=True) as bus,
        sdk_port(scs, bus.path) as port,
    ):
        ph = scs.PacketHandler(0)
        hold_arm_up(bus, ph, port, 40)
        # a homing offset that puts the pan's present position near the end of the turn
        start = ph.read2ByteTxRx(port, 1, 56)[0]
        assert ph.write1ByteTxRx(port, 1, 40, 0) == (scs.COMM_SUCCESS, 0)
        offset = start - 3900  # Present Position = actual - Homing Offset (bit 11 sign)
        raw = abs(offset) | (1 << 11 if offset < 0 else 0)
        assert ph.write2ByteTxRx(port, 1, 31, raw) == (scs.COMM_SUCCESS, 0)
        sts_mode(ph, port, 1, 3)
        advance(bus, 0.3)
        assert abs(ph.read2ByteTxRx(port, 1, 56)[0] - 3900) <= 2
        joint = bus.report().position[0]
        moves = [(300, 300), (300, 600), (200 | 1 << 15, 400)]  # written, total from start
        for written, total in moves:
            assert ph.write2ByteTxRx(port, 1, 42, written) == (scs.COMM_SUCCESS, 0)
            advance(bus, 1.0)
            present = ph.read2ByteTxRx(port, 1, 56)[0]
            assert abs(present - (3900 + total) % 4096) <= 2, (written, present)
            moved = (bus.report().position[0] - joint) * 4096 / (2 * math.pi)
            assert abs(moved - total) <= 2, (written, moved)  # forwards, across 4095 -> 0
        # back to position mode: Goal Position is absolute again, within the turn
        sts_mode(ph, port, 1, 0)
        assert ph.write2ByteTxRx(port, 1, 42, 100) == (scs.COMM_SUCCESS, 0)
        advance(bus, 1.0)
        assert abs(ph.read2ByteTxRx(port, 1, 56)[0] - 100) <= 2
