"""A servo fault through the bridge: reported as a ``fault`` event, the robot holds, disarms.

The bridge runs in this process on an emulated SO-101 bus in lockstep, ticked by the test;
a client rclpy node (its own context) listens to the events. An overload injected into one
servo is the real firmware's protection (torque off, the Overload bit in every status).
"""

from __future__ import annotations

import os
import time

import pytest
from ros_nodes import DOMAIN, NAMESPACE, Client

import jointlab

if os.environ.get("CI") != "true":
    pytest.importorskip("rclpy", reason="the ROS 2 bridge tests need the ros2 extra (make test)")

from jointlab.interop.ros2 import BridgeConfig, Ros2Bridge


def test_a_servo_overload_is_a_fault_event_then_hold_and_disarm() -> None:
    config = BridgeConfig(
        namespace=NAMESPACE,
        joint_states_topic="joint_states",
        joint_commands_topic="joint_commands",
        joint_trajectory_topic="joint_trajectory",
    )
    with jointlab.connect("emulated://so101?lockstep=1") as robot:
        robot.arm()
        client = Client(NAMESPACE)
        try:
            with Ros2Bridge(robot, config, domain_id=DOMAIN) as bridge:
                for _ in range(400):  # until the client hears the bridge
                    bridge.tick()
                    if client.states:
                        break
                assert client.states
                robot.emulator.inject(5, 0x20)  # overload on wrist_roll (servo 5)
                bridge.tick()
                bridge.tick()
                assert not robot.read().armed  # held for one period, then disarmed
                fault = client.event(kind="fault")
                assert fault["joints"] == ["wrist_roll"] and "0x20" in fault["message"]
                assert fault["source"] == "state"
                # The node keeps running: the next command is refused (disarmed), reported.
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and not any(
                    e["kind"] == "refused" for e in client.events
                ):
                    client.command(["elbow_flex"], position=[1.0])
                    bridge.tick()
                    time.sleep(0.01)
                assert client.event(kind="refused", reason="disarmed")
        finally:
            client.close()


def test_beside_ros2_control_the_urdf_carries_the_block_for_the_bridges_topics() -> None:
    import xml.etree.ElementTree as ET

    config = BridgeConfig(
        namespace=NAMESPACE,
        joint_states_topic="/jl_rc/joint_states",
        joint_commands_topic="/jl_rc/joint_commands",
    )
    with jointlab.connect("sim://arm6") as robot:
        client = Client(NAMESPACE)
        try:
            with Ros2Bridge(robot, config, domain_id=DOMAIN, ros2_control=True) as bridge:
                bridge.tick()
                urdf = client.wait(lambda: client.descriptions, 30, "/robot_description")[-1]
        finally:
            client.close()
    block = ET.fromstring(urdf).find("ros2_control")
    params = {p.get("name"): p.text for p in block.find("hardware").findall("param")}
    assert params == {
        "joint_commands_topic": "/jl_rc/joint_commands",
        "joint_states_topic": "/jl_rc/joint_states",
    }
    assert [j.get("name") for j in block.findall("joint")] == list(robot.description.joint_names)
