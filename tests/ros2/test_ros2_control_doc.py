"""The ros2_control configuration of docs/ros2.md against the contract's parameter names.

The names are the ones ``joint_state_topic_hardware_interface`` reads (its ``on_init``:
``joint_commands_topic``, ``joint_states_topic``, ``trigger_joint_command_threshold``,
``sum_wrapped_joint_states``, ``enable_command_limiting``; per joint ``mimic`` and
``multiplier``) and PickNik's ``topic_based_ros2_control`` adds
(``use_initial_states_as_initial_commands``), as recorded in
``jointlab.interop.ros2.ros2_control``; the docs' block must use only those, name the
bridge's ``--ros2-control`` topics and be what the generator writes.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

import jointlab
from jointlab.interop.ros2.ros2_control import (
    HARDWARE_PARAMETERS,
    INTERFACE_PARAMETERS,
    INTERFACES,
    JOINT_PARAMETERS,
    PLUGINS,
    ROS2_CONTROL_TOPICS,
    ros2_control_xml,
    urdf_with_ros2_control,
)

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "ros2.md").read_text()
ARM6 = jointlab.load_robot("arm6")

#: The contract as the upstream sources spell it (ros-controls/topic_based_hardware_interfaces,
#: joint_state_topic_hardware_interface/src/joint_state_topic_hardware_interface.cpp and
#: README.md; PickNikRobotics/topic_based_ros2_control, src/topic_based_system.cpp).
UPSTREAM_HARDWARE = {
    "joint_commands_topic",
    "joint_states_topic",
    "trigger_joint_command_threshold",
    "sum_wrapped_joint_states",
    "enable_command_limiting",
    "use_initial_states_as_initial_commands",
}
UPSTREAM_JOINT = {"mimic", "multiplier"}
UPSTREAM_PLUGINS = {
    "joint_state_topic_hardware_interface/JointStateTopicSystem",
    "topic_based_ros2_control/TopicBasedSystem",
}


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", PAGE, re.S | re.M)


def _check_block(root: ET.Element) -> None:
    assert root.tag == "ros2_control" and root.get("type") == "system"
    hardware = root.find("hardware")
    assert hardware.findtext("plugin").strip() in PLUGINS
    params = {p.get("name"): p.text for p in hardware.findall("param")}
    assert set(params) <= set(HARDWARE_PARAMETERS), set(params) - set(HARDWARE_PARAMETERS)
    for joint in root.findall("joint"):
        assert {p.get("name") for p in joint.findall("param")} <= set(JOINT_PARAMETERS)
        for interface in [*joint.findall("command_interface"), *joint.findall("state_interface")]:
            assert interface.get("name") in INTERFACES
            names = {p.get("name") for p in interface.findall("param")}
            assert names <= set(INTERFACE_PARAMETERS), names


def test_the_recorded_contract_is_the_upstream_one() -> None:
    assert set(HARDWARE_PARAMETERS) == UPSTREAM_HARDWARE
    assert set(JOINT_PARAMETERS) == UPSTREAM_JOINT
    assert set(PLUGINS) == UPSTREAM_PLUGINS
    assert HARDWARE_PARAMETERS["joint_commands_topic"] == "/robot_joint_commands"


def test_the_docs_block_uses_only_the_contracts_names_and_the_bridges_topics() -> None:
    blocks = [b for b in _blocks("xml") if "<ros2_control" in b]
    assert len(blocks) == 1
    root = ET.fromstring(blocks[0])
    _check_block(root)
    params = {p.get("name"): p.text for p in root.find("hardware").findall("param")}
    assert params == ROS2_CONTROL_TOPICS  # what `jointlab ros2 --ros2-control` uses
    assert [j.get("name") for j in root.findall("joint")] == list(ARM6.joint_names)
    assert blocks[0] == ros2_control_xml(ARM6)  # the page shows what the generator writes


def test_the_docs_controllers_name_the_robots_joints_and_interfaces() -> None:
    files = [yaml.safe_load(b) for b in _blocks("yaml")]
    controllers = next(f for f in files if "arm_controller" in f)
    arm = controllers["arm_controller"]["ros__parameters"]
    assert arm["joints"] == list(ARM6.joint_names)
    assert arm["command_interfaces"] == ["position"]
    assert set(arm["state_interfaces"]) <= set(INTERFACES)
    moveit = next(f for f in files if "moveit_simple_controller_manager" in f)
    assert moveit["moveit_simple_controller_manager"]["arm_controller"]["joints"] == arm["joints"]


@pytest.mark.parametrize("interface", ["position", "velocity", "effort"])
def test_every_generated_block_keeps_to_the_contract(interface: str) -> None:
    for name in ("arm6", "so101", "koch"):
        description = jointlab.load_robot(name)
        urdf = ET.fromstring(urdf_with_ros2_control(description, command_interface=interface))
        block = urdf.find("ros2_control")
        _check_block(block)
        assert all(
            j.find("command_interface").get("name") == interface for j in block.findall("joint")
        )
        joints = {j.get("name") for j in urdf.findall("joint")}
        assert {j.get("name") for j in block.findall("joint")} <= joints


def test_the_cli_prints_the_urdf_with_the_block_without_ros() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "jointlab", "ros2", "arm6", "--ros2-control", "--print-urdf"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    root = ET.fromstring(out)
    _check_block(root.find("ros2_control"))
    assert ET.tostring(root.find("ros2_control")) == ET.tostring(
        ET.fromstring(urdf_with_ros2_control(ARM6)).find("ros2_control")
    )
