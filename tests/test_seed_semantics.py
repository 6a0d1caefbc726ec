"""The seeds' semantics, each exact, on ``sim://`` and on ``emulated://`` alike.

* Intrinsic ``DynamicLimitsCheckMode.CHECK_JOINT_ACCELERATION``: no tick of the position
  target changes speed faster than the acceleration limit, arrival included.
* Intrinsic ``JointLimitsUpdate``: empty fields change nothing, updates stay inside the system
  limits, and a lower ``max_velocity`` lowers the configured speed with it.
* Player ``-1`` = every actuator, for every Commander verb that takes a joint.
* BB.Actuator: ``duration`` hint and ``timeout`` on set_position / set_velocity / set_effort,
  ``begin_motion`` with peak velocity and acceleration, command ids that never collide.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import jointlab
from jointlab.contract import Robot
from jointlab.controllers import (
    Commander,
    DynamicLimitsCheckMode,
    FunctionController,
    SafeController,
    SafetyLayer,
    run,
)
from jointlab.errors import CommandRefused
from jointlab.interface import NJointAction
from jointlab.robots import dump_yaml, with_limits

#: Options that keep an emulated robot from declaring the link dead on a busy machine.
PATIENT = {"request_timeout": 1.0, "dead_ms": 5000, "connect_timeout": 10.0}


@pytest.fixture(scope="module")
def emulated() -> Iterator[Robot]:
    with jointlab.connect("emulated://arm6", **PATIENT) as robot:
        yield robot


@pytest.fixture(params=["sim", "emulated"])
def arm6(request: pytest.FixtureRequest) -> Iterator[Robot]:
    """arm6, armed and at rest at home, on either backend."""
    if request.param == "sim":
        with jointlab.connect("sim://arm6") as robot:
            yield robot
        return
    robot = request.getfixturevalue("emulated")
    if robot.read().brakes:
        robot.brakes(False)
    robot.arm()
    robot.reset()
    robot.step()
    yield robot


def test_acceleration_check_keeps_every_tick_within_the_limit(arm6: Robot) -> None:
    description = arm6.description
    limit = description.soft_acceleration_limit
    target = description.home + np.where(np.arange(description.dof) == 5, 0.02, 0.0)
    layer = SafetyLayer.for_description(
        description, arm6.control_dt, check_mode=DynamicLimitsCheckMode.CHECK_JOINT_ACCELERATION
    )
    controller = SafeController(FunctionController(lambda _: NJointAction.Position(target)), layer)
    times, targets = [], []

    class Log:
        def log(self, time: float, **loggables: object) -> None:
            times.append(time)
            targets.append(arm6.last_action.position)

    run(arm6, controller, duration=0.3, recorder=Log())
    times_, refs = np.array(times), np.array(targets)
    velocity = np.diff(refs, axis=0) / np.diff(times_)[:, None]
    change = np.abs(np.diff(velocity, axis=0))
    allowed = limit * np.diff(times_)[1:, None] * (1 + 1e-6) + 1e-9
    assert np.all(change <= allowed)
    np.testing.assert_array_equal(refs[-1], target)  # arrived, and the landing was gentle
    assert any(e.quantity == "acceleration" for e in controller.events)


# --------------------------------------------------------------------------- JointLimitsUpdate
def test_limits_update_on_a_running_robot(arm6: Robot, tmp_path: Path) -> None:
    description = arm6.description
    velocity = description.velocity_limit.copy()
    velocity[0] = 0.5  # below shoulder_pan's configured speed 1.0
    updated = with_limits(
        description, max_velocity=velocity, min_position=[], max_position=description.upper - 0.5
    )
    assert updated.config_speed[0] == 0.5  # lowered with the limit, not refused
    np.testing.assert_array_equal(updated.lower, description.lower)  # empty: no update
    path = tmp_path / "arm6_limited.yaml"
    path.write_text(dump_yaml(updated))
    url = "emulated" if arm6.realtime else "sim"
    with jointlab.connect(f"{url}://{path}", **(PATIENT if arm6.realtime else {})) as robot:
        assert robot.geometry().actuators[0].config_speed == 0.5
        commander = Commander(robot)
        if not robot.read().armed:
            robot.arm()
            robot.step()
        with pytest.raises(CommandRefused) as caught:
            commander.set_position(1, description.upper[1] - 0.45)
        assert caught.value.reason == "out_of_limits"


# --------------------------------------------------------------------------- -1 = all
def test_minus_one_commands_every_joint(arm6: Robot) -> None:
    commander = Commander(arm6)
    free = tuple(range(arm6.dof))
    handles = [
        commander.set_current(-1, 0.0, duration=0.01),
        commander.set_effort(-1, 0.0, duration=0.01),
        commander.set_velocity(-1, 0.0, duration=0.01),
        commander.set_position(-1, 0.0),
        commander.home(-1),
        commander.hold(-1),
        commander.configure_speed(-1, 0.5),
        commander.configure_accel(-1, 2.0),
    ]
    for handle in handles:
        assert handle.joints == free, handle.verb
    np.testing.assert_array_equal(arm6.config_speed, 0.5)
    np.testing.assert_array_equal(arm6.config_accel, 2.0)


# --------------------------------------------------------------------------- BB.Actuator
def test_duration_hint_slows_a_move_down_and_never_speeds_it_up(arm6: Robot) -> None:
    commander = Commander(arm6)
    home = arm6.description.home[5]
    slow = commander.set_position(5, home + 0.1, duration=1.5)
    fast = commander.set_position(4, arm6.description.home[4] + 0.1, duration=0.001)
    assert commander.wait(timeout=3.0)
    begin = {h.verb + str(h.joints): h.events[1] for h in (slow, fast)}
    slow_begin, fast_begin = begin["set_position(5,)"], begin["set_position(4,)"]
    assert slow_begin.kind.value == "begin_motion"
    assert slow_begin.data["duration"] == pytest.approx(1.5)
    assert 0.001 < fast_begin.data["duration"] < 1.0  # the hint is shorter than possible
    assert slow.succeeded and fast.succeeded
    end = next(e for e in slow.events if e.kind.value == "end_motion")
    assert end.time - slow.events[0].time >= 1.5  # from acceptance, when the move starts


def test_begin_motion_reports_peak_velocity_and_acceleration(arm6: Robot) -> None:
    commander = Commander(arm6)
    commander.configure_speed(5, 0.5)
    handle = commander.set_position(5, arm6.description.home[5] + 1.0)
    commander.update()  # the first tick publishes begin_motion
    begin = next(e for e in handle.events if e.kind.value == "begin_motion")
    # where the joint was (a device holds home within a fraction of a milliradian)
    assert begin.data["initial_position"] == pytest.approx([arm6.description.home[5]], abs=2e-3)
    assert begin.data["target_position"] == pytest.approx([arm6.description.home[5] + 1.0])
    assert begin.data["peak_velocity"] == pytest.approx([0.5])  # the configured speed
    limit = arm6.description.soft_acceleration_limit[5]
    assert 0 < begin.data["acceleration"][0] <= limit * (1 + 1e-9)
    commander.stop()


@pytest.mark.parametrize("verb", ["set_position", "set_velocity", "set_effort"])
def test_timeout_ends_an_unfinished_command_as_stalled(arm6: Robot, verb: str) -> None:
    commander = Commander(arm6)
    argument = {
        "set_position": arm6.description.home[5] + 1.0,
        "set_velocity": 0.2,
        "set_effort": 0.0,
    }[verb]
    handle = getattr(commander, verb)(5, argument, timeout=0.05)
    start = handle.events[0].time  # accepted, at the robot time the command starts from
    with StepTimes(arm6) as seen:
        assert commander.wait(handle, timeout=1.0)
    (last,) = [e for e in handle.events if e.kind.value == "stalled"]
    assert handle.status.value == "stalled" and last.data["reason"] == "timeout"
    # at the first step past the timeout: a real-time host takes the device's states when it
    # can, so that step may come ticks after the timeout on a loaded machine (see below)
    assert last.time == next(t for t in seen if t - start >= 0.05)
    if not arm6.realtime:
        assert last.time - start <= 0.1  # every tick is a step
    with pytest.raises(CommandRefused, match="timeout must be > 0"):
        getattr(commander, verb)(5, argument, timeout=0.0)


def test_a_late_host_stalls_a_command_at_its_first_step_past_the_timeout(
    emulated: Robot,
) -> None:
    """The host is 0.3 s late for its first step after a 0.05 s timeout began (a loaded
    machine): the command stalls at the state that step took, not at the device's tick."""
    emulated.arm()
    emulated.reset()
    commander = Commander(emulated)
    handle = commander.set_velocity(5, 0.2, timeout=0.05)
    start = handle.events[0].time
    frames = emulated.link_stats.frames  # the device's states arrive while the host is away
    while emulated.link_stats.frames - frames < 300:  # 0.3 s of its ticks, however loaded
        time.sleep(0.01)
    with StepTimes(emulated) as seen:
        assert commander.wait(handle, timeout=1.0)
    (last,) = [e for e in handle.events if e.kind.value == "stalled"]
    assert last.time - start > 0.1
    assert last.time == next(t for t in seen if t - start >= 0.05)


class StepTimes:
    """The robot times of the steps taken within the block (the robot's ``listen``)."""

    def __init__(self, robot: Robot) -> None:
        self.robot, self.times = robot, [robot.time]

    def on_step(self, robot: Robot) -> None:
        self.times.append(robot.time)

    def on_refusal(self, robot: Robot, verb: str, reason: str) -> None:
        pass

    def __enter__(self) -> list[float]:
        self._undo = self.robot.listen(self)
        return self.times

    def __exit__(self, *exc_info: object) -> None:
        self._undo()


def test_automatic_ids_never_collide_with_the_callers(arm6: Robot) -> None:
    commander = Commander(arm6)
    mine = [commander.hold(5, command_id=1), commander.hold(4, command_id=3)]
    automatic = [commander.hold(j) for j in (0, 1, 2)]
    ids = [h.command_id for h in mine + automatic]
    assert len(set(ids)) == len(ids) and ids[:2] == [1, 3]
    # a refusal takes an id too, and never one of the caller's
    with pytest.raises(CommandRefused) as caught:
        commander.set_position(0, 99.0)
    assert caught.value.command_id not in ids
