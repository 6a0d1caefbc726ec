"""The ``<ros2_control>`` block that drives a JointLab robot from a ros2_control system.

ros2_control's lightest way to an outside robot is ``joint_state_topic_hardware_interface``
(package ``joint_state_topic_hardware_interface`` of ros-controls/topic_based_hardware_interfaces;
formerly PickNik's ``topic_based_ros2_control``): its ``write()`` publishes the command
interfaces as a ``sensor_msgs/JointState`` on ``joint_commands_topic`` and its ``read()``
takes the joint states from ``joint_states_topic``. The bridge is the other end:
:func:`ros2_control_xml` writes the block for a robot, and :func:`urdf_with_ros2_control` the
robot's URDF with it, for the controller manager.

The parameter names below are the ones that package reads (its ``on_init``); the docs'
configuration is checked against them by the tests.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from jointlab.errors import ConfigurationError
from jointlab.robots.description import RobotDescription
from jointlab.robots.urdf_io import description_to_urdf

__all__ = [
    "HARDWARE_PARAMETERS",
    "INTERFACES",
    "INTERFACE_PARAMETERS",
    "JOINT_PARAMETERS",
    "PLUGINS",
    "ROS2_CONTROL_TOPICS",
    "ros2_control_xml",
    "urdf_with_ros2_control",
]

#: ``<hardware>`` parameters of the contract and their defaults there:
#: joint_state_topic_hardware_interface's ``on_init`` (the first five) and
#: topic_based_ros2_control's (``use_initial_states_as_initial_commands``).
HARDWARE_PARAMETERS: dict[str, str] = {
    "joint_commands_topic": "/robot_joint_commands",
    "joint_states_topic": "/robot_joint_states",
    "trigger_joint_command_threshold": "1e-5",
    "sum_wrapped_joint_states": "false",
    "enable_command_limiting": "false",
    "use_initial_states_as_initial_commands": "false",
}
#: Per-joint parameters of the contract (mimic joints).
JOINT_PARAMETERS = ("mimic", "multiplier")
#: Per-interface parameters (ros2_control's own ``InterfaceInfo``).
INTERFACE_PARAMETERS = ("initial_value", "min", "max")
#: The standard interfaces the contract exchanges (acceleration has no JointState field).
INTERFACES = ("position", "velocity", "acceleration", "effort")
#: The plugin names of the contract: the ros-controls package and PickNik's original.
PLUGINS = (
    "joint_state_topic_hardware_interface/JointStateTopicSystem",
    "topic_based_ros2_control/TopicBasedSystem",
)
#: The bridge's topics beside a controller manager (``jointlab ros2 --ros2-control``): the
#: joint_state_broadcaster publishes ``/joint_states`` there, so the robot's own go elsewhere.
ROS2_CONTROL_TOPICS = {
    "joint_states_topic": "/jointlab/joint_states",
    "joint_commands_topic": "/jointlab/joint_commands",
}


def ros2_control_xml(
    description: RobotDescription,
    *,
    command_interface: str = "position",
    joint_states_topic: str = ROS2_CONTROL_TOPICS["joint_states_topic"],
    joint_commands_topic: str = ROS2_CONTROL_TOPICS["joint_commands_topic"],
    plugin: str = PLUGINS[0],
    name: str | None = None,
) -> str:
    """The ``<ros2_control>`` block of ``description`` for the topic contract.

    Every independent joint gets one command interface and position, velocity and effort
    state interfaces; the position command starts at the joint's ``home`` (``initial_value``),
    so the first commands the controller manager publishes are the home pose, not zeros.

    Args:
        description: The robot.
        command_interface: ``"position"``, ``"velocity"`` or ``"effort"``.
        joint_states_topic: Where the bridge publishes the joint states.
        joint_commands_topic: Where the bridge takes the commands.
        plugin: One of :data:`PLUGINS`.
        name: The block's name (default: the robot's name).

    Raises:
        ConfigurationError: an unknown interface or plugin.
    """
    if command_interface not in ("position", "velocity", "effort"):
        raise ConfigurationError(
            f"command_interface {command_interface!r}: expected 'position', 'velocity' or 'effort'"
        )
    if plugin not in PLUGINS:
        raise ConfigurationError(f"plugin {plugin!r}: expected one of {list(PLUGINS)}")
    lines = [
        f'<ros2_control name="{escape(name or description.name)}" type="system">',
        "  <hardware>",
        f"    <plugin>{plugin}</plugin>",
        f'    <param name="joint_commands_topic">{escape(joint_commands_topic)}</param>',
        f'    <param name="joint_states_topic">{escape(joint_states_topic)}</param>',
        "  </hardware>",
    ]
    for j, joint in enumerate(description.joint_names):
        if description.dependent[j]:
            continue
        home = float(description.home[j])
        initial = (
            f'\n      <param name="initial_value">{home:.9g}</param>\n    '
            if command_interface == "position"
            else ""
        )
        lines += [
            f'  <joint name="{escape(joint)}">',
            f'    <command_interface name="{command_interface}">{initial}</command_interface>',
            '    <state_interface name="position">',
            f'      <param name="initial_value">{home:.9g}</param>',
            "    </state_interface>",
            '    <state_interface name="velocity"/>',
            '    <state_interface name="effort"/>',
            "  </joint>",
        ]
    lines.append("</ros2_control>")
    return "\n".join(lines) + "\n"


def urdf_with_ros2_control(description: RobotDescription, **options: str) -> str:
    """The robot's URDF (``description_to_urdf``) with :func:`ros2_control_xml` inside."""
    urdf = description_to_urdf(description)
    end = urdf.rindex("</robot>")
    block = "".join(f"  {line}\n" for line in ros2_control_xml(description, **options).splitlines())
    return urdf[:end] + block + urdf[end:]
