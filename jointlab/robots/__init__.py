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
from jointlab.robots.limits_update import apply_limits_update, with_limits
from jointlab.robots.schema import description_from_dict
from jointlab.robots.serialize import description_to_dict
from jointlab.robots.urdf_io import description_from_urdf, description_to_urdf
from jointlab.robots.yaml_io import (
    builtin_path,
    builtin_robots,
    description_digest,
    dump_yaml,
    load_robot,
    parse_yaml,
)

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
    "apply_limits_update",
    "builtin_path",
    "builtin_robots",
    "description_digest",
    "description_from_dict",
    "description_from_urdf",
    "description_to_dict",
    "description_to_urdf",
    "dump_yaml",
    "forward_kinematics",
    "load_robot",
    "parse_yaml",
    "position_jacobian",
    "tool_positions",
    "with_limits",
]
