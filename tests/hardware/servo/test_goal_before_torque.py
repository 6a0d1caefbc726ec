"""Before any Torque Enable the servo's Goal Position is its present position, checked.

Arming a servo arm writes the hold of the present pose and reads Goal Position back from
every position servo before Torque Enable (a Sync Write has no status packet: a goal lost on
the line would otherwise send the servo to a stale goal the moment its torque comes on).
Automatic homing writes Goal Position = Present Position before each of its Torque Enables.
All on emulated buses in lockstep, through the real SDK drivers; the driver's calls are only
recorded (or, to lose a packet, one Sync Write is not sent), never answered by the test.
"""

from __future__ import annotations

from typing import Any

import pytest

import jointlab
from jointlab.errors import LinkError
from jointlab.hardware.servo_host.homing import _go


def _record(
    robot: Any, monkeypatch: pytest.MonkeyPatch, drop_goal_write: bool = False
) -> list[tuple[str, int, str, int]]:
    """The driver's single reads and writes, in order: (kind, servo id, register, value)."""
    driver = robot.driver
    calls: list[tuple[str, int, str, int]] = []
    read, write, sync_write = driver.read, driver.write, driver.sync_write

    def recorded_read(servo_id: int, register: Any) -> int:
        value = read(servo_id, register)
        calls.append(("read", servo_id, register.name, value))
        return value

    def recorded_write(servo_id: int, register: Any, value: int) -> int:
        calls.append(("write", servo_id, register.name, int(value)))
        return write(servo_id, register, value)

    def recorded_sync_write(register: Any, ids: Any, values: Any) -> None:
        kind = "lost" if drop_goal_write and register.name == "goal_position" else "sync"
        pairs = zip(ids, values, strict=True)
        calls.extend((kind, int(i), register.name, int(v)) for i, v in pairs)
        if kind == "sync":  # else the packet is lost on the line
            sync_write(register, ids, values)

    monkeypatch.setattr(driver, "read", recorded_read)
    monkeypatch.setattr(driver, "write", recorded_write)
    monkeypatch.setattr(driver, "sync_write", recorded_sync_write)
    return calls


def test_arming_reads_every_goal_back_before_torque_enable(monkeypatch) -> None:
    with jointlab.connect("emulated://so101?lockstep=1") as robot:
        calls = _record(robot, monkeypatch)
        robot.arm()
        ids = list(robot.servo_ids)
        reads = [c for c in calls if c[0] == "read" and c[2] == "goal_position"]
        enables = [k for k, c in enumerate(calls) if c[2] == "torque_enable" and c[3] == 1]
        assert [c[1] for c in reads] == ids and len(enables) == len(ids)
        assert max(calls.index(c) for c in reads) < min(enables)
        # what was read back is what was written: the hold, near the present position
        written = {
            c[1]: c[3]
            for c in calls[: min(enables)]
            if c[:1] == ("sync",) and c[2] == "goal_position"
        }
        for k, (_, servo_id, _, value) in enumerate(reads):
            assert written[servo_id] == value
            assert abs(value - robot.read_register(k, "present_position")) < 60


def test_a_goal_lost_on_the_line_keeps_the_torque_off(monkeypatch) -> None:
    with jointlab.connect("emulated://so101?lockstep=1") as robot:
        stale = robot.read_register(1, "present_position") + 300  # torque off: nothing moves
        robot.write_register(1, "goal_position", stale)
        _record(robot, monkeypatch, drop_goal_write=True)
        with pytest.raises(
            LinkError,
            match=rf"servo id {robot.servo_ids[1]}: Goal Position "
            rf"reads {stale} after \d+ was written",
        ):
            robot.arm()
        assert not robot.armed
        assert all(robot.read_register(k, "torque_enable") == 0 for k in range(robot.dof))


def test_homing_puts_the_goal_at_the_present_position_before_torque_enable(monkeypatch) -> None:
    url = "emulated://so101?lockstep=1&calibrated=0"
    with jointlab.connect(url) as robot:
        present = robot.read_register(2, "present_position")
        robot.write_register(2, "goal_position", present + 400)  # a stale goal
        calls = _record(robot, monkeypatch)
        _go(robot, 2, present + 40, speed=0.5)
        enable = next(k for k, c in enumerate(calls) if c[2] == "torque_enable" and c[3] == 1)
        goal_writes = [c for c in calls[:enable] if c[0] == "write" and c[2] == "goal_position"]
        assert goal_writes and goal_writes[-1][3] == present
        for _ in range(20):
            robot.idle_cycle()
        # the servo heads for the new goal, never for the stale one
        assert abs(robot.read_register(2, "present_position") - present) < 60
