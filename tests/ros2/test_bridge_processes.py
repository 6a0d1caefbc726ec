"""A separate rclpy node drives sim://arm6 and emulated://so101 through ``jointlab ros2``.

Two processes over loopback (see conftest.py): the client commands the robot with the topics
ROS users already use, reads it back on /joint_states, runs a trajectory, and sees a command
beyond a limit refused and reported; bad input is refused with an event naming the field,
nothing is applied and the node keeps running.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import jointlab

if os.environ.get("CI") != "true":
    pytest.importorskip("rclpy", reason="the ROS 2 bridge tests need the ros2 extra (make test)")

pytestmark = pytest.mark.slow

ARM6 = jointlab.load_robot("arm6")
SO101 = jointlab.load_robot("so101")


def _position(client, names) -> np.ndarray:
    msg = client.latest()
    order = [list(msg.name).index(n) for n in names]
    return np.asarray(msg.position)[order]


def _near(client, names, target, tol) -> bool:
    msg = client.states[-1][1] if client.states else None
    if msg is None:
        return False
    q = np.asarray(msg.position)[[list(msg.name).index(n) for n in names]]
    return bool(np.all(np.abs(q - target) < tol))


def test_sim_arm6_publishes_follows_commands_and_trajectories_and_refuses(bridge_of) -> None:
    bridge, client = bridge_of("sim://arm6?control_dt=0.004")
    names = list(ARM6.joint_names)
    first = client.latest()
    assert list(first.name) == names and len(first.position) == len(first.velocity) == 6
    assert len(first.effort) == 6
    np.testing.assert_allclose(first.position, ARM6.home, atol=0.02)
    # /robot_description is transient local: this late subscriber still got the URDF.
    client.wait(lambda: client.descriptions, 60, "/robot_description")
    # (/robot_description is absolute: match ours, should another run share the domain)
    urdf = client.wait(
        lambda: [d for d in client.descriptions if '<robot name="arm6"' in d], 60, "arm6's URDF"
    )[0]
    assert all(f'joint name="{n}"' in urdf for n in names)
    # Stamps are the simulated time (and /clock carries it for use_sim_time).
    client.subscribe_clock()

    def stamped_on_the_clock() -> bool:  # some state's stamp is a time /clock carried
        stamps = {(m.header.stamp.sec, m.header.stamp.nanosec) for _, m in client.states[-50:]}
        return bool(stamps & set(client.clock))

    client.wait(stamped_on_the_clock, 60, "a state stamped with a /clock time")

    # A JointState command (the ros2_control topic contract), streamed: read back.
    target = ARM6.home + np.array([0.3, -0.2, 0.25, 0.4, -0.3, 0.5])
    client.command(names, position=target)
    client.wait(lambda: _near(client, names, target, 0.01), 60, "the commanded pose")
    # Only some joints, in another order: the others keep their targets.
    client.command(["elbow", "shoulder_pan"], position=[target[2] - 0.2, target[0] + 0.1])
    partial = target.copy()
    partial[2] -= 0.2
    partial[0] += 0.1
    client.wait(lambda: _near(client, names, partial, 0.01), 60, "the partial command")

    # A trajectory through the Commander's trajectory path (first point = where it is).
    start = _position(client, names)
    goal = ARM6.home + np.array([-0.4, 0.3, -0.3, -0.5, 0.4, -0.6])
    middle = 0.5 * (start + goal)
    client.trajectory(names, [(list(partial), 0.0), (list(middle), 1.0), (list(goal), 2.0)])
    client.wait(lambda: _near(client, names, goal, 0.01), 60, "the trajectory's end")
    assert not [e for e in client.events if e["kind"] == "refused"], client.events

    # Beyond a soft limit: refused and reported, nothing applied.
    client.command(["shoulder_lift"], position=[2.5])  # soft max 1.9
    refusal = client.event(kind="refused", reason="out_of_limits")
    assert refusal["field"] == "position" and refusal["joints"] == ["shoulder_lift"]
    assert "1.9" in refusal["message"] and refusal["source"].endswith("joint_commands")

    # Bad input: each refused with an event naming the field; nothing applied.
    client.command(["shoulder_pan", "wrist"], position=[0.1, 0.2])
    client.command(names, position=[0.1, 0.2, 0.3])
    client.command(["elbow"], position=[0.5], effort=[math.nan])
    client.command(["elbow", "elbow"], position=[0.5, 0.6])
    client.trajectory(["elbow"], [([1.0], 0.5), ([1.1], 0.5)])
    client.trajectory(["elbow"], [([1.0, 2.0], 0.5)])
    for field in (
        "name[1]",
        "position",
        "effort[0]",
        "points[1].time_from_start",
        "points[0].positions",
    ):
        client.event(kind="refused", reason="bad_command", field=field)
    messages = [e["message"] for e in client.events if e.get("field") == "name[1]"]
    assert any("no joint 'wrist'" in m for m in messages), messages
    assert any("named twice" in m for m in messages), messages
    np.testing.assert_allclose(_position(client, names), goal, atol=0.01)  # nothing applied
    # The node keeps running and still obeys.
    count = len(client.states)
    client.command(["wrist_yaw"], position=[goal[5] + 0.3])
    expected = goal.copy()
    expected[5] += 0.3
    client.wait(lambda: _near(client, names, expected, 0.01), 60, "a good command after bad ones")
    assert len(client.states) > count and bridge.alive()

    # Services: hold, disarm (a command is then refused, reason disarmed), arm again.
    assert client.call("hold").success
    assert client.call("disarm").success
    client.command(["elbow"], position=[1.0])
    assert client.event(kind="refused", reason="disarmed")["joints"] == ["elbow"]
    assert client.call("arm").success
    assert bridge.stop() == 0
    assert "states published" in bridge.output()


def test_emulated_so101_armed_by_service_follows_commands_and_trajectories(bridge_of) -> None:
    bridge, client = bridge_of("emulated://so101")
    names = list(SO101.joint_names)
    # A device starts disarmed: a command is refused until the arm service.
    client.command(names, position=SO101.home)
    assert client.event(kind="refused", reason="disarmed")
    reply = client.call("arm")
    assert reply.success, reply.message
    here = _position(client, names)
    target = np.clip(
        here + np.array([0.3, 0.2, -0.2, 0.25, 0.4, 0.3]),
        SO101.soft_lower + 0.05,
        SO101.soft_upper - 0.05,
    )
    client.command(names, position=target)
    # Position servos on a P-only loop stop within their friction deadband of a target
    # stepped to at full speed (the safety layer's ramp): a few degrees at most.
    client.wait(lambda: _near(client, names, target, 0.1), 60, "the commanded pose")
    goal = np.clip(
        target + np.array([-0.4, -0.2, 0.3, -0.3, -0.5, -0.2]),
        SO101.soft_lower + 0.05,
        SO101.soft_upper - 0.05,
    )
    client.trajectory(names, [(list(goal), 1.5)])  # the Commander leads in from where it is
    # the same deadband (the pan drags its jaw on the table here: docs/hardware.md)
    client.wait(lambda: _near(client, names, goal, 0.1), 60, "the trajectory's end")
    client.command(["wrist_roll"], position=[3.5])  # soft max 2.79
    refusal = client.event(kind="refused", reason="out_of_limits")
    assert refusal["field"] == "position" and refusal["joints"] == ["wrist_roll"]
    client.command(["gripper"], effort=[0.1])  # position-only servos take no effort
    assert client.event(kind="refused", reason="unsupported_by_device")["field"] == "effort"
    assert client.call("disarm").success
    assert bridge.stop() == 0
