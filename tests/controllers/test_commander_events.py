"""Feedback events arrive in order with the right command ids."""

import pytest

from jointlab.controllers import Commander, CommandEventKind, CommandStatus
from jointlab.robots import description_from_dict

K = CommandEventKind


def test_events_in_order_with_ids(gantry):
    commander = Commander(gantry)
    seen = []
    unsubscribe = commander.subscribe(seen.append)
    first = commander.set_position("x", 0.5)
    second = commander.set_position("y", 0.25, command_id="lift-7")
    assert commander.wait(timeout=3.0)
    assert first.command_id == 1 and second.command_id == "lift-7"
    for handle in (first, second):
        kinds = [e.kind for e in handle.events]
        assert kinds == [K.ACCEPTED, K.BEGIN_MOTION, K.END_MOTION]
        assert {e.command_id for e in handle.events} == {handle.command_id}
        assert handle.succeeded
    assert [e.command_id for e in seen if e.kind is K.ACCEPTED] == [1, "lift-7"]
    assert commander.get_events() == seen and not commander.events
    unsubscribe()
    commander.set_position("x", 0.45)
    assert len(seen) == 6  # unsubscribed: no more callbacks
    assert len(commander.get_events()) == 1  # the queue still gets them


def test_begin_motion_carries_the_plan(gantry):
    commander = Commander(gantry)
    handle = commander.set_position("z", -0.3)
    commander.update()
    begin = handle.events[1]
    assert begin.kind is K.BEGIN_MOTION and begin.joints == (2,)
    assert begin.data["initial_position"] == [-0.2]
    assert abs(begin.data["target_position"][0] + 0.3) < 1e-9 and begin.data["duration"] > 0


def test_a_new_command_preempts_the_old_one_on_its_joints(gantry):
    commander = Commander(gantry)
    whole = commander.set_positions([0.5, 0.4, -0.25])
    commander.update()
    gantry.step()
    part = commander.set_position("y", 0.2)
    event = whole.events[-1]
    assert event.kind is K.PREEMPTED and event.joints == (1,)
    assert event.data["by"] == part.command_id
    assert whole.status is CommandStatus.ACTIVE  # x and z continue
    replacement = commander.set_positions([0.45, 0.2, -0.2])
    assert whole.status is CommandStatus.PREEMPTED and part.status is CommandStatus.PREEMPTED
    assert commander.wait(replacement, timeout=3.0)
    kinds = [e.kind for e in whole.events]
    assert kinds == [K.ACCEPTED, K.BEGIN_MOTION, K.PREEMPTED, K.PREEMPTED]


def test_requests_are_accepted_at_once(gantry):
    commander = Commander(gantry)
    for handle in (
        commander.power(True),
        commander.brakes(False),
        commander.configure_accel("x", 2.0),
    ):
        assert handle.status is CommandStatus.SUCCEEDED
        assert [e.kind for e in handle.events] == [K.ACCEPTED]
    assert commander.geometry().actuators[0].config_speed == gantry.description.config_speed[0]


def test_safety_clamps_are_reported_with_the_driving_command(gantry):
    commander = Commander(gantry)
    handle = commander.set_velocity("x", 0.5)  # ends on the soft limit, reported at acceptance
    clamps = [e for e in handle.events if e.kind is K.CLAMPED]
    assert clamps and clamps[0].data["quantity"] == "position"


def _too_weak_to_lift():
    """Two joints: a turntable (about z) and a 2 kg arm (about y) whose motor cannot hold it."""
    sim = pytest.importorskip("jointlab.sim")
    joint = {
        "type": "rotary",
        "length": 0.3,
        "min": -1.5,
        "max": 1.5,
        "link": {"mass": 2.0, "radius": 0.02},
        "gains": {"kp": 50.0, "kd": 2.0},
    }
    description = description_from_dict(
        {
            "name": "weak",
            "actuators": [
                {**joint, "name": "turn", "axis": [0, 0, 1], "limits": {"effort": 50.0}},
                {**joint, "name": "lift", "axis": [0, 1, 0], "limits": {"effort": 1.0}},
            ],
        }
    )
    return sim.SimRobot(description, dt=0.001, control_dt=0.001, stall_time=0.1)


def test_a_joint_the_robot_reports_stalled_ends_the_command_naming_it():
    # Whole-robot commands take the tick's slice path, one-joint commands its index path:
    # both name the robot's joint index of the stalled joint.
    for command in (lambda c: c.set_positions([0.2, -0.4]), lambda c: c.set_position(1, -0.4)):
        with _too_weak_to_lift() as robot:
            commander = Commander(robot)
            handle = command(commander)
            assert commander.wait(handle, timeout=2.0)
            last = handle.events[-1]
            assert handle.status is CommandStatus.STALLED and last.data["reason"] == "stalled"
            assert last.message == "the robot reports joints [1] stalled"
