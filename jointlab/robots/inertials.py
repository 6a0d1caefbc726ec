"""The link inertials an engine realises from a description: tensors kept physical, armature.

A rigid-body engine without joint armature (PyBullet) carries a joint's reflected rotor
inertia in the link it moves (:func:`realised_inertial`); both engines load link tensors
through :func:`inertia_with_margin`. Used by the URDF export, the default-gain design and
identification, so it sits below all of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jointlab.errors import DescriptionError
from jointlab.robots.description import ActuatorSpec, JointType

__all__ = ["REALISED_SLACK", "inertia_with_margin", "realised_inertial"]

#: Relative margin by which a realised inertia satisfies the triangle inequality.
REALISED_SLACK = 1e-4


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
