"""P-only servo loops hold a loaded arm where their P term balances gravity (the analytic droop).

LeRobot runs the followers' position loops with proportional gain only (SO-101: P Coefficient
16, D 32, I 0; Koch: the defaults, elbow P 1500, D 600, I 0). Written here through the vendors'
SDKs on lockstep buses, with the arm posed so that gravity loads the shoulder, elbow and wrist,
each joint settles at ``goal − g(q)/k`` (:func:`jointlab.hardware.servo_host.droop.holding_droop`)
within its static-friction band: the emulated firmware is the documented loop, and the droop
the real arm shows with these gains is a property of the gains, not of the emulator.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from servo_helpers import emulated_bus, sdk_port

from jointlab import load_robot
from jointlab.hardware.servo_host.droop import holding_droop
from jointlab.hardware.vendors import bus_models

dxl = pytest.importorskip("dynamixel_sdk")
scs = pytest.importorskip("scservo_sdk")

#: The pose held by each arm: upper arm tilted, forearm and wrist bent, off the table (rad).
POSES = {
    "so101": np.array([0.0, 0.3, 0.3, 0.3, 0.0, 0.0]),
    "koch": np.array([0.0, 0.35, -0.45, 0.4, 0.0, 0.0]),
}
#: Half a tick (the goal's rounding is exact; the reported position is read as it is) plus
#: the settling left after SETTLE seconds, rad.
SLACK = 2.0 * np.pi / 4096
#: Firmware seconds the arm gets to settle.
SETTLE = 2.0
#: PWM duty per tick of position error per count of the P register, as the vendors document
#: it: Feetech's own calibration (ftservo/ftservo-bam: P = 1 and 4000 ticks of error give 100 %
#: PWM) and the ROBOTIS e-Manual (KPP = P / 128 in PWM units, 885 = 100 %).
DUTY_PER_TICK = {"feetech": 1.0 / 4000.0, "dynamixel": 1.0 / (128.0 * 885.0)}


def _goal_ticks(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Goal Position ticks of the arm's pose and the joint angles they stand for exactly."""
    t = load_robot(name).transmissions
    ticks = np.rint(t.to_motor(POSES[name]))
    return ticks.astype(int), t.to_joint(ticks)


def _check(name: str, p_registers: list[int], settled: np.ndarray, goal: np.ndarray) -> None:
    description = load_robot(name)
    _, models = bus_models(description)
    expected = holding_droop(description, models, p_registers, settled)
    # the stiffness is the vendors' scaling: duty per tick x stall torque, per joint radian
    documented = [
        p * DUTY_PER_TICK[m.vendor] * m.stall_torque * 4096 / (2 * np.pi)
        for p, m in zip(p_registers, models, strict=True)
    ]
    np.testing.assert_allclose(expected.stiffness, documented, rtol=1e-9)
    measured = settled - goal
    for j, joint in enumerate(description.joint_names):
        error = abs(measured[j] - expected.droop[j])
        assert error <= expected.band[j] + SLACK, (
            joint,
            np.degrees(measured[j]),
            np.degrees(expected.droop[j]),
            np.degrees(expected.band[j]),
        )
    # the pose loads the arm: the shoulder's droop is well above its friction band
    assert abs(expected.droop[1]) > 3 * expected.band[1]


def test_feetech_p_only_loop_settles_at_the_analytic_droop() -> None:
    p_registers = [16] * 6
    ticks, goal = _goal_ticks("so101")
    with emulated_bus("so101", lockstep=True) as bus, sdk_port(scs, bus.path) as port:
        ph = scs.PacketHandler(0)
        bus.move(POSES["so101"])
        for k, servo_id in enumerate(range(1, 7)):
            for address, value in ((55, 0), (21, p_registers[k]), (22, 32), (23, 0)):
                assert ph.write1ByteTxRx(port, servo_id, address, value) == (scs.COMM_SUCCESS, 0)
            assert ph.write2ByteTxRx(port, servo_id, 42, int(ticks[k])) == (scs.COMM_SUCCESS, 0)
            assert ph.write1ByteTxRx(port, servo_id, 40, 1) == (scs.COMM_SUCCESS, 0)
        bus.advance(SETTLE, bus.report().rx_bytes)
        settled = np.array(bus.report().position)
    _check("so101", p_registers, settled, goal)


def test_dynamixel_p_only_loop_settles_at_the_analytic_droop() -> None:
    p_registers = [640, 640, 1500, 400, 400, 400]
    ticks, goal = _goal_ticks("koch")
    with emulated_bus("koch", lockstep=True) as bus, sdk_port(dxl, bus.path) as port:
        ph = dxl.PacketHandler(2.0)
        bus.move(POSES["koch"])
        for k, servo_id in enumerate(range(1, 7)):
            ok = (dxl.COMM_SUCCESS, 0)
            assert ph.write1ByteTxRx(port, servo_id, 64, 0) == ok
            assert ph.write1ByteTxRx(port, servo_id, 11, 4) == ok  # extended position
            assert ph.write2ByteTxRx(port, servo_id, 84, p_registers[k]) == ok
            assert ph.write2ByteTxRx(port, servo_id, 82, 0) == ok
            if servo_id == 3:
                assert ph.write2ByteTxRx(port, servo_id, 80, 600) == ok
            assert ph.write4ByteTxRx(port, servo_id, 116, int(ticks[k]) & 0xFFFFFFFF) == ok
            assert ph.write1ByteTxRx(port, servo_id, 64, 1) == ok
        bus.advance(SETTLE, bus.report().rx_bytes)
        settled = np.array(bus.report().position)
    _check("koch", p_registers, settled, goal)


def test_holding_droop_of_one_link_is_its_weight_over_the_loop_stiffness(tmp_path) -> None:
    """By hand: one STS3215 turning a horizontal axis, its link's weight m·g·l at its arm's
    level, held by P = 16: stiffness 16/4000 duty per tick x 30 kg cm x 4096/2π per rad."""
    source = Path(__file__).parents[2] / "interop" / "robots" / "one_sts3215.yaml"
    path = tmp_path / "one_horizontal.yaml"
    path.write_text(source.read_text().replace("axis: [0, 0, 1]", "axis: [0, 1, 0]"))
    description = load_robot(path)
    _, models = bus_models(description)
    k = 16 / 4000 * (30 * 9.80665 / 100) * 4096 / (2 * np.pi)
    weight = 0.012 * 9.81 * 0.03  # the link's mass, gravity, its centre's distance
    levels = [holding_droop(description, models, [16], [q]) for q in (0.0, np.pi / 2)]
    level, upright = sorted(levels, key=lambda d: abs(d.gravity[0]))[::-1]
    np.testing.assert_allclose(abs(level.gravity[0]), weight, rtol=1e-3)
    assert abs(upright.gravity[0]) < 1e-9
    np.testing.assert_allclose(level.stiffness, [k], rtol=1e-9)
    np.testing.assert_allclose(level.droop, -level.gravity / k, rtol=1e-12)
    np.testing.assert_allclose(level.band, [0.02 / k], rtol=1e-9)
