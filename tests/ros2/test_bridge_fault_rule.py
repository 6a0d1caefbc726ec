"""The ROS 2 bridge's loop follows the one fault rule (jointlab.faults), as every loop does.

The bridge runs in this process, ticked by the test (no client: its events are read from
the bridge's own publisher), on a simulated SO-101 that faults at a drawn tick
(tests/faulting_robot.py). At the fault: a ``fault`` event with the message and joint, the
robot held for one period at its present position, then disarmed; nothing moves it
afterwards. A servo's protection leaves the node running (its clients hear the fault and
can re-arm); a lost link or servo ends :meth:`Ros2Bridge.run` with the error.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from faulting_robot import assert_the_rule, faults, robot_for, target_of
from hypothesis import HealthCheck, given, settings
from ros_nodes import DOMAIN, NAMESPACE

if os.environ.get("CI") != "true":
    pytest.importorskip("rclpy", reason="the ROS 2 bridge tests need the ros2 extra (make test)")

from jointlab.errors import LinkError
from jointlab.interop.ros2 import BridgeConfig, Ros2Bridge

#: The ros2 conftest's discovery fixture is per test; it is the same for every example.
SHARED_FIXTURES = [HealthCheck.function_scoped_fixture]


def _listen(bridge: Ros2Bridge) -> list[dict[str, Any]]:
    """The events the bridge publishes from now on, decoded."""
    heard: list[dict[str, Any]] = []
    send = bridge.events._send

    def keep(text: str) -> None:
        heard.append(json.loads(text))
        send(text)

    bridge.events._send = keep
    return heard


@settings(max_examples=8, suppress_health_check=SHARED_FIXTURES)
@given(fault=faults(40))
def test_a_fault_in_the_bridge_loop_is_an_event_then_hold_and_disarm(fault) -> None:
    with (
        robot_for(fault) as robot,
        Ros2Bridge(robot, BridgeConfig(namespace=NAMESPACE), domain_id=DOMAIN) as bridge,
    ):
        heard = _listen(bridge)
        bridge.commander.set_positions(target_of(robot), duration=60 * robot.control_dt)
        if isinstance(robot.fault, LinkError):  # a lost link or servo ends the loop with it
            with pytest.raises(LinkError) as info:
                bridge.run(seconds=80 * robot.control_dt)
            assert info.value is robot.fault
        else:  # the node keeps running, disarmed (its clients can re-arm it)
            bridge.run(seconds=80 * robot.control_dt)
        assert_the_rule(robot)
        events = [e for e in heard if e["kind"] == "fault"]
        assert len(events) == 1, events
        assert events[0]["message"] == " ".join(str(robot.fault).split())
        joint = getattr(robot.fault, "joint", None)
        assert events[0]["joints"] == ([joint] if joint else [])
