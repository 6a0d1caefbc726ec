"""What a :class:`~jointlab.interop.ros2.bridge.Ros2Bridge` offers, and under which names.

Topic and service names follow ROS 2's rules: a name without a leading ``/`` is relative to
the node's namespace, ``~/x`` is private to the node. The defaults are the names ROS users
already use: ``/joint_states``, ``/joint_commands`` (the ``joint_state_topic_hardware_interface``
contract), ``/joint_trajectory``, ``/robot_description``, ``/clock``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields

from jointlab.errors import ConfigurationError

__all__ = ["QOS_RELIABILITY", "BridgeConfig"]

#: Reliability settings a topic's QoS may take.
QOS_RELIABILITY = ("reliable", "best_effort")

_NAME = re.compile(r"^(~/|/)?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
_NAMESPACE = re.compile(r"^(/[A-Za-z_][A-Za-z0-9_]*)*/?$")


@dataclass(frozen=True)
class BridgeConfig:
    """Names, rates and QoS of a bridge (every field has the default ROS users expect)."""

    #: The node's name.
    node_name: str = "jointlab"
    #: The node's namespace (``""`` or ``/``: the root); relative names resolve in it.
    namespace: str = ""
    #: ``sensor_msgs/JointState`` of the robot: names, position, velocity, effort.
    joint_states_topic: str = "/joint_states"
    #: ``sensor_msgs/JointState`` commands (position, velocity or effort fields).
    joint_commands_topic: str = "/joint_commands"
    #: ``trajectory_msgs/JointTrajectory`` to follow through the Commander.
    joint_trajectory_topic: str = "/joint_trajectory"
    #: ``std_msgs/String``: one JSON object per event (refusals, soft-limit entries, faults).
    events_topic: str = "~/events"
    #: ``std_msgs/String``: the robot's URDF, transient local (late joiners get it).
    robot_description_topic: str = "/robot_description"
    #: ``rosgraph_msgs/Clock`` of a simulated robot's time (for ``use_sim_time``).
    clock_topic: str = "/clock"
    #: ``std_srvs/Trigger`` services: arm, disarm, hold.
    arm_service: str = "~/arm"
    disarm_service: str = "~/disarm"
    hold_service: str = "~/hold"
    #: Joint states per second; ``None``: every control period. Must divide the control rate.
    rate: float | None = None
    #: Publish ``/clock`` (``None``: for simulated robots only).
    publish_clock: bool | None = None
    #: QoS reliability of the joint states (``"reliable"`` or ``"best_effort"``) and depth.
    state_reliability: str = "reliable"
    state_depth: int = 10
    #: QoS reliability and depth of the command and trajectory subscriptions.
    command_reliability: str = "reliable"
    command_depth: int = 10
    #: Seconds a velocity or effort stream runs without a new command before it holds.
    command_timeout: float = 0.5
    #: Wall seconds per robot second when pacing a simulated robot (1: real time).
    real_time_factor: float = 1.0

    def __post_init__(self) -> None:
        problems = []
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name.endswith(("_topic", "_service")) and not _NAME.match(str(value)):
                problems.append(
                    f"{item.name} {value!r} is not a ROS name (letters, digits, _ "
                    "and / separators, optionally ~/ or / first)"
                )
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", self.node_name):
            problems.append(f"node_name {self.node_name!r} is not a ROS node name")
        if not _NAMESPACE.match(self.namespace):
            problems.append(f"namespace {self.namespace!r} is not a ROS namespace (/a/b)")
        for name in ("state_reliability", "command_reliability"):
            if getattr(self, name) not in QOS_RELIABILITY:
                problems.append(
                    f"{name} {getattr(self, name)!r}: expected one of {list(QOS_RELIABILITY)}"
                )
        for name in ("state_depth", "command_depth"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                problems.append(f"{name} must be a whole number >= 1, got {getattr(self, name)!r}")
        for name in ("command_timeout", "real_time_factor"):
            if not (
                isinstance(getattr(self, name), (int, float)) and 0 < getattr(self, name) < math.inf
            ):
                problems.append(
                    f"{name} must be a finite number > 0 s, got {getattr(self, name)!r}"
                )
        if self.rate is not None and not (
            isinstance(self.rate, (int, float)) and 0 < self.rate < math.inf
        ):
            problems.append(f"rate must be a finite number > 0 Hz, got {self.rate!r}")
        if problems:
            raise ConfigurationError("ROS 2 bridge configuration: " + "; ".join(problems))

    def publish_every(self, control_dt: float) -> int:
        """Control periods between two joint-state messages at :attr:`rate`.

        Raises:
            ConfigurationError: the rate is above the control rate or does not divide it.
        """
        if self.rate is None:
            return 1
        control_rate = 1.0 / control_dt
        every = control_rate / self.rate
        if every < 1 - 1e-9 or abs(every - round(every)) > 1e-6 * every:
            raise ConfigurationError(
                f"rate {self.rate:g} Hz: the robot's control rate is {control_rate:g} Hz "
                f"(control_dt {control_dt:g} s); give a rate that divides it "
                f"({control_rate:g}, {control_rate / 2:g}, {control_rate / 4:g} Hz...) or "
                "change control_dt in the robot URL"
            )
        return max(1, round(every))
