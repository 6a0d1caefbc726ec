"""URDF import, as forgiving as PyBullet's own parser where that is safe.

Kinematics are kept exact: a joint origin that the parent element's single
``RPY(orientation)·T(length·x̂)`` slot cannot express is split into fixed elements named
``<joint>__origin`` (translation) and ``<joint>__origin_rot`` (remaining rotation).

What PyBullet accepts and JointLab now reads too (each deviation from strict URDF warns with
an :class:`URDFImportWarning` naming the file and the joint or link):

* numbers separated by whitespace **or commas** (``xyz="-0.69, 0, -0.42"``);
* leading whitespace before the XML declaration, a byte-order mark, NUL bytes after the end;
* a vector with **more numbers** than it needs (``rpy="0 1.57 0 0"``): the first three are
  used, as PyBullet does, with a warning;
* ``lower > upper`` in a ``<limit>``: the two are swapped, with a warning (PyBullet instead
  leaves such a joint without limits);
* a link without ``<inertial>`` gets 0.1 g; a tensor that is not a rigid body's is repaired;
* **spherical** joint ``j``: three rotary actuators ``j__rx``, ``j__ry``, ``j`` turning about
  the joint frame's x, y and z axes in that order (``R = Rx·Ry·Rz``), each range ±π; the
  two intermediate links are massless (0.1 g). Spherical cone limits are not carried;
* **planar** joint ``j`` (axis ``n``): linear actuators ``j__tu``, ``j__tv`` along two unit
  axes ``u``, ``v`` of the plane (``u`` ⟂ ``n``, ``v = n × u``), then rotary ``j`` about ``n``;
  ranges ±:data:`PLANAR_RANGE` m and ±π.

Refused with a clear error: unexpanded xacro (``$(...)``, ``${...}`` in an attribute or
text of the parsed document, or a ``xacro:`` element: expand the file first; inside XML
comments they are ignored, as PyBullet does), ``floating`` joints, more than one root link,
malformed XML.
"""

from __future__ import annotations

import math
import re
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import DescriptionError, quote
from jointlab.robots.description import BASE, RobotDescription
from jointlab.robots.plausible import MAX_LINKS, MAX_NAME_LENGTH, NAME_PATTERN
from jointlab.robots.schema import description_from_dict
from jointlab.robots.transforms import matrix_to_rpy, pose_matrix

__all__ = ["URDFImportWarning", "description_from_urdf"]

#: Mass and inertia given to links that carry none (and to massless intermediate links).
TINY_MASS = 1e-4
TINY_INERTIA = 1e-9
#: Range given to URDF ``continuous`` joints, radians.
CONTINUOUS_RANGE = 2.0 * math.pi
#: Range of the two translations a planar joint becomes, metres either way.
PLANAR_RANGE = 10.0
#: Largest URDF file read, bytes.
MAX_URDF_BYTES = 16 * 1024 * 1024
#: Suffix of the fixed joint JointLab's export gives each chain's tool frame.
TOOL_JOINT_SUFFIX = "_tool_joint"

_SEPARATORS = re.compile(r"[\s,]+")
_NUMBER_PREFIX = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_XACRO = re.compile(r"\$[({][^)}]*[)}]?")


class URDFImportWarning(UserWarning):
    """A URDF deviates from the format in a way the importer repaired (see the module)."""


def _warn(message: str) -> None:
    warnings.warn(message, URDFImportWarning, stacklevel=4)


def _float(token: str, where: str, text: str) -> float:
    """One number; like PyBullet (C ``strtod``), a valid prefix is read and the rest dropped."""
    try:
        return float(token)
    except ValueError:
        match = _NUMBER_PREFIX.match(token)
        if not match:
            raise DescriptionError(f"{where}: {token!r} is not a number (in {text!r})") from None
        _warn(f"{where}: {token!r} is not a number; reading {match.group(0)!r}, as PyBullet does")
        return float(match.group(0))


