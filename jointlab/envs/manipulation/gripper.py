"""A robot's gripper, found in its description: the jaws, how far they open, where they grasp.

A robot *has a gripper* when it has a rotary joint (named ``gripper`` unless told otherwise)
whose moving jaw closes against a **fixed jaw**: a ``type: fixed`` element with a link that
hangs from an ancestor of the gripper joint (the *wrist*), along the wrist frame's x axis.
The SO-101 and Koch files describe their jaws so (``fixed_jaw``, ``jaw_pivot``, ``gripper``).

Everything else is measured from the description's own kinematics, so any robot file that
follows the convention works: which way the jaw opens, the joint angle at which the jaws hold
a cube of a given side parallel, and the *grasp point*: where a cube's centre sits in the
wrist frame when held (against the fixed jaw, its lower face 3 mm past the fixed jaw's tip, so
the jaws clear the table when the cube rests on it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.robots.description import BASE, JointType, RobotDescription

from ..tasks.kinematics import ChainKinematics

__all__ = ["TABLE_CLEARANCE", "Gripper", "find_gripper"]

#: Height of the fixed jaw's tip above the table when a held cube rests on it, metres.
TABLE_CLEARANCE = 0.003
#: Joint angle past first contact commanded to squeeze a cube, rad (about half the effort
#: of the SO-101's gripper servo at its default gain).
SQUEEZE = 0.13


@dataclass(frozen=True, eq=False)
class Gripper:
    """The gripper of a robot (see the module docstring); lengths in metres, angles in rad."""

    #: The robot's name (for messages).
    robot: str
    #: Index of the gripper joint in the description's joint order.
    joint: int
    #: Name of the wrist element: the frame the jaws hang from.
    wrist: str
    #: Indices of the arm joints (every joint but the gripper and its dependents).
    arm_joints: np.ndarray
    #: Joint position with the jaws closed (touching), rad.
    closed: float
    #: Joint position with the jaws fully open (the soft limit on the opening side), rad.
    open: float
    #: +1 when increasing the joint opens the jaws, -1 when it closes them.
    opening_sign: float
    #: The fixed jaw's length along the wrist x axis and its capsule radius, m.
    fixed_length: float
    fixed_radius: float
    #: Unit vector, wrist frame, from the fixed jaw towards the moving jaw (the wrist's +z or -z).
    side: np.ndarray

    def grasp_point(self, cube_size: float) -> np.ndarray:
        """Where a held cube's centre sits in the wrist frame, m, shape ``(3,)``."""
        x = self.fixed_length + self.fixed_radius - cube_size / 2 + TABLE_CLEARANCE
        return np.array([x, 0.0, 0.0]) + self.side * (self.fixed_radius + cube_size / 2)

    def holding(self, description: RobotDescription, cube_size: float) -> float:
        """Joint position at which the moving jaw touches a cube of side ``cube_size``, rad."""
        return _contact_angle(description, self, cube_size)

    def squeeze(self, description: RobotDescription, cube_size: float) -> float:
        """The command that holds a cube: :data:`SQUEEZE` rad past the contact angle."""
        target = self.holding(description, cube_size) - self.opening_sign * SQUEEZE
        low, high = sorted((self.closed, self.open))
        return float(np.clip(target, low, high))


def _wrist_frame_points(
    description: RobotDescription, gripper: Gripper, name: str, q: np.ndarray
) -> np.ndarray:
    """Points of element ``name`` (its joint and end) in the wrist frame at joints ``q``."""
    wrist = np.linalg.inv(ChainKinematics(description, gripper.wrist).matrix(q))
    spec = description.actuator(name)
    end = wrist @ ChainKinematics(description, name).matrix(q)[:, 3]
    start = wrist @ ChainKinematics(description, spec.parent).matrix(q)[:, 3]
    return np.stack([start[:3], end[:3]])


def _contact_angle(description: RobotDescription, gripper: Gripper, cube_size: float) -> float:
    """Bisect the joint angle at which the moving jaw's tip meets a held cube's far face."""
    name = description.joint_names[gripper.joint]
    radius = description.actuator(name).link.radius  # type: ignore[union-attr]
    face = gripper.fixed_radius + cube_size + radius  # the jaw axis's distance when holding
    q = np.array(description.home, dtype=np.float64)
    low, high = 0.0, 1.0  # fraction of the way from closed to open
    for _ in range(40):
        mid = 0.5 * (low + high)
        q[gripper.joint] = gripper.closed + mid * (gripper.open - gripper.closed)
        tip = _wrist_frame_points(description, gripper, name, q)[1]
        if float(tip @ gripper.side) < face:
            low = mid
        else:
            high = mid
    return float(gripper.closed + 0.5 * (low + high) * (gripper.open - gripper.closed))


def find_gripper(description: RobotDescription, joint: str = "gripper") -> Gripper:
    """The gripper of ``description`` (see the module docstring).

    Raises:
        ConfigurationError: no such rotary joint, or no fixed jaw beside it; the message
            names the robot, what is missing and the fix.
    """
    name = description.name
    fix = (
        f"use a robot with a gripper (so101, koch), or describe one: a rotary joint "
        f"{joint!r} and a fixed element with a link (the fixed jaw) hanging from the same "
        "wrist element; docs/manipulation.md"
    )
    if joint not in description.joint_names:
        raise ConfigurationError(
            f"robot {name!r} has no gripper: no joint named {joint!r} (joints: "
            f"{list(description.joint_names)}); {fix}"
        )
    spec = description.actuator(joint)
    if spec.type is not JointType.ROTARY:
        raise ConfigurationError(f"robot {name!r}: gripper joint {joint!r} must be rotary; {fix}")
    ancestors = []
    parent = spec.parent
    while parent != BASE:
        ancestors.append(parent)
        parent = description.actuator(parent).parent
    wrist = next((a for a in ancestors if description.actuator(a).is_joint), None)
    jaws = [
        s
        for s in description.actuators
        if s.type is JointType.FIXED
        and s.parent == wrist
        and s.link is not None
        and s.length > 0
        and s.name not in ancestors
    ]
    if wrist is None or not jaws:
        raise ConfigurationError(f"robot {name!r} has no fixed jaw beside joint {joint!r}; {fix}")
    fixed = max(jaws, key=lambda s: s.length)
    index = description.joint_names.index(joint)
    arm = np.array(
        [
            i
            for i, j in enumerate(description.joints)
            if j.name != joint and not description.dependent[i]
        ],
        dtype=np.intp,
    )
    lower, upper = description.soft_lower[index], description.soft_upper[index]
    closed = float(np.clip(spec.home, lower, upper))
    probe = Gripper(
        name,
        index,
        wrist,
        arm,
        closed,
        float(upper),
        1.0,
        fixed.length,
        fixed.link.radius,
        np.array([0.0, 0.0, 1.0]),
    )  # type: ignore[union-attr]
    q = np.array(description.home, dtype=np.float64)
    tips = []
    for value in (lower, upper):
        q[index] = value
        tips.append(_wrist_frame_points(description, probe, joint, q)[1])
    gaps = [abs(tip[2]) for tip in tips]
    opening = int(np.argmax(gaps))
    side = np.array([0.0, 0.0, float(np.sign(tips[opening][2]) or 1.0)])
    open_value = float((lower, upper)[opening])
    return Gripper(
        name,
        index,
        wrist,
        arm,
        closed,
        open_value,
        1.0 if open_value > closed else -1.0,
        float(fixed.length),
        float(fixed.link.radius),
        side,
    )  # type: ignore[union-attr]
