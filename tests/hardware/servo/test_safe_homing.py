"""Automatic homing is safe: a low torque limit before any push, a hold within one bus cycle.

Lockstep emulated bus; the robot's register writes and bus cycles are logged in order (the
servos themselves are read back over the bus), so "within one period" is counted in bus
cycles, never in wall time.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import jointlab
from jointlab.cli import main
from jointlab.errors import ConfigurationError
from jointlab.hardware.servo_host.homing import (
    SAFE_FRACTION,
    STALL_TICKS,
    STALL_WINDOW,
    calibrate_automatic,
)

URL = "emulated://so101?lockstep=1&calibrated=0&offset_error=150&seed=4"


def test_every_model_of_the_arms_defaults_to_at_most_a_quarter_of_stall() -> None:
    for name in ("so101", "koch"):
        for servo in jointlab.load_robot(name).bus.servos:
            assert SAFE_FRACTION[servo.model] <= 0.25


@pytest.mark.slow
def test_the_push_is_limited_and_a_stall_is_held_in_the_next_cycle() -> None:
    joint = 5  # the gripper: both stops within reach
    log: list[tuple] = []
    with jointlab.connect(URL) as robot:
        write, cycle = robot.write_register, robot.idle_cycle

        def logged_write(i, name, value):
            log.append(("write", robot.description.joint_index(i), name, int(value)))
            return write(i, name, value)

        def logged_cycle():
            state = cycle()
            log.append(("cycle", state.extras["ticks"].copy()))
            return state

        limits = []

        def checked_write(i, name, value):
            code = logged_write(i, name, value)
            if name == "goal_position" and value in (0, robot.models[i].resolution - 1):
                limits.append(robot.read_register(i, "torque_limit"))  # as the servo has it
            return code

        robot.write_register, robot.idle_cycle = checked_write, logged_cycle
        calibrate_automatic(robot, speed=2.0, joints=["gripper"])
        window = max(10, math.ceil(STALL_WINDOW / robot.bus_dt))
    # Both pushes towards a stop ran with the servo's limit at <= 25 % of stall (1000).
    assert len(limits) == 2 and max(limits) <= 250, limits
    pushes = [k for k, e in enumerate(log) if e[0] == "write" and e[1] == joint
              and e[2] == "goal_position" and e[3] in (0, 4095)]  # fmt: skip
    for start in pushes:
        ticks = []
        for k in range(start, len(log)):
            if log[k][0] != "cycle":
                continue
            ticks.append(log[k][1][joint])
            if len(ticks) > window and abs(ticks[-1] - ticks[-1 - window]) < STALL_TICKS:
                break  # the first cycle at which the stall criterion holds
        # The very next entry, before any further bus cycle: the hold where it stalled.
        assert log[k + 1] == ("write", joint, "goal_position", int(ticks[-1]))
    assert np.ptp([e[1][joint] for e in log if e[0] == "cycle"]) > 1000  # it did travel


def test_a_torque_above_stall_is_refused_before_anything_moves(capsys) -> None:
    with jointlab.connect(URL) as robot:
        before = robot.idle_cycle().extras["ticks"].copy()
        with pytest.raises(ConfigurationError, match=r"homing torque 150% of stall refused"):
            calibrate_automatic(robot, torque_fraction=1.5)
        assert robot.read_register("gripper", "torque_limit") == 1000  # nothing written
        moved = robot.idle_cycle().extras["ticks"] - before
        assert np.abs(moved).max() <= 2  # a limp arm's creep, no move
    assert main(["calibrate", URL, "--robot", "so101", "--auto", "--torque", "1.5"]) == 2
    assert "refused" in capsys.readouterr().err
