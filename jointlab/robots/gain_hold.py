"""Joints the default gains cannot hold at home: the bad input of a robot file.

The derived ``kp`` (:mod:`jointlab.robots.gain_design`) must beat gravity, whose stiffness at
a pose can pull a joint away from it (an arm held above its joint). When the stable gains are
too soft for that (``kp`` below :data:`GRAVITY_MARGIN` times the joint's gravity stiffness at
home), or gravity alone needs more than the joint's effort limit at home (no gains can hold
it), :func:`hold_problems` reports the joint with the gain or effort it would need. Loading
such a file warns (:class:`~jointlab.robots.gains.UnstableGainsWarning`, one message naming
every joint) and ``jointlab describe --check`` refuses it: never a silent chatter or sag.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.robots.description import RobotDescription
from jointlab.robots.dynamics import DynamicsModel
from jointlab.robots.gain_design import CoupledPlant, coupled_plants, independent_joints
from jointlab.robots.gains import REFERENCE_DT

__all__ = ["GRAVITY_MARGIN", "HoldProblem", "hold_problems"]

#: The derived kp must exceed this multiple of the joint's gravity stiffness at home.
GRAVITY_MARGIN = 2.0


@dataclass(frozen=True)
class HoldProblem:
    """A joint the default gains cannot hold at home (see the module docstring).

    Attributes:
        joint: Joint-space index.
        name: Actuator name.
        gain: ``"kp"`` (stiffness needed) or ``"effort"`` (limits.effort needed).
        value: What the joint has (derived kp, or effort limit).
        needed: What it would need.
        message: Sentence naming the numbers and the ways out.
    """

    joint: int
    name: str
    gain: str
    value: float
    needed: float
    message: str


def hold_problems(
    description: RobotDescription,
    derived: np.ndarray | None = None,
    plants: list[CoupledPlant] | None = None,
) -> list[HoldProblem]:
    """Joints whose default gains cannot hold home (see the module docstring).

    Args:
        description: The robot, gains filled (as loaded).
        derived: Mask of joints whose gains were derived, shape ``(dof,)``; default: every
            independent joint (given gains are the file's business, not the defaults').
        plants: Precomputed :func:`coupled_plants` (default: computed here).

    Returns:
        One problem per joint: the effort gravity needs at home beyond ``limits.effort``,
        or the ``kp`` gravity's stiffness at home needs beyond the stable default.
    """
    plants = coupled_plants(description, samples=0) if plants is None else plants
    independent, _ = independent_joints(description)
    derived = ~description.dependent if derived is None else np.asarray(derived, dtype=bool)
    gravity = DynamicsModel(description).gravity_torque(
        description.apply_coupling(description.home)
    )
    effort = description.effort_limit
    stiffness = np.zeros(description.dof)
    stiffness[independent] = np.diagonal(plants[0].gravity_stiffness[0])
    kp = description.default_kp
    source = description.source or f"robot {description.name!r}"
    problems = []
    for j in range(description.dof):
        if description.dependent[j]:
            continue
        name = description.joint_names[j]
        linear = bool(description.is_linear[j])
        units = ("N", "N/m") if linear else ("N·m", "N·m/rad")
        if abs(gravity[j]) > effort[j]:
            problems.append(
                HoldProblem(
                    j,
                    name,
                    "effort",
                    float(effort[j]),
                    float(abs(gravity[j])),
                    f"{source}: actuator {name!r}: gravity needs {abs(gravity[j]):.4g} {units[0]} "
                    f"at home, above limits.effort = {effort[j]:g} {units[0]}: no gains can hold "
                    f"it; give limits.effort >= {abs(gravity[j]):.4g} {units[0]} or a lighter link",
                )
            )
            continue
        needed = GRAVITY_MARGIN * max(0.0, -float(stiffness[j]))
        if derived[j] and kp[j] < needed:
            problems.append(
                HoldProblem(
                    j,
                    name,
                    "kp",
                    float(kp[j]),
                    needed,
                    f"{source}: actuator {name!r}: the default gains.kp = {kp[j]:.4g} {units[1]} "
                    f"(the largest the coupled loop passes at dt = {REFERENCE_DT:g} s) is below "
                    f"the {needed:.4g} {units[1]} that gravity's stiffness at home needs "
                    f"({GRAVITY_MARGIN:g} x {-stiffness[j]:.4g}); give gains.kp >= {needed:.4g} "
                    f"{units[1]} with a heavier rotor (dynamics.armature) or a smaller "
                    "physics step",
                )
            )
    return problems
