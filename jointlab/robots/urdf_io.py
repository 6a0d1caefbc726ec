"""URDF export (import: :mod:`jointlab.robots.urdf_import`, re-exported here).

Export (docs/robot-files.md): the base is link ``base_link`` at the base frame; each element
becomes a joint named after it whose child link ``<name>_link`` has the element's
moving frame ``F_i·M_i(q_i)``; each chain ends in a fixed link ``<last>_tool`` (joint
``<last>_tool_joint``, which the importer turns back into the chain's tool frame). Links
carry a capsule visual/collision along the link direction and the element's inertial.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np

from jointlab.robots.description import BASE, JointType, RobotDescription
from jointlab.robots.inertials import inertia_with_margin, realised_inertial
from jointlab.robots.transforms import matrix_to_rpy, rpy_matrix
from jointlab.robots.urdf_import import (
    CONTINUOUS_RANGE,
    TINY_INERTIA,
    TINY_MASS,
    description_from_urdf,
)

__all__ = [
    "CONTINUOUS_RANGE",
    "TINY_INERTIA",
    "TINY_MASS",
    "description_from_urdf",
    "description_to_urdf",
    "inertia_with_margin",
    "realised_inertial",
]


def _fmt(values: Any) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(values))


def _inertial_xml(parent: ET.Element, mass: float, cog: Any, inertia: Any) -> None:
    inertial = ET.SubElement(parent, "inertial")
    ET.SubElement(inertial, "origin", xyz=_fmt(cog), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=repr(float(mass)))
    i = np.asarray(inertia, dtype=np.float64).tolist()  # Python floats: repr is a plain number
    ET.SubElement(
        inertial,
        "inertia",
        ixx=repr(i[0][0]),
        ixy=repr(i[0][1]),
        ixz=repr(i[0][2]),
        iyy=repr(i[1][1]),
        iyz=repr(i[1][2]),
        izz=repr(i[2][2]),
    )


def _capsule_xml(parent: ET.Element, length: float, orientation: Any, radius: float) -> None:
    rotation = rpy_matrix(np.asarray(orientation))
    centre = rotation @ np.array([length / 2.0, 0.0, 0.0])
    # The URDF capsule's axis is z; Ry(pi/2) turns z onto the link direction x.
    capsule_rpy = matrix_to_rpy(rotation @ rpy_matrix(np.array([0.0, math.pi / 2.0, 0.0])))
    for tag in ("visual", "collision"):
        element = ET.SubElement(parent, tag)
        ET.SubElement(element, "origin", xyz=_fmt(centre), rpy=_fmt(capsule_rpy))
        geometry = ET.SubElement(element, "geometry")
        if length > 0:
            ET.SubElement(geometry, "capsule", radius=repr(radius), length=repr(float(length)))
        else:
            ET.SubElement(geometry, "sphere", radius=repr(radius))


def _offset_origin(length: float, orientation: Any) -> dict[str, str]:
    rotation = rpy_matrix(np.asarray(orientation))
    return {"xyz": _fmt(rotation @ np.array([length, 0.0, 0.0])), "rpy": _fmt(orientation)}


def description_to_urdf(description: RobotDescription, *, armature: bool = False) -> str:
    """URDF text of ``description``; loading it in PyBullet reproduces the FK exactly.

    Args:
        description: The robot.
        armature: Realise ``dynamics.armature`` in the link inertials (see
            :func:`realised_inertial`), as the simulator does. URDF has no joint armature,
            so a plain export leaves it out.
    """
    robot = ET.Element("robot", name=description.name)
    base = ET.SubElement(robot, "link", name="base_link")
    r = description.base.radius
    m = description.base.mass
    _inertial_xml(base, m, (0.0, 0.0, 0.0), np.diag([m * r * r / 2, m * r * r / 2, m * r * r / 2]))
    for tag in ("visual", "collision"):
        element = ET.SubElement(base, tag)
        ET.SubElement(element, "origin", xyz="0 0 0", rpy="0 0 0")
        ET.SubElement(
            ET.SubElement(element, "geometry"), "cylinder", radius=repr(r), length=repr(r)
        )
    specs = {s.name: s for s in description.actuators}
    children = description.children
    for spec in description.actuators:
        link = ET.SubElement(robot, "link", name=f"{spec.name}_link")
        if spec.link is not None:
            inertial = (
                realised_inertial(spec)
                if armature
                else (spec.link.mass, spec.link.center_of_gravity, spec.link.inertia)
            )
            _inertial_xml(link, *inertial)
            _capsule_xml(link, spec.length, spec.orientation, spec.link.radius)
        kind = {
            JointType.ROTARY: "revolute",
            JointType.LINEAR: "prismatic",
            JointType.FIXED: "fixed",
        }
        joint = ET.SubElement(robot, "joint", name=spec.name, type=kind[spec.type])
        parent_link = "base_link" if spec.parent == BASE else f"{spec.parent}_link"
        ET.SubElement(joint, "parent", link=parent_link)
        ET.SubElement(joint, "child", link=f"{spec.name}_link")
        if spec.parent == BASE:
            ET.SubElement(joint, "origin", xyz="0 0 0", rpy="0 0 0")
        else:
            parent = specs[spec.parent]
            ET.SubElement(joint, "origin", **_offset_origin(parent.length, parent.orientation))
        if spec.is_joint:
            ET.SubElement(joint, "axis", xyz=_fmt(spec.axis))
            ET.SubElement(
                joint,
                "limit",
                lower=repr(spec.min),
                upper=repr(spec.max),
                effort=repr(spec.limits.effort),
                velocity=repr(spec.limits.velocity),
            )
            ET.SubElement(
                joint,
                "dynamics",
                damping=repr(spec.dynamics.damping),
                friction=repr(spec.dynamics.static_friction),
                armature=repr(spec.dynamics.armature),
            )
            if spec.coupling is not None and len(spec.coupling.alpha_leading) == 1:
                ((lead, alpha),) = spec.coupling.alpha_leading
                ET.SubElement(
                    joint,
                    "mimic",
                    joint=lead,
                    multiplier=repr(alpha),
                    offset=repr(spec.coupling.alpha_self * spec.home),
                )
        if not children[spec.name]:
            tool = ET.SubElement(robot, "link", name=f"{spec.name}_tool")
            _inertial_xml(tool, TINY_MASS, (0.0, 0.0, 0.0), np.eye(3) * TINY_INERTIA)
            tool_joint = ET.SubElement(robot, "joint", name=f"{spec.name}_tool_joint", type="fixed")
            ET.SubElement(tool_joint, "parent", link=f"{spec.name}_link")
            ET.SubElement(tool_joint, "child", link=f"{spec.name}_tool")
            ET.SubElement(tool_joint, "origin", **_offset_origin(spec.length, spec.orientation))
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
