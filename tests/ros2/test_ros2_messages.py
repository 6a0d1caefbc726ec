"""The bridge's message checks (no ROS needed): every bad field is named, nothing else raises."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jointlab
from jointlab.errors import JointLabError
from jointlab.interop.ros2.config import BridgeConfig
from jointlab.interop.ros2.messages import (
    BadMessage,
    TrajectoryPoint,
    event_json,
    joint_command,
    joint_trajectory,
)

ARM6 = jointlab.load_robot("arm6")
NAMES = list(ARM6.joint_names)


def _field(call, *args) -> str:
    with pytest.raises(BadMessage) as caught:
        call(ARM6, *args)
    assert caught.value.reason == "bad_command"
    assert caught.value.field in str(caught.value)
    return caught.value.field


def test_a_command_maps_names_to_joints_in_any_order() -> None:
    command = joint_command(ARM6, ["elbow", "shoulder_pan"], [0.5, math.nan], [], [])
    assert command.joints.tolist() == [2, 0]
    assert command.velocity is None and command.effort is None
    assert np.isnan(command.position[1])


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (([], [], [], []), "name"),
        ((["elbow", "wrist"], [0, 0], [], []), "name[1]"),
        ((["elbow", "elbow"], [0, 0], [], []), "name[1]"),
        ((NAMES, [0.1, 0.2], [], []), "position"),
        ((NAMES, [], [0.0] * 5, []), "velocity"),
        ((NAMES, [], [], [0.0] * 7), "effort"),
        ((["elbow"], [math.inf], [], []), "position[0]"),
        ((["elbow", "wrist_yaw"], [], [], [0.0, math.nan]), "effort[1]"),
        ((["elbow"], [], [], []), "position"),
    ],
)
def test_bad_commands_name_the_field(args: tuple, field: str) -> None:
    assert _field(joint_command, *args) == field


def _point(positions, t, velocities=(), accelerations=(), effort=()) -> TrajectoryPoint:
    return TrajectoryPoint(positions, velocities, accelerations, effort, t)


@pytest.mark.parametrize(
    ("names", "points", "field"),
    [
        ([], [_point([0.0], 1.0)], "joint_names"),
        (["elbow", "nope"], [_point([0.0, 0.0], 1.0)], "joint_names[1]"),
        (["elbow"], [_point([1.0], 0.5), _point([1.1], 0.5)], "points[1].time_from_start"),
        (["elbow"], [_point([1.0], 0.5), _point([1.1], 0.2)], "points[1].time_from_start"),
        (["elbow"], [_point([1.0], -0.5)], "points[0].time_from_start"),
        (["elbow"], [_point([1.0, 2.0], 0.5)], "points[0].positions"),
        (["elbow"], [_point([], 0.5)], "points[0].positions"),
        (["elbow"], [_point([math.nan], 0.5)], "points[0].positions[0]"),
        (["elbow"], [_point([1.0], 0.5, velocities=[1.0, 2.0])], "points[0].velocities"),
        (["elbow"], [_point([1.0], 0.5, accelerations=[math.inf])], "points[0].accelerations[0]"),
        (["elbow"], [_point([1.0], 0.5, effort=[1.0])], "points[0].effort"),
    ],
)
def test_bad_trajectories_name_the_field(names: list, points: list, field: str) -> None:
    assert _field(joint_trajectory, names, points) == field


def test_a_trajectory_becomes_waypoints_and_an_empty_one_a_stop() -> None:
    request = joint_trajectory(
        ARM6, ["wrist_yaw", "elbow"], [_point([0.1, 1.0], 0.0), _point([0.2, 1.1], 0.5, [0.0, 0.0])]
    )
    assert request.joints.tolist() == [5, 2]
    assert [w.time_from_start for w in request.waypoints] == [0.0, 0.5]
    np.testing.assert_array_equal(request.waypoints[1].velocity, [0.0, 0.0])
    assert joint_trajectory(ARM6, ["elbow"], []).waypoints == ()


values = st.lists(
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(0.5)), max_size=8
)


@given(
    names=st.lists(st.sampled_from([*NAMES, "nope", ""]), max_size=8),
    position=values,
    velocity=values,
    effort=values,
)
def test_any_command_is_accepted_or_refused_naming_a_field(
    names, position, velocity, effort
) -> None:
    try:
        command = joint_command(ARM6, names, position, velocity, effort)
    except BadMessage as error:
        assert error.field.split("[")[0] in ("name", "position", "velocity", "effort")
        return
    n = len(names)
    assert len(set(names)) == n > 0
    for array in (command.position, command.velocity, command.effort):
        assert array is None or (array.shape == (n,) and not np.isinf(array).any())
    assert command.effort is None or np.isfinite(command.effort).all()


def test_events_are_json_with_nan_as_null() -> None:
    text = event_json("clamped", requested=[math.nan, np.float64(1.5)], joints=np.array([1]))
    assert json.loads(text) == {"kind": "clamped", "requested": [None, 1.5], "joints": [1]}


def test_bridge_configuration_is_checked() -> None:
    assert BridgeConfig(rate=250).publish_every(0.001) == 4
    assert BridgeConfig().publish_every(0.004) == 1
    with pytest.raises(JointLabError, match="divides it"):
        BridgeConfig(rate=300).publish_every(0.001)
    with pytest.raises(JointLabError, match=r"joint_states_topic.*not a ROS name"):
        BridgeConfig(joint_states_topic="joint states")
    with pytest.raises(JointLabError, match="state_reliability"):
        BridgeConfig(state_reliability="sometimes")


def test_the_inbox_keeps_only_the_newest_of_a_run_of_like_commands() -> None:
    from jointlab.interop.ros2.inbox import Inbox, RequestKind

    inbox = Inbox()
    assert inbox.take() == ([], 0)
    first = joint_command(ARM6, ["elbow"], [0.1], [], [])
    other_joint = joint_command(ARM6, ["wrist_yaw"], [0.1], [], [])
    for command in (first, first, first, other_joint, first):
        inbox.put(RequestKind.COMMAND, "joint_commands", command)
    inbox.put(RequestKind.BAD, "joint_commands", BadMessage("name", "no joints"))
    requests, superseded = inbox.take()
    assert superseded == 2 and inbox.empty()
    assert [r.payload for r in requests[:3]] == [first, other_joint, first]
    assert requests[3].kind is RequestKind.BAD
