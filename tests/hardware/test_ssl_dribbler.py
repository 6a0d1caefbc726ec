"""The SSL link spins the dribbler at the commanded speed, in sim and through the emulator.

The emulated device runs in lockstep (one tick per host period, virtual time): a real-time
device on a loaded machine misses the host's periods and measures the load, not the link.
"""

from __future__ import annotations

import pytest
from hardware_helpers import PATIENT

import jointlab
from jointlab.hardware import SSLRobotLink


@pytest.mark.parametrize(
    "url", ["sim://ssl_robot", "sim://ssl_robot?engine=mujoco", "emulated://ssl_robot?lockstep=1"]
)
def test_dribbler_turns_at_the_commanded_speed(url: str) -> None:
    options = PATIENT if url.startswith("emulated") else {}
    with jointlab.connect(url, **options) as robot:
        if not robot.read().armed:
            robot.arm()
        link = SSLRobotLink(robot)
        link.drive(0.0, 0.0, 0.0, dribbler_speed=64)
        commanded = 64 / 127 * link.dribbler_max_speed  # 100.8 rad/s
        for _ in range(300):
            start = link.step()
        for _ in range(200):
            end = link.step()
    speed = (end.position[3] - start.position[3]) / (end.time - start.time)
    # was 91.6: the D term alone settles where it balances the joint's viscous damping
    # (kd/(kd + d) of the command), and PyBullet capped joint speeds at 100 rad/s
    assert speed == pytest.approx(commanded, rel=1e-3)
    assert end.velocity[3] == pytest.approx(commanded, rel=1e-3)
