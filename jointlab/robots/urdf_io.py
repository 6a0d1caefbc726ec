"""URDF export and import.

Export (docs/robot-files.md): the base is link ``base_link`` at the base frame; each
element becomes a joint named after it whose child link ``<name>_link`` has the element's
moving frame ``F_i·M_i(q_i)``; each chain ends in a fixed link ``<last>_tool``. Links carry a
capsule visual/collision along the link direction and the element's inertial.

Import keeps the URDF's kinematics exact: a joint origin that the parent element's single
``RPY(orientation)·T(length·x̂)`` slot cannot express is split into fixed elements named
``<joint>__origin`` (translation) and ``<joint>__origin_rot`` (remaining rotation).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import DescriptionError
from jointlab.robots.description import BASE, ActuatorSpec, JointType, RobotDescription
from jointlab.robots.schema import description_from_dict
from jointlab.robots.transforms import matrix_to_rpy, pose_matrix, rpy_matrix

#: Mass and inertia given to links that carry none (tool links, massless URDF links).
TINY_MASS = 1e-4
TINY_INERTIA = 1e-9
#: Relative margin by which a realised inertia satisfies the triangle inequality.
REALISED_SLACK = 1e-4
#: Range given to URDF ``continuous`` joints, radians.
CONTINUOUS_RANGE = 2.0 * math.pi


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
    """
    if spec.link is None:
        raise DescriptionError(f"actuator {spec.name!r} has no link inertial")
    mass = spec.link.mass
    inertia = np.array(spec.link.inertia, dtype=np.float64)
    armature = spec.dynamics.armature if spec.is_joint else 0.0
    if armature <= 0.0:
        return mass, spec.link.center_of_gravity, inertia
    if spec.type is JointType.LINEAR:
        return mass + armature, spec.link.center_of_gravity, inertia
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


# ---------------------------------------------------------------------------- import
def _floats(text: str | None, count: int, default: float, where: str) -> np.ndarray:
    if text is None:
        return np.full(count, default)
    try:
        values = np.array([float(v) for v in text.split()])
    except ValueError as exc:
        raise DescriptionError(f"{where}: expected {count} numbers, got {text!r}") from exc
    if values.shape != (count,):
        raise DescriptionError(f"{where}: expected {count} numbers, got {text!r}")
    return values


def _origin(element: ET.Element | None, where: str) -> np.ndarray:
    if element is None:
        return np.eye(4)
    xyz = _floats(element.get("xyz"), 3, 0.0, f"{where} origin xyz")
    rpy = _floats(element.get("rpy"), 3, 0.0, f"{where} origin rpy")
    return pose_matrix(xyz, rpy)


def _link_inertial(link: ET.Element | None, where: str) -> dict[str, Any]:
    inertial = None if link is None else link.find("inertial")
    mass = 0.0
    if inertial is not None and inertial.find("mass") is not None:
        mass = float(inertial.find("mass").get("value", "0"))  # type: ignore[union-attr]
    if inertial is None or mass <= 0:
        return {
            "mass": TINY_MASS,
            "center_of_gravity": [0.0, 0.0, 0.0],
            "inertia": (np.eye(3) * TINY_INERTIA).tolist(),
        }
    frame = _origin(inertial.find("origin"), where)
    tensor = inertial.find("inertia")
    get = (lambda k: float(tensor.get(k, "0"))) if tensor is not None else (lambda k: 0.0)
    local = np.array(
        [
            [get("ixx"), get("ixy"), get("ixz")],
            [get("ixy"), get("iyy"), get("iyz")],
            [get("ixz"), get("iyz"), get("izz")],
        ]
    )
    inertia = frame[:3, :3] @ local @ frame[:3, :3].T
    inertia = (inertia + inertia.T) / 2.0
    eigen = np.linalg.eigvalsh(inertia)
    if eigen.min() <= 0:
        inertia = inertia + np.eye(3) * (TINY_INERTIA - min(eigen.min(), 0.0))
        eigen = np.linalg.eigvalsh(inertia)
    if eigen[0] + eigen[1] < eigen[2]:
        # Not a rigid body's tensor (PyBullet would zero it): add the least isotropic part
        # that satisfies I1 + I2 >= I3. Kinematics are unaffected.
        inertia = inertia + np.eye(3) * (eigen[2] - eigen[0] - eigen[1]) * (1.0 + 1e-9)
    return {
        "mass": mass,
        "center_of_gravity": frame[:3, 3].tolist(),
        "inertia": inertia.tolist(),
    }


