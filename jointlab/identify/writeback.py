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
from jointlab.identify.parameters import FIELDS, field_path
from jointlab.robots import RobotDescription
from jointlab.robots.schema import description_from_dict
from jointlab.robots.serialize import description_to_dict

__all__ = ["DIGITS", "write_parameters"]

#: Significant digits written (estimates are far less certain than that).
DIGITS = 6


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
    data = description_to_dict(description)
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
        return description_from_dict(data, source=source or description.source)
    except DescriptionError as exc:
        raise IdentificationError(f"cannot write the identified values: {exc}") from exc
