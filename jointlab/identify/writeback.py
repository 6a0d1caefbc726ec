"""Writing fitted values into a robot description, and nothing else.

Identification changes exactly six fields of each joint; every other field of the robot file
stays as it was (the description is rebuilt from its own file form, so the result is
validated like a file).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from jointlab.errors import DescriptionError
from jointlab.identify.errors import IdentificationError
from jointlab.robots import RobotDescription

__all__ = ["FIELDS", "PARAMETERS", "UNITS", "write_parameters"]

#: Significant digits written (estimates are far less certain than that).
DIGITS = 6
#: Parameter name -> (section, key) of its robot-file field.
FIELDS: dict[str, tuple[str, str]] = {
    "static_friction": ("dynamics", "static_friction"),
    "damping": ("dynamics", "damping"),
    "armature": ("dynamics", "armature"),
    "delay": ("motor", "delay"),
    "torque_constant": ("motor", "torque_constant"),
    "effort": ("limits", "effort"),
}
#: Every parameter identification can fit, in report order.
PARAMETERS = tuple(FIELDS)
#: Units of each parameter for (rotary, linear) joints.
UNITS: dict[str, tuple[str, str]] = {
    "static_friction": ("N·m", "N"),
    "damping": ("N·m·s/rad", "N·s/m"),
    "armature": ("kg·m²", "kg"),
    "delay": ("steps", "steps"),
    "torque_constant": ("N·m/A", "N/A"),
    "effort": ("N·m", "N"),
}


def field_path(parameter: str) -> str:
    """``"dynamics.damping"`` for ``"damping"``."""
    section, key = FIELDS[parameter]
    return f"{section}.{key}"


def write_parameters(
    description: RobotDescription,
    values: Mapping[str, Mapping[str, float]],
    source: str | None = None,
) -> RobotDescription:
    """A copy of ``description`` with ``values[parameter][joint]`` written into the file fields.

    Args:
        description: The robot file to update.
        values: Parameter name (a key of :data:`FIELDS`) -> joint name -> value. ``delay``
            values are rounded to whole physics steps, the others to :data:`DIGITS`
            significant digits.
        source: ``source`` of the new description (default: the old one's).

    Raises:
        IdentificationError: an unknown parameter or joint, or a value the robot-file rules
            refuse (the message names the joint and field).
    """
    data = description.to_dict()
    entries = {entry["name"]: entry for entry in data["actuators"]}
    for parameter, per_joint in values.items():
        if parameter not in FIELDS:
            raise IdentificationError(
                f"unknown parameter {parameter!r}; expected one of {list(FIELDS)}"
            )
        section, key = FIELDS[parameter]
        for joint, value in per_joint.items():
            if joint not in description.joint_names:
                raise IdentificationError(
                    f"robot {description.name!r} has no joint {joint!r} to write "
                    f"{field_path(parameter)} into; joints: {list(description.joint_names)}"
                )
            entry = entries[joint]
            entry.setdefault(section, {})[key] = (
                int(np.rint(value)) if parameter == "delay" else float(f"{value:.{DIGITS}g}")
            )
            if parameter == "effort":
                soft = entry.get("soft_limits", {}).get("effort")
                if soft is not None and soft > value:
                    raise IdentificationError(
                        f"the identified limits.effort {value:.6g} of joint {joint!r} is below "
                        f"its soft_limits.effort {soft:.6g}: lower the soft limit in the robot "
                        "file first (the actuator cannot deliver it)"
                    )
    try:
        return RobotDescription.from_dict(data, source=source or description.source)
    except DescriptionError as exc:
        raise IdentificationError(f"cannot write the identified values: {exc}") from exc
