"""MJCF (MuJoCo's model format) generated from a :class:`RobotDescription`.

The frames are those of the exported URDF (docs/robot-files.md): body ``base_link`` at the
base frame (with a free joint when the base is not fixed); each element a body
``<name>_link`` whose frame is the element's moving frame ``F_i·M_i(q_i)``, placed at its
parent's ``RPY(orientation)·T(length·x̂)``; each chain's tool frame a site ``<leaf>_tool``.
Mass properties, capsule geoms and joint axes are the description's, so the forward
kinematics match ``jointlab.robots.forward_kinematics`` exactly.

What each description field becomes (all native MuJoCo, nothing evaluated in Python):

==============================  =========================================================
description                     MJCF
==============================  =========================================================
rotary / linear actuator        ``hinge`` / ``slide`` joint with ``axis``
``min``, ``max``                ``range`` (hard stops, a stiffened limit constraint)
``dynamics.damping``            ``damping`` (integrated implicitly by MuJoCo's Euler)
``dynamics.static_friction``    ``frictionloss`` (dry friction, a stiffened constraint)
``dynamics.armature``           ``armature`` (reflected rotor inertia), when present
``limits.effort``               ``actuatorfrcrange`` on the joint (clamps the total)
the NJointAction law            ``general`` actuator ``<joint>``: ``ctrl + b1*q + b2*qd``
``dc_motor`` torque-speed lines  actuators ``<joint>/dc_high``, ``<joint>/dc_low``
``has_brakes``                  joint equality ``<joint>/brake`` (off until engaged)
coupling, one leader            joint equality ``<dep>/coupling``: ``q = a0 + a1*q_lead``
coupling, several leaders       fixed tendon + tendon equality ``<dep>/coupling``
``link``                        ``inertial`` (full tensor, kept 1e-4 inside the triangle
                                inequality) and a capsule geom
``base.fixed: false``           ``freejoint`` named ``base``
``link.friction`` (and base's)  geom ``friction``, ``priority`` (:func:`contact_friction`)
==============================  =========================================================

The law per physics step, ``clip(clip(cmd, -S - s*v, S - s*v), -E, E)`` with ``cmd = c -
kp*q - kd*v``, is three affine actuators and one clamp: the drive gives ``cmd``;
``dc_high`` gives ``min(0, hi(v) - cmd)`` (force range ``[-big, 0]``) and ``dc_low``
``max(0, lo(v) - cmd)`` (``[0, big]``), whose sum with ``cmd`` is ``clip(cmd, lo, hi)``;
the joint's ``actuatorfrcrange`` is the effort clamp. :mod:`jointlab.sim.mujoco.loop` sets
their ``ctrl`` and ``biasprm`` once per action.

Robot geoms collide with the world (ground, objects) but not with each other (collision
bits: robots ``contype=2 conaffinity=1``, world ``contype=1 conaffinity=3``); PyBullet also
skips a robot's self-collisions. A fixed base's mounted elements do not collide with the
ground either: :class:`~jointlab.sim.mujoco.body.MujocoBody` adds the world's contact
excludes (:func:`jointlab.sim.scene.mounted_elements`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Any

import numpy as np

from jointlab.errors import DescriptionError
from jointlab.robots.description import BASE, JointType, RobotDescription
from jointlab.robots.transforms import rpy_matrix
from jointlab.robots.urdf_io import inertia_with_margin
from jointlab.sim.actuators import ActuatorArray

__all__ = [
    "DC_RANGE",
    "ROBOT_COLLISION",
    "WORLD_COLLISION",
    "armature",
    "check_expressible",
    "constraint_solref",
    "contact_friction",
    "dc_joints",
    "description_to_mjcf",
    "mujoco_quaternion",
    "unsupported_features",
]

#: Force range bound of the ``dc_high``/``dc_low`` actuators (never reached), N·m or N.
DC_RANGE = 1e10
#: ``(contype, conaffinity)`` of robot geoms and of world geoms (ground, objects).
ROBOT_COLLISION = (2, 1)
WORLD_COLLISION = (1, 3)
#: Constraint time constant of hard stops, friction, brakes and couplings, in physics steps
#: (MuJoCo's stiffest stable setting is two steps; its default, 20 ms, lets a stuck joint
#: creep and a loaded brake sag visibly).
CONSTRAINT_STEPS = 2.0
#: Their impedance (MuJoCo ``solimp``): near 1 is nearly rigid. A joint held by friction
#: below its static friction creeps at about 3e-4 of the frictionless speed.
RIGID_SOLIMP = (0.99, 0.999, 0.001, 0.5, 2.0)
_LINK_RGBA = "0.6 0.65 0.7 1"
_BASE_RGBA = "0.3 0.3 0.35 1"


def _fmt(values: Iterable[float] | float) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(np.asarray(values, dtype=float)))


def mujoco_quaternion(rpy: Any) -> tuple[float, float, float, float]:
    """MuJoCo quaternion ``(w, x, y, z)`` of roll-pitch-yaw ``Rz(y)·Ry(p)·Rx(r)`` (rad)."""
    r, p, y = (0.5 * float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return (
        float(cr * cp * cy + sr * sp * sy),
        float(sr * cp * cy - cr * sp * sy),
        float(cr * sp * cy + sr * cp * sy),
        float(cr * cp * sy - sr * sp * cy),
    )


def constraint_solref(dt: float) -> str:
    """``solref`` of hard stops, brakes and couplings for physics step ``dt`` (s)."""
    return f"{CONSTRAINT_STEPS * dt!r} 1"


def armature(description: RobotDescription) -> np.ndarray:
    """Reflected rotor inertia per joint, kg·m² or kg, shape ``(dof,)``.

    ``description.armature`` (robot-file ``dynamics.armature``) when the description has it,
    zeros otherwise.
    """
    value = getattr(description, "armature", None)
    if value is None:
        return np.zeros(description.dof)
    return np.asarray(value, dtype=np.float64).reshape(description.dof)


def dc_joints(actuators: ActuatorArray) -> np.ndarray:
    """Indices of the joints whose torque-speed lines need the ``dc_*`` actuators.

    When some joint's limit depends on its speed, the law clips every joint to ``±stall -
    slope*v`` before the effort clamp; only joints where that is not already implied by the
    effort clamp (``slope != 0`` or ``stall < effort``) need the extra actuators.
    """
    if not actuators.speed_dependent:
        return np.zeros(0, dtype=np.int64)
    needed = (actuators.slope != 0.0) | (actuators.stall < actuators.effort)
    return np.flatnonzero(needed)


def _offset(length: float, orientation: Any) -> dict[str, str]:
    rotation = rpy_matrix(np.asarray(orientation, dtype=float))
    return {
        "pos": _fmt(rotation @ np.array([length, 0.0, 0.0])),
        "quat": _fmt(mujoco_quaternion(orientation)),
    }


def contact_friction(friction: float) -> dict[str, str]:
    """MJCF geom attributes realising a body's declared sliding friction coefficient.

    The declared rule is the product of the two bodies' coefficients
    (:func:`jointlab.sim.scene.combined_friction`); MuJoCo takes the larger of two geoms'
    coefficients, or the coefficient of the geom with the higher ``priority``. A geom whose
    coefficient differs from 1 gets priority 1, so against a body at 1 (the ground, default
    links and objects) its own coefficient, the product, is used; where both bodies differ
    from 1 the world adds explicit contact pairs (:mod:`jointlab.sim.mujoco.friction`).
    Torsional and rolling friction are 0 (contacts have ``condim`` 3, as on PyBullet).
    """
    mu = float(friction)
    return {"friction": _fmt([mu, 0.0, 0.0]), "priority": "0" if mu == 1.0 else "1"}


def _link_geom(
    body: ET.Element,
    length: float,
    orientation: Any,
    radius: float,
    friction: float = 1.0,
    torsional: float = 0.0,
) -> None:
    collision = {
        "contype": str(ROBOT_COLLISION[0]),
        "conaffinity": str(ROBOT_COLLISION[1]),
        **contact_friction(friction),
    }
    if torsional > 0:  # condim 4: a torsional friction torque up to ``torsional`` x normal force
        collision["condim"] = "4"
        collision["friction"] = _fmt([float(friction), float(torsional), 0.0])
    if length > 0:
        end = rpy_matrix(np.asarray(orientation, dtype=float)) @ np.array([length, 0.0, 0.0])
        ET.SubElement(
            body,
            "geom",
            type="capsule",
            fromto=_fmt([0.0, 0.0, 0.0, *end]),
            size=repr(float(radius)),
            rgba=_LINK_RGBA,
            **collision,
        )
    else:
        ET.SubElement(
            body, "geom", type="sphere", size=repr(float(radius)), rgba=_LINK_RGBA, **collision
        )


def _inertial(body: ET.Element, mass: float, cog: Any, inertia: Any) -> None:
    i = np.asarray(inertia, dtype=np.float64)
    full = [i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]]
    ET.SubElement(body, "inertial", pos=_fmt(cog), mass=repr(float(mass)), fullinertia=_fmt(full))


def unsupported_features(description: RobotDescription) -> list[str]:
    """Every feature of ``description`` MuJoCo cannot express, one sentence each (or none).

    MuJoCo holds a joint's position in ``range`` only when ``min < max``: a joint with no
    travel is refused rather than given an invented range.
    """
    problems = []
    for spec in description.joints:
        if not spec.min < spec.max:
            problems.append(
                f"joint {spec.name!r} has no travel (min = max = {spec.min}): MuJoCo's joint "
                "range must be an interval; describe it as type: fixed"
            )
    return problems


def check_expressible(description: RobotDescription) -> None:
    """Refuse a description with features MuJoCo cannot express, naming every one of them.

    Raises:
        DescriptionError: the description's name and each unsupported feature.
    """
    problems = unsupported_features(description)
    if problems:
        raise DescriptionError(
            f"robot {description.name!r} cannot run on MuJoCo: " + "; ".join(problems)
        )


def description_to_mjcf(description: RobotDescription, dt: float = 0.001) -> str:
    """MJCF text of ``description`` for physics step ``dt`` seconds (see the module docstring).

    The model holds the robot only (no ground, no options); ``mujoco.MjModel.from_xml_string``
    loads it as is, and :class:`~jointlab.sim.mujoco.world.MujocoWorld` attaches it to its
    world.

    Raises:
        DescriptionError: a feature MuJoCo cannot express (:func:`check_expressible`).
    """
    check_expressible(description)
    solref = constraint_solref(dt)
    rigid = _fmt(RIGID_SOLIMP)
    root = ET.Element("mujoco", model=description.name)
    ET.SubElement(root, "compiler", angle="radian", autolimits="true")
    worldbody = ET.SubElement(root, "worldbody")
    base = description.base
    base_body = ET.SubElement(
        worldbody,
        "body",
        name="base_link",
        pos=_fmt(base.position),
        quat=_fmt(mujoco_quaternion(base.orientation)),
    )
    if not base.fixed:
        ET.SubElement(base_body, "freejoint", name="base")
    r, m = base.radius, base.mass
    _inertial(base_body, m, (0.0, 0.0, 0.0), np.eye(3) * (m * r * r / 2))
    ET.SubElement(
        base_body,
        "geom",
        type="cylinder",
        size=_fmt([r, r / 2]),
        rgba=_BASE_RGBA,
        contype=str(ROBOT_COLLISION[0]),
        conaffinity=str(ROBOT_COLLISION[1]),
        **contact_friction(base.friction),
    )
    bodies = {BASE: base_body}
    specs = {s.name: s for s in description.actuators}
    actuators = ActuatorArray.from_description(description)
    effort = dict(zip(description.joint_names, actuators.effort.tolist(), strict=True))
    armatures = dict(zip(description.joint_names, armature(description).tolist(), strict=True))
    children = description.children
    for spec in description.actuators:
        place = {"pos": "0 0 0", "quat": "1 0 0 0"}
        if spec.parent != BASE:
            parent = specs[spec.parent]
            place = _offset(parent.length, parent.orientation)
        body = ET.SubElement(bodies[spec.parent], "body", name=f"{spec.name}_link", **place)
        bodies[spec.name] = body
        if spec.is_joint:
            ET.SubElement(
                body,
                "joint",
                name=spec.name,
                type="hinge" if spec.type is JointType.ROTARY else "slide",
                axis=_fmt(spec.axis),
                range=_fmt([spec.min, spec.max]),
                limited="true",
                solreflimit=solref,
                solimplimit=rigid,
                damping=repr(float(spec.dynamics.damping)),
                frictionloss=repr(float(spec.dynamics.static_friction)),
                solreffriction=solref,
                solimpfriction=rigid,
                armature=repr(armatures[spec.name]),
                actuatorfrcrange=_fmt([-effort[spec.name], effort[spec.name]]),
                actuatorfrclimited="true",
            )
        if spec.link is not None:
            _inertial(
                body,
                spec.link.mass,
                spec.link.center_of_gravity,
                inertia_with_margin(np.array(spec.link.inertia)),
            )
            _link_geom(
                body,
                spec.length,
                spec.orientation,
                spec.link.radius,
                spec.link.friction,
                spec.link.torsional_friction,
            )
        if not children[spec.name]:
            ET.SubElement(
                body,
                "site",
                name=f"{spec.name}_tool",
                size="0.005",
                **_offset(spec.length, spec.orientation),
            )
    _couplings_and_brakes(root, description, solref, rigid)
    actuator = ET.SubElement(root, "actuator")
    for name in description.joint_names:
        ET.SubElement(
            actuator,
            "general",
            name=name,
            joint=name,
            gainprm="1",
            biastype="affine",
            biasprm="0 0 0",
        )
    # All dc_high, then all dc_low: a robot's actuators are drives, highs, lows, in one block.
    for suffix, span in (("dc_high", [-DC_RANGE, 0.0]), ("dc_low", [0.0, DC_RANGE])):
        for i in dc_joints(actuators).tolist():
            name = description.joint_names[i]
            ET.SubElement(
                actuator,
                "general",
                name=f"{name}/{suffix}",
                joint=name,
                gainprm="1",
                biastype="affine",
                biasprm="0 0 0",
                forcelimited="true",
                forcerange=_fmt(span),
            )
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def _couplings_and_brakes(
    root: ET.Element, description: RobotDescription, solref: str, solimp: str
) -> None:
    equality = ET.Element("equality")
    tendon = ET.Element("tendon")
    for spec in description.joints:
        if spec.has_brakes:
            ET.SubElement(
                equality,
                "joint",
                name=f"{spec.name}/brake",
                joint1=spec.name,
                polycoef="0 0 0 0 0",
                active="false",
                solref=solref,
                solimp=solimp,
            )
        if spec.coupling is None:
            continue
        offset = spec.coupling.alpha_self * spec.home
        leaders = spec.coupling.alpha_leading
        name = f"{spec.name}/coupling"
        if len(leaders) == 1:
            ((leader, alpha),) = leaders
            ET.SubElement(
                equality,
                "joint",
                name=name,
                joint1=spec.name,
                joint2=leader,
                polycoef=_fmt([offset, alpha, 0.0, 0.0, 0.0]),
                solref=solref,
                solimp=solimp,
            )
            continue
        # q_dep - sum(alpha * q_lead) = offset: a fixed tendon held at a constant length.
        fixed = ET.SubElement(tendon, "fixed", name=name)
        ET.SubElement(fixed, "joint", joint=spec.name, coef="1.0")
        for leader, alpha in leaders:
            ET.SubElement(fixed, "joint", joint=leader, coef=repr(-float(alpha)))
        ET.SubElement(
            equality,
            "tendon",
            name=name,
            tendon1=name,
            polycoef=_fmt([offset, 0.0, 0.0, 0.0, 0.0]),
            solref=solref,
            solimp=solimp,
        )
    if len(tendon):
        root.append(tendon)
    if len(equality):
        root.append(equality)