def _slots(transform: np.ndarray) -> list[tuple[float, list[float]]]:
    """Split a transform into (length, orientation) offset slots ``RPY(o)·T(l·x̂)``."""
    rotation, translation = transform[:3, :3], transform[:3, 3]
    distance = float(np.linalg.norm(translation))
    rpy = matrix_to_rpy(rotation).tolist()
    if distance < 1e-12:
        return [] if np.allclose(rotation, np.eye(3), atol=1e-15) else [(0.0, rpy)]
    direction = translation / distance
    if np.allclose(rotation[:, 0], direction, atol=1e-12):
        return [(distance, rpy)]
    # First slot: a rotation whose x axis points along the translation, then the remainder.
    helper = np.array([0.0, 0.0, 1.0]) if abs(direction[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    y_axis = np.cross(helper, direction)
    y_axis /= np.linalg.norm(y_axis)
    first = np.column_stack([direction, y_axis, np.cross(direction, y_axis)])
    rest = first.T @ rotation
    return [(distance, matrix_to_rpy(first).tolist()), (0.0, matrix_to_rpy(rest).tolist())]


def description_from_urdf(path: str) -> RobotDescription:
    """Import a URDF (serial or tree; revolute, continuous, prismatic and fixed joints)."""
    source = str(path)
    try:
        root = ET.parse(source).getroot()
    except (OSError, ET.ParseError) as exc:
        raise DescriptionError(f"{source}: cannot read URDF: {exc}") from exc
    try:
        return _description_from_tree(root, source)
    except DescriptionError:
        raise
    except (ValueError, AttributeError) as exc:  # a malformed number or a missing tag
        raise DescriptionError(f"{source}: malformed URDF: {exc}") from exc


def _description_from_tree(root: ET.Element, source: str) -> RobotDescription:
    links = {link.get("name"): link for link in root.findall("link")}
    joints = root.findall("joint")
    child_links = {j.find("child").get("link") for j in joints}  # type: ignore[union-attr]
    roots = [name for name in links if name not in child_links]
    if len(roots) != 1:
        raise DescriptionError(f"{source}: expected exactly one root link, found {roots}")
    by_parent: dict[str, list[ET.Element]] = {}
    for joint in joints:
        by_parent.setdefault(joint.find("parent").get("link"), []).append(joint)  # type: ignore[union-attr]

    entries: list[dict[str, Any]] = []
    # Elements keep the URDF's joint order (helpers just before their joint), not BFS order.
    document_order = {id(joint): k for k, joint in enumerate(joints)}
    keys: list[tuple[int, int]] = []
    owner: dict[str, dict[str, Any] | None] = {roots[0]: None}  # link -> element that moves it
    queue = [roots[0]]
    while queue:
        link_name = queue.pop(0)
        outgoing = by_parent.get(link_name, [])
        parent_entry = owner[link_name]
        for joint in outgoing:
            name = joint.get("name")
            kind = joint.get("type")
            where = f"{source}: joint {name!r}"
            slots = _slots(_origin(joint.find("origin"), where))
            parent_name = BASE if parent_entry is None else parent_entry["name"]
            if parent_entry is not None and len(outgoing) == 1 and slots:
                length, orientation = slots.pop(0)
                parent_entry["length"], parent_entry["orientation"] = length, orientation
            for k, (length, orientation) in enumerate(slots):
                helper = f"{name}__origin" + ("_rot" if k else "")
                entries.append({
                    "name": helper, "type": "fixed", "parent": parent_name, "length": length,
                    "orientation": orientation, "link": _link_inertial(None, where),
                })  # fmt: skip
                keys.append((document_order[id(joint)], k))
                parent_name = helper
            child = joint.find("child").get("link")  # type: ignore[union-attr]
            entry: dict[str, Any] = {"name": name, "parent": parent_name,
                                     "link": _link_inertial(links.get(child), where)}  # fmt: skip
            if kind in ("revolute", "continuous", "prismatic"):
                entry["type"] = "linear" if kind == "prismatic" else "rotary"
                entry["axis"] = (
                    _floats(
                        (joint.find("axis").get("xyz") if joint.find("axis") is not None else None),
                        3,
                        0.0,
                        f"{where} axis",
                    ).tolist()
                    if joint.find("axis") is not None
                    else [1.0, 0.0, 0.0]
                )
                limit = joint.find("limit")
                if kind == "continuous" or limit is None:
                    lo, hi = -CONTINUOUS_RANGE, CONTINUOUS_RANGE
                else:
                    lo, hi = float(limit.get("lower", "0")), float(limit.get("upper", "0"))
                    if lo > hi:
                        raise DescriptionError(f"{where}: limit lower {lo} > upper {hi}")
                entry.update(min=lo, max=hi, home=min(max(0.0, lo), hi))
                entry["centre"] = entry["home"] if lo <= 0 <= hi else (lo + hi) / 2
                limits = {}
                if limit is not None:
                    for key, urdf_key in (("effort", "effort"), ("velocity", "velocity")):
                        value = float(limit.get(urdf_key, "0"))
                        if value > 0:
                            limits[key] = value
                entry["limits"] = limits
                dynamics = joint.find("dynamics")
                if dynamics is not None:
                    entry["dynamics"] = {
                        "damping": max(0.0, float(dynamics.get("damping", "0"))),
                        "static_friction": max(0.0, float(dynamics.get("friction", "0"))),
                    }
                    if dynamics.get("armature") is not None:  # JointLab's own export
                        entry["dynamics"]["armature"] = max(0.0, float(dynamics.get("armature")))
                mimic = joint.find("mimic")
                if mimic is not None:
                    offset = float(mimic.get("offset", "0"))
                    alpha_self = 0.0
                    if lo <= offset <= hi and offset != 0.0:
                        entry["home"], alpha_self = offset, 1.0
                    elif offset != 0.0:  # offset = alpha_self * home with home in [lo, hi]
                        home = lo if abs(lo) >= abs(hi) else hi
                        if home == 0.0:
                            raise DescriptionError(
                                f"{where}: mimic offset {offset} cannot be represented as "
                                f"alpha_self * home with home in [{lo}, {hi}]"
                            )
                        entry["home"], alpha_self = home, offset / home
                    entry["coupling"] = {
                        "alpha_self": alpha_self,
                        "alpha_leading": {mimic.get("joint"): float(mimic.get("multiplier", "1"))},
                    }
            elif kind == "fixed":
                entry["type"] = "fixed"
            else:
                raise DescriptionError(
                    f"{where}: joint type {kind!r} is not supported "
                    "(revolute, continuous, prismatic, fixed)"
                )
            entries.append(entry)
            keys.append((document_order[id(joint)], len(slots)))
            owner[child] = entry
            queue.append(child)
    entries = [entry for _, entry in sorted(zip(keys, entries, strict=True), key=lambda p: p[0])]
    name = root.get("name") or Path(source).stem
    return description_from_dict({"name": name, "actuators": entries}, source=source)