def _floats(text: str | None, count: int, default: float, where: str) -> np.ndarray:
    """``count`` numbers from an attribute: whitespace or commas between, extras dropped."""
    if text is None:
        return np.full(count, default)
    values = np.array([_float(p, where, text) for p in _SEPARATORS.split(text.strip()) if p])
    wanted = "a number" if count == 1 else f"{count} numbers"
    if values.shape[0] < count:
        raise DescriptionError(f"{where}: expected {wanted}, got {text!r}")
    if not np.all(np.isfinite(values)):
        raise DescriptionError(f"{where}: expected {wanted}, all finite, got {text!r}")
    if values.shape[0] > count:
        _warn(
            f"{where}: {values.shape[0]} numbers where {count} belong ({text!r}); using the "
            f"first {count}, as PyBullet does"
        )
        values = values[:count]
    return values


def _number(element: ET.Element | None, key: str, default: float, where: str) -> float:
    return float(
        _floats(None if element is None else element.get(key), 1, default, f"{where} {key}")[0]
    )


def _origin(element: ET.Element | None, where: str) -> np.ndarray:
    if element is None:
        return np.eye(4)
    xyz = _floats(element.get("xyz"), 3, 0.0, f"{where} origin xyz")
    rpy = _floats(element.get("rpy"), 3, 0.0, f"{where} origin rpy")
    return pose_matrix(xyz, rpy)


def _tiny() -> dict[str, Any]:
    return {
        "mass": TINY_MASS,
        "center_of_gravity": [0.0, 0.0, 0.0],
        "inertia": (np.eye(3) * TINY_INERTIA).tolist(),
    }


def _link_inertial(link: ET.Element | None, where: str) -> dict[str, Any]:
    inertial = None if link is None else link.find("inertial")
    mass = _number(None if inertial is None else inertial.find("mass"), "value", 0.0, where)
    if mass < 0:
        raise DescriptionError(f"{where}: child link mass {mass:g} kg is negative")
    if inertial is None or mass == 0:
        return _tiny()
    frame = _origin(inertial.find("origin"), where)
    tensor = inertial.find("inertia")
    i = {
        k: _number(tensor, k, 0.0, f"{where} inertia")
        for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    }
    local = np.array(
        [
            [i["ixx"], i["ixy"], i["ixz"]],
            [i["ixy"], i["iyy"], i["iyz"]],
            [i["ixz"], i["iyz"], i["izz"]],
        ]
    )
    inertia = frame[:3, :3] @ local @ frame[:3, :3].T
    inertia = (inertia + inertia.T) / 2.0
    eigen = np.linalg.eigvalsh(inertia)
    floor = TINY_INERTIA + 1e-6 * max(eigen[2], 0.0)  # ~0 in eigvalsh's rounding is not > 0
    if eigen[0] < floor:
        inertia = inertia + np.eye(3) * (floor - eigen[0])
        eigen = np.linalg.eigvalsh(inertia)
    if eigen[0] + eigen[1] < eigen[2] * (1.0 + 1e-5):
        # Not a rigid body's tensor, or on the edge where PyBullet's diagonalisation (to
        # ~1e-6) may zero it: add the least isotropic part that satisfies I1 + I2 >= I3 with
        # that margin. Kinematics are unaffected.
        inertia = inertia + np.eye(3) * (eigen[2] * (1.0 + 1e-4) - eigen[0] - eigen[1])
    return {"mass": mass, "center_of_gravity": frame[:3, 3].tolist(), "inertia": inertia.tolist()}


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
    first = np.column_stack([direction, *_plane(direction)])
    rest = first.T @ rotation
    return [(distance, matrix_to_rpy(first).tolist()), (0.0, matrix_to_rpy(rest).tolist())]


