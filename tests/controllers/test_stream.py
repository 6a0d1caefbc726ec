"""``Commander.stream``: streamed set-points through the Commander's safety path."""

from __future__ import annotations

import math

import numpy as np
import pytest

import jointlab
from jointlab.controllers import Commander
from jointlab.controllers.events import CommandEventKind, CommandStatus
from jointlab.errors import CommandRefused


@pytest.fixture
def arm6():
    with jointlab.connect("sim://arm6?control_dt=0.002") as robot:
        yield robot, Commander(robot)


def _run(robot, commander, seconds: float) -> None:
    for _ in range(round(seconds / robot.control_dt)):
        commander.update()
        robot.step()


def test_position_stream_tracks_and_updates_in_place(arm6) -> None:
    robot, commander = arm6
    target = robot.description.home + 0.2
    handle = commander.stream(target)
    _run(robot, commander, 1.5)
    np.testing.assert_allclose(robot.read().position, target, atol=2e-3)
    count = len(commander.events)
    assert commander.stream(target - 0.1) is handle  # same joints and mode: no new events
    assert len(commander.events) == count
    _run(robot, commander, 1.0)
    np.testing.assert_allclose(robot.read().position, target - 0.1, atol=2e-3)
    # NaN leaves a joint out: a new stream of the others takes them over.
    partial = np.full(6, np.nan)
    partial[2] = target[2]
    other = commander.stream(partial)
    assert other is not handle and other.joints == (2,)
    assert [e.kind for e in handle.events][-1] is CommandEventKind.PREEMPTED


def test_a_jump_is_ramped_by_the_safety_layer_and_reported(arm6) -> None:
    robot, commander = arm6
    desc = robot.description
    target = desc.home.copy()
    target[0] += 1.0
    commander.stream(target)
    commander.update()
    step = commander.last_applied.position[0] - desc.home[0]
    assert 0 < step <= desc.soft_velocity_limit[0] * robot.control_dt * (1 + 1e-6)
    clamped = [e for e in commander.events if e.kind is CommandEventKind.CLAMPED]
    assert clamped and clamped[0].data["quantity"] == "velocity"


def test_velocity_stream_stops_at_the_soft_limit_and_holds_when_stale(arm6) -> None:
    robot, commander = arm6
    velocity = np.zeros(6)
    velocity[0] = 1.5
    for _ in range(200):  # 0.4 s of updates at the control rate
        commander.stream(velocities=velocity, stale_after=0.2)
        commander.update()
        robot.step()
    assert robot.read().velocity[0] == pytest.approx(1.5, abs=0.05)
    soft_max = robot.description.soft_upper[0]
    for _ in range(1500):  # 3 s: past the soft limit at 1.5 rad/s
        commander.stream(velocities=velocity, stale_after=0.2)
        commander.update()
        robot.step()
    assert robot.read().position[0] <= soft_max + 1e-3
    entries = [e for e in commander.events if e.data.get("reason") == "soft_limit"]
    assert len(entries) == 1 and entries[0].joints == (0,)
    handle = commander.active[0]
    _run(robot, commander, 0.4)  # no update for 0.4 s > 0.2 s: it holds
    assert handle.status is CommandStatus.STALLED
    assert handle.events[-1].data["reason"] == "no_update"


def test_effort_stream_applies_the_torque_exactly(arm6) -> None:
    robot, commander = arm6
    commander.stream(efforts=[0.05], joints=["wrist_yaw"])
    commander.update()
    robot.step()
    assert robot.read().torque[5] == 0.05


@pytest.mark.parametrize(
    ("kwargs", "reason", "field"),
    [
        ({"positions": [0.0] * 5}, "bad_command", "position"),
        ({"efforts": [0.0, math.nan], "joints": [0, 1]}, "bad_command", "effort[1]"),
        ({"velocities": [math.inf], "joints": [0]}, "bad_command", "velocity[0]"),
        ({"positions": [math.nan] * 6}, "bad_command", "position"),
        ({"positions": [2.5], "joints": ["shoulder_lift"]}, "out_of_limits", "position"),
        ({"velocities": [9.0], "joints": [0]}, "out_of_limits", "velocity"),
        ({"efforts": [1e4], "joints": [0]}, "out_of_limits", "effort"),
        ({"positions": [0.0], "joints": ["wrist"]}, "unknown_joint", None),
    ],
)
def test_bad_streams_are_refused_with_the_field_and_nothing_applied(
    arm6, kwargs, reason, field
) -> None:
    _, commander = arm6
    before = commander.active
    with pytest.raises(CommandRefused) as caught:
        commander.stream(**kwargs)
    assert caught.value.reason == reason
    event = commander.events[-1]
    assert event.kind is CommandEventKind.REFUSED and event.data.get("field") == field
    assert commander.active == before


def test_a_disarmed_robot_refuses_a_stream(arm6) -> None:
    robot, commander = arm6
    robot.disarm()
    with pytest.raises(CommandRefused, match="disarmed"):
        commander.stream(robot.description.home)
