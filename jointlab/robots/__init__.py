"""Robot descriptions: the model, validation, YAML and URDF I/O, kinematics, built-ins."""

from jointlab.robots.description import (
    ActuatorGeometry,
    ActuatorSpec,
    ArrayGeometry,
    Base,
    Coupling,
    Dynamics,
    Gains,
    JointLimits,
    JointLimitsUpdate,
    JointType,
    Limits,
    LinkInertial,
    Motor,
    MotorModel,
    RobotDescription,
    SoftLimits,
)
from jointlab.robots.kinematics import (
    Kinematics,
    forward_kinematics,
    position_jacobian,
    tool_positions,
)
from jointlab.robots.yaml_io import builtin_path, builtin_robots, load_robot, parse_yaml

__all__ = [
    "ActuatorGeometry",
    "ActuatorSpec",
    "ArrayGeometry",
    "Base",
    "Coupling",
    "Dynamics",
    "Gains",
    "JointLimits",
    "JointLimitsUpdate",
    "JointType",
    "Kinematics",
    "Limits",
    "LinkInertial",
    "Motor",
    "MotorModel",
    "RobotDescription",
    "SoftLimits",
    "builtin_path",
    "builtin_robots",
    "forward_kinematics",
    "load_robot",
    "parse_yaml",
    "position_jacobian",
    "tool_positions",
]