def _plane(normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors ``u``, ``v = n × u`` spanning the plane perpendicular to ``normal``."""
    helper = np.array([0.0, 0.0, 1.0]) if abs(normal[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    u = np.cross(helper, normal)
    u /= np.linalg.norm(u)
    return u, np.cross(normal, u)


def _check_expanded(root: ET.Element, source: str) -> None:
    """Refuse xacro left in the parsed document (comments, dropped by the parser, may hold any)."""
    parents = {child: parent for parent in root.iter() for child in parent}
    for element in root.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag.startswith("{") and "xacro" in tag[1 : tag.find("}")]:
            found = f"xacro element <xacro:{tag[tag.find('}') + 1 :]}>"
        else:
            values = [(f"attribute {name}", value) for name, value in element.attrib.items()]
            values.append(("text", element.text or ""))
            hits = [(where, _XACRO.search(value)) for where, value in values]
            hits = [(where, match) for where, match in hits if match]
            if not hits:
                continue
            found = f"{hits[0][0]}: unexpanded xacro substitution {hits[0][1].group(0)!r}"
        raise DescriptionError(
            f"{source}: {_element_path(element, parents)}: {found}; expand the file first, "
            "e.g. 'xacro robot.urdf.xacro > robot.urdf', and import the result"
        )


def _element_path(element: ET.Element, parents: dict[ET.Element, ET.Element]) -> str:
    """``<origin> of joint 'j'``: an element and its nearest named ancestor (for messages)."""

    def local(node: ET.Element) -> str:
        return str(node.tag).rpartition("}")[2]

    named = element
    while named is not None and named.get("name") is None:
        named = parents.get(named)
    if named is None:
        return f"<{local(element)}>"
    owner = f"{local(named)} {quote(named.get('name'), 60)}"
    return owner if named is element else f"<{local(element)}> of {owner}"


def description_from_urdf(path: str) -> RobotDescription:
    """Import a URDF file (see the module docstring for what it accepts and how)."""
    source = str(path)
    try:
        with open(source, "rb") as handle:
            data = handle.read(MAX_URDF_BYTES + 1)
    except OSError as exc:
        raise DescriptionError(f"{quote(source, 200)}: cannot read URDF: {exc.strerror}") from None
    except ValueError as exc:  # a NUL byte in the path
        raise DescriptionError(f"{quote(source, 200)}: not a valid file name: {exc}") from None
    if len(data) > MAX_URDF_BYTES:
        raise DescriptionError(f"{source}: URDF too large: more than {MAX_URDF_BYTES} bytes")
    text = data.decode("utf-8", errors="replace")
    text = text.lstrip("\ufeff \t\r\n").replace("\x00", "")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        hint = (
            "; it looks like xacro: expand the file first, e.g. 'xacro robot.urdf.xacro > "
            "robot.urdf'"
            if "xacro" in text
            else ""
        )
        raise DescriptionError(f"{source}: cannot read URDF: {exc}{hint}") from exc
    _check_expanded(root, source)
    try:
        return _description_from_tree(root, source)
    except DescriptionError:
        raise
    except (
        ValueError,
        AttributeError,
        TypeError,
        KeyError,
        OverflowError,
        np.linalg.LinAlgError,
    ) as exc:  # a missing tag or attribute
        raise DescriptionError(f"{source}: malformed URDF: {str(exc)[:200]}") from None


def _range(joint: ET.Element, kind: str, where: str) -> tuple[float, float]:
    limit = joint.find("limit")
    if kind == "continuous" or limit is None:
        return -CONTINUOUS_RANGE, CONTINUOUS_RANGE
    lo, hi = _number(limit, "lower", 0.0, where), _number(limit, "upper", 0.0, where)
    if lo > hi:
        _warn(
            f"{where}: limit lower {lo} > upper {hi}; using [{hi}, {lo}] (PyBullet leaves "
            "such a joint unlimited)"
        )
        lo, hi = hi, lo
    return lo, hi


def _actuated(joint: ET.Element, kind: str, where: str) -> dict[str, Any]:
    """Fields of a revolute, continuous or prismatic joint's element."""
    entry: dict[str, Any] = {"type": "linear" if kind == "prismatic" else "rotary"}
    axis = joint.find("axis")
    entry["axis"] = (
        _floats(axis.get("xyz"), 3, 0.0, f"{where} axis").tolist()
        if axis is not None
        else [1.0, 0.0, 0.0]
    )
    lo, hi = _range(joint, kind, where)
    entry.update(min=lo, max=hi, home=min(max(0.0, lo), hi))
    entry["centre"] = entry["home"] if lo <= 0 <= hi else (lo + hi) / 2
    limit = joint.find("limit")
    limits = {}
    for key in ("effort", "velocity"):
        value = _number(limit, key, 0.0, where)
        if value > 0:
            limits[key] = value
    entry["limits"] = limits
    dynamics = joint.find("dynamics")
    if dynamics is not None:
        entry["dynamics"] = {
            "damping": max(0.0, _number(dynamics, "damping", 0.0, where)),
            "static_friction": max(0.0, _number(dynamics, "friction", 0.0, where)),
        }
        if dynamics.get("armature") is not None:  # JointLab's own export
            entry["dynamics"]["armature"] = max(0.0, _number(dynamics, "armature", 0.0, where))
    mimic = joint.find("mimic")
    if mimic is not None:
        entry.update(_mimic(mimic, lo, hi, where))
    return entry


def _mimic(mimic: ET.Element, lo: float, hi: float, where: str) -> dict[str, Any]:
    """``home`` and ``coupling`` of a mimic joint: q = alpha*q_lead + offset."""
    offset = _number(mimic, "offset", 0.0, where)
    changes: dict[str, Any] = {}
    alpha_self = 0.0
    if lo <= offset <= hi and offset != 0.0:
        changes["home"], alpha_self = offset, 1.0
    elif offset != 0.0:  # offset = alpha_self * home with home in [lo, hi]
        home = lo if abs(lo) >= abs(hi) else hi
        if home == 0.0:
            raise DescriptionError(
                f"{where}: mimic offset {offset} cannot be represented as alpha_self * home "
                f"with home in [{lo}, {hi}]"
            )
        changes["home"], alpha_self = home, offset / home
    changes["coupling"] = {
        "alpha_self": alpha_self,
        "alpha_leading": {mimic.get("joint"): _number(mimic, "multiplier", 1.0, where)},
    }
    return changes


def _decomposed(joint: ET.Element, name: str, kind: str, where: str) -> list[dict[str, Any]]:
    """The single-axis actuators of a spherical or planar joint, parent first."""
    half_turn = {"type": "rotary", "min": -math.pi, "max": math.pi}
    if kind == "spherical":
        axes = [("__rx", [1.0, 0.0, 0.0]), ("__ry", [0.0, 1.0, 0.0]), ("", [0.0, 0.0, 1.0])]
        return [{"name": name + suffix, "axis": axis, **half_turn} for suffix, axis in axes]
    axis = joint.find("axis")
    normal = (
        _floats(axis.get("xyz"), 3, 0.0, f"{where} axis")
        if axis is not None
        else np.array([1.0, 0.0, 0.0])
    )
    norm = np.linalg.norm(normal)
    if norm < 1e-12:
        raise DescriptionError(f"{where}: a planar joint needs a non-zero axis")
    u, v = _plane(normal / norm)
    slide = {"type": "linear", "min": -PLANAR_RANGE, "max": PLANAR_RANGE}
    return [
        {"name": f"{name}__tu", "axis": u.tolist(), **slide},
        {"name": f"{name}__tv", "axis": v.tolist(), **slide},
        {"name": name, "axis": (normal / norm).tolist(), **half_turn},
    ]


def _is_exported_tool(
    joint: ET.Element, parent: dict[str, Any] | None, by_parent: dict[str, list[ET.Element]]
) -> bool:
    """True for the fixed ``<element>_tool_joint`` leaf JointLab's export adds per chain."""
    child = joint.find("child").get("link")  # type: ignore[union-attr]
    return (
        parent is not None
        and joint.get("type") == "fixed"
        and joint.get("name") == f"{parent['name']}{TOOL_JOINT_SUFFIX}"
        and child == f"{parent['name']}_tool"
        and not by_parent.get(child)
    )


def _robot_name(name: str, source: str) -> str:
    """The robot's name as a JointLab name (see :mod:`jointlab.robots.plausible`)."""
    if NAME_PATTERN.fullmatch(name) and len(name) <= MAX_NAME_LENGTH:
        return name
    cleaned = re.sub(r"[^A-Za-z0-9_.\-]", "_", name).lstrip(".-")[:MAX_NAME_LENGTH] or "robot"
    _warn(f"{source}: robot name {quote(name, 60)} is not a JointLab name; using {cleaned!r}")
    return cleaned


def _check_tree(links: dict[str | None, ET.Element], joints: list[ET.Element], source: str) -> str:
    """The root link; refuses closed chains, cycles and links the root does not reach."""
    if len(joints) > MAX_LINKS:
        raise DescriptionError(f"{source}: {len(joints)} joints, at most {MAX_LINKS}")
    parent_joint: dict[str, str] = {}
    for joint in joints:
        for tag in ("parent", "child"):
            element = joint.find(tag)
            if element is None or not element.get("link"):
                raise DescriptionError(
                    f'{source}: joint {quote(joint.get("name"), 60)} has no <{tag} link="..."/>'
                )
        child = joint.find("child").get("link")  # type: ignore[union-attr]
        if child in parent_joint:
            raise DescriptionError(
                f"{source}: link {quote(child, 60)} is the child of joints "
                f"{quote(parent_joint[child], 60)} and {quote(joint.get('name'), 60)}: a closed "
                "kinematic chain, which JointLab (like URDF) cannot represent"
            )
        parent_joint[child] = joint.get("name")
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        raise DescriptionError(
            f"{source}: expected exactly one root link, found {quote(roots, 200)}"
            + (" (the joints form a cycle)" if not roots else "")
        )
    children: dict[str, list[str]] = {}
    for joint in joints:
        parent = joint.find("parent").get("link")  # type: ignore[union-attr]
        children.setdefault(parent, []).append(joint.find("child").get("link"))  # type: ignore[union-attr,arg-type]
    reached, stack = {roots[0]}, [roots[0]]
    while stack:  # each link has at most one parent joint, so this visits each link once
        for child in children.get(stack.pop(), []):
            if child not in reached:
                reached.add(child)
                stack.append(child)
    unreached = sorted(name for name in parent_joint if name not in reached)
    if unreached:
        raise DescriptionError(
            f"{source}: links {quote(unreached, 200)} are not reached from the root link "
            f"{quote(roots[0], 60)} (their joints form a cycle or hang from an unknown link)"
        )
    return roots[0]  # type: ignore[return-value]


def _description_from_tree(root: ET.Element, source: str) -> RobotDescription:
    links = {link.get("name"): link for link in root.findall("link")}
    joints = root.findall("joint")
    roots = [_check_tree(links, joints, source)]
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
            if _is_exported_tool(joint, parent_entry, by_parent):
                if slots:  # the tool frame is the parent's end frame: length and orientation
                    parent_entry["length"], parent_entry["orientation"] = slots[0]  # type: ignore[index]
                continue
            parent_name = BASE if parent_entry is None else parent_entry["name"]
            if parent_entry is not None and len(outgoing) == 1 and slots:
                length, orientation = slots.pop(0)
                parent_entry["length"], parent_entry["orientation"] = length, orientation
            helpers: list[dict[str, Any]] = [
                {
                    "name": f"{name}__origin" + ("_rot" if k else ""),
                    "type": "fixed",
                    "length": length,
                    "orientation": orientation,
                    "link": _tiny(),
                }
                for k, (length, orientation) in enumerate(slots)
            ]
            child = joint.find("child").get("link")  # type: ignore[union-attr]
            inertial = _link_inertial(links.get(child), where)
            if kind in ("revolute", "continuous", "prismatic"):
                chain = [{"name": name, **_actuated(joint, kind, where)}]
            elif kind == "fixed":
                chain = [{"name": name, "type": "fixed"}]
            elif kind in ("spherical", "planar"):
                chain = _decomposed(joint, name, kind, where)
            else:
                raise DescriptionError(
                    f"{where}: joint type {kind!r} is not supported (revolute, continuous, "
                    "prismatic, fixed, spherical, planar)"
                )
            for element in chain[:-1]:
                element["link"] = _tiny()  # massless intermediate links
            chain[-1]["link"] = inertial
            for k, element in enumerate([*helpers, *chain]):
                element["parent"] = parent_name
                parent_name = element["name"]
                entries.append(element)
                keys.append((document_order[id(joint)], k))
            owner[child] = chain[-1]
            queue.append(child)
    entries = [entry for _, entry in sorted(zip(keys, entries, strict=True), key=lambda p: p[0])]
    name = _robot_name(root.get("name") or Path(source).stem, source)
    return description_from_dict({"name": name, "actuators": entries}, source=source)
