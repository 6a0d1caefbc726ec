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

from jointlab.errors import DescriptionError
from jointlab.robots.description import BASE, ActuatorSpec, JointType, RobotDescription
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

#: Relative margin by which a realised inertia satisfies the triangle inequality.
REALISED_SLACK = 1e-4


def _fmt(values: Any) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(values))


def _inertial_xml(parent: ET.Element, mass: float, cog: Any, inertia: Any) -> None:
    inertial = ET.SubElement(parent, "inertial")
    ET.SubElement(inertial, "origin", xyz=_fmt(cog), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=repr(float(mass)))
    i = np.asarray(inertia, dtype=np.float64).tolist()  # Python floats: repr is a plain number
    ET.SubElement(
        inertial, "inertia",
        ixx=repr(i[0][0]), ixy=repr(i[0][1]), ixz=repr(i[0][2]),
        iyy=repr(i[1][1]), iyz=repr(i[1][2]), izz=repr(i[2][2]),
    )  # fmt: skip


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


def inertia_with_margin(inertia: np.ndarray) -> np.ndarray:
    """``inertia`` (kg·m²), moved :data:`REALISED_SLACK` inside the triangle inequality.

    Adds the smallest ``c·1`` giving ``I1 + I2 >= I3 + slack/2`` (the armature case's test);
    a tensor already that far inside is returned as it is. Both engines load link tensors
    through it: PyBullet zeroes a tensor it finds non-physical and MuJoCo refuses to compile
    one, while a description may lie within 1e-9 of the inequality.
    """
    eigen = np.linalg.eigvalsh(inertia)
    short = eigen[2] + REALISED_SLACK * eigen[2] / 2.0 - eigen[0] - eigen[1]
    return inertia if short <= 0.0 else inertia + short * np.eye(3)  # c·1 adds c to each side


def realised_inertial(spec: ActuatorSpec) -> tuple[float, Any, np.ndarray]:
    """Mass (kg), centre of gravity (m) and inertia (kg·m²) of a link with its armature.

    A rigid-body engine without joint armature (PyBullet) gets the reflected rotor inertia
    ``A = dynamics.armature`` as part of the link the joint moves:

    * rotary: ``A·u·uᵀ`` about the joint axis ``u`` (in the moving frame, the axis is
      unchanged by the joint's own rotation), plus the smallest ``c·(1 − u·uᵀ)`` that keeps
      the tensor physical (triangle inequality, ``c <= A/2``, the transverse inertia of a
      disc rotor). So joint ``i`` feels exactly ``+A``; joints further up feel the added
      tensor too when they turn the link about a parallel axis (``+A``) or a transverse one
      (``+c``): the approximation of modelling the rotor as part of the link.
    * linear: ``A`` kg added to the link's mass at its centre of gravity (no rotational
      inertia). The simulator cancels this mass's weight every physics step (see
      ``jointlab.sim``), so it adds inertia and no load.

    Either way the tensor keeps a margin :data:`REALISED_SLACK` inside the triangle
    inequality: PyBullet sets the inertia of a link whose diagonalised tensor it finds
    non-physical to zero, and a description may lie within 1e-9 of the inequality (what its
    check allows). Such a tensor gets the smallest isotropic ``c·1`` that restores the
    margin (at most ``REALISED_SLACK`` of its largest principal moment); any other is
    unchanged.
    """
    if spec.link is None:
        raise DescriptionError(f"actuator {spec.name!r} has no link inertial")
    mass = spec.link.mass
    inertia = np.array(spec.link.inertia, dtype=np.float64)
    armature = spec.dynamics.armature if spec.is_joint else 0.0
    if armature <= 0.0:
        return mass, spec.link.center_of_gravity, inertia_with_margin(inertia)
    if spec.type is JointType.LINEAR:
        return mass + armature, spec.link.center_of_gravity, inertia_with_margin(inertia)
    u = np.array(spec.axis, dtype=np.float64)
    along = np.outer(u, u)
    across = np.eye(3) - along
    on_axis = float(u @ inertia @ u)
    spare = float(np.trace(inertia)) - 2.0 * on_axis  # I_p1 + I_p2 - I_u about u
    # PyBullet diagonalises to ~1e-6 and zeroes a tensor it finds non-physical: keep a slack.
    slack = REALISED_SLACK * (on_axis + armature)
    for extra in (max(0.0, (armature - spare + slack) / 2.0), (armature + slack) / 2.0):
        result = inertia + armature * along + extra * across
        eigen = np.linalg.eigvalsh(result)
        if eigen[0] + eigen[1] >= eigen[2] + slack / 2.0:
            break
    return mass, spec.link.center_of_gravity, result  # A/2 (a disc) always satisfies it


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
            inertial = (realised_inertial(spec) if armature else
                        (spec.link.mass, spec.link.center_of_gravity, spec.link.inertia))
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
                joint, "limit", lower=repr(spec.min), upper=repr(spec.max),
                effort=repr(spec.limits.effort), velocity=repr(spec.limits.velocity),
            )  # fmt: skip
            ET.SubElement(
                joint, "dynamics", damping=repr(spec.dynamics.damping),
                friction=repr(spec.dynamics.static_friction),
                armature=repr(spec.dynamics.armature),
            )  # fmt: skip
            if spec.coupling is not None and len(spec.coupling.alpha_leading) == 1:
                ((lead, alpha),) = spec.coupling.alpha_leading
                ET.SubElement(
                    joint, "mimic", joint=lead, multiplier=repr(alpha),
                    offset=repr(spec.coupling.alpha_self * spec.home),
                )  # fmt: skip
        if not children[spec.name]:
            tool = ET.SubElement(robot, "link", name=f"{spec.name}_tool")
            _inertial_xml(tool, TINY_MASS, (0.0, 0.0, 0.0), np.eye(3) * TINY_INERTIA)
            tool_joint = ET.SubElement(robot, "joint", name=f"{spec.name}_tool_joint", type="fixed")
            ET.SubElement(tool_joint, "parent", link=f"{spec.name}_link")
            ET.SubElement(tool_joint, "child", link=f"{spec.name}_tool")
            ET.SubElement(tool_joint, "origin", **_offset_origin(spec.length, spec.orientation))
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
