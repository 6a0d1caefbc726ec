"""Refused commands raise CommandRefused with a reason and publish a ``refused`` event."""

import numpy as np
import pytest

from jointlab.controllers import Commander, CommandStatus, run
from jointlab.errors import CommandRefused


def refused(commander, reason, call, *args, **kwargs):
    before = len(commander.events)
    with pytest.raises(CommandRefused) as info:
        getattr(commander, call)(*args, **kwargs)
    assert info.value.reason == reason
    assert reason in str(info.value)
    event = list(commander.events)[before]
    assert event.kind.value == "refused" and event.data["reason"] == reason
    assert event.command_id == info.value.command_id
    return str(info.value)


def test_disarmed_robot_refuses_motion(gantry):
    commander = Commander(gantry)
    gantry.disarm()
    message = refused(commander, "disarmed", "set_position", "x", 0.5)
    assert "arm()" in message
    refused(commander, "disarmed", "follow_trajectory", [{"position": [0.5, 0.3, -0.2]}])
    refused(commander, "disarmed", "set_velocity", 0, 0.1)
    assert commander.stop().status is CommandStatus.ACTIVE  # stopping is always accepted
    assert commander.compute(gantry.read()).is_zero  # a disarmed robot gets zero torque


def test_disarm_during_a_move_preempts_it(gantry):
    commander = Commander(gantry)
    handle = commander.set_position("x", 0.7)
    run(gantry, commander, duration=0.1)
    gantry.disarm()
    run(gantry, commander, duration=0.01)
    assert handle.status is CommandStatus.PREEMPTED
    assert handle.events[-1].data["reason"] == "disarmed"


def test_brakes_on_refuses_every_motion_until_released(gantry):
    commander = Commander(gantry)
    gantry.brakes(True)
    message = refused(commander, "braked", "set_position", "z", -0.3)
    assert "[2]" in message and "brakes(False)" in message
    refused(commander, "braked", "set_position", "x", 0.45)  # the array is parked
    gantry.brakes(False)
    handle = commander.set_position("x", 0.45)
    assert commander.wait(handle, timeout=3.0) and handle.succeeded


def test_unpowered_robot_refuses(gantry):
    commander = Commander(gantry)
    gantry.power(False)
    refused(commander, "unpowered", "set_effort", "x", 1.0)


def test_target_outside_soft_limits_is_refused(gantry):
    commander = Commander(gantry)
    message = refused(commander, "out_of_limits", "set_position", "x", 0.9)
    assert "position 0.9 of joint 0 (x)" in message and "[0, 0.8]" in message
    refused(commander, "out_of_limits", "set_position", "x", 0.5, velocity=5.0)
    refused(commander, "out_of_limits", "set_velocity", "y", 2.0)
    refused(commander, "out_of_limits", "set_effort", "y", 1e4)
    refused(commander, "out_of_limits", "set_current", "y", 1e4)
    refused(commander, "out_of_limits", "configure_speed", "y", 10.0)
    refused(commander, "out_of_limits", "set_positions", [0.4, 0.3])


def test_bad_trajectory_is_refused_with_the_waypoint(gantry):
    commander = Commander(gantry)
    message = refused(
        commander,
        "bad_trajectory",
        "follow_trajectory",
        [{"position": 0.5, "time_from_start": 0.5}, {"position": 0.95, "time_from_start": 1.0}],
        joints="x",
    )
    assert "waypoint 1 position 0.95 of joint 'x'" in message
    refused(
        commander, "bad_trajectory", "follow_trajectory", [{"position": 0.5}], joints="x", repeat=-1
    )


def test_unknown_and_dependent_joints(gripper):
    commander = Commander(gripper)
    refused(commander, "unknown_joint", "set_position", "elbow", 0.1)
    refused(commander, "unknown_joint", "set_position", 7, 0.1)
    dependent = int(np.flatnonzero(gripper.description.dependent)[0])
    refused(commander, "dependent_joint", "set_position", dependent, 0.01)
