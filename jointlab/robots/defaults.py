"""Physical defaults of a robot file: capsule links and reflected rotor inertia (armature).

A robot described by its geometry alone still gets a physical body:

* **links**: a solid capsule of radius ``link.radius`` (default :data:`DEFAULT_RADIUS`) along
  the link, of density ``link.density`` (default :data:`DEFAULT_DENSITY`), unless the file
  gives ``link.mass`` / ``center_of_gravity`` / ``inertia`` (:func:`capsule_inertial`);
* **armature**: the inertia of the actuator's rotor seen through its gearbox,
  ``motor.rotor_inertia * motor.gear_ratio**2`` when the file gives the rotor inertia, else
  the default of the actuator's **size class**, chosen by its effort limit
  (:func:`default_armature`). On geared actuators it usually dominates the joint's inertia,
  and it is what lets an explicit PD run stiff gains on a light link.

Size classes (effort limit -> armature), first matching row:

============  ===================  =================  ==================
joint type    class                effort limit       armature
============  ===================  =================  ==================
rotary        micro servo          <= 1 N·m           5e-4 kg·m²
rotary        small servo          <= 10 N·m          5e-3 kg·m²
rotary        medium drive         <= 100 N·m         5e-2 kg·m²
rotary        large drive          > 100 N·m          0.5 kg·m²
linear        small actuator       <= 100 N           0.05 kg
linear        medium actuator      <= 1000 N          0.5 kg
linear        large actuator       > 1000 N           5 kg
============  ===================  =================  ==================

Each value is about 5e-4 s² times the class's largest effort: a bare actuator of the class
accelerates at about 2000 rad/s² (or m/s²) at its effort limit, typical of geared servo and
arm drives from hobby servos to industrial joints (rotor inertia 1e-7 to 1e-5 kg·m² through
ratios of 50 to 300). Give ``motor.rotor_inertia`` (or ``dynamics.armature``) for anything
else, e.g. ``dynamics.armature: 0`` for a direct-drive or solenoid joint.
"""

from __future__ import annotations

import math

import numpy as np

from jointlab.robots.transforms import rpy_matrix

__all__ = [
    "DEFAULT_DENSITY",
    "DEFAULT_RADIUS",
    "LINEAR_ARMATURE_CLASSES",
    "ROTARY_ARMATURE_CLASSES",
    "capsule_inertial",
    "default_armature",
]

#: Density used to derive link mass from the capsule when ``link.mass`` is absent, kg/m³.
DEFAULT_DENSITY = 1000.0
#: Capsule radius used when ``link.radius`` is absent, metres.
DEFAULT_RADIUS = 0.02

#: Rotary size classes: (largest effort limit of the class in N·m, armature in kg·m²).
ROTARY_ARMATURE_CLASSES: tuple[tuple[float, float], ...] = (
    (1.0, 5e-4),
    (10.0, 5e-3),
    (100.0, 5e-2),
    (math.inf, 0.5),
)
#: Linear size classes: (largest effort limit of the class in N, armature in kg).
LINEAR_ARMATURE_CLASSES: tuple[tuple[float, float], ...] = (
    (100.0, 0.05),
    (1000.0, 0.5),
    (math.inf, 5.0),
)


def default_armature(effort: float, linear: bool) -> float:
    """Armature of the size class of an actuator with effort limit ``effort``.

    Args:
        effort: Effort limit in N·m (rotary) or N (linear), > 0.
        linear: True for a linear actuator.

    Returns:
        The armature in kg·m² (rotary) or kg (linear); see the module's class table.
    """
    classes = LINEAR_ARMATURE_CLASSES if linear else ROTARY_ARMATURE_CLASSES
    for largest, armature in classes:
        if effort <= largest:
            return armature
    return classes[-1][1]


def capsule_inertial(
    length: float,
    orientation: tuple[float, float, float],
    radius: float,
    density: float,
    mass: float | None = None,
) -> tuple[float, tuple[float, float, float], np.ndarray]:
    """Mass (kg), centre of gravity (m) and inertia (kg·m²) of a solid capsule link.

    The capsule's axis runs from the moving-frame origin along ``RPY(orientation)·x̂`` for
    ``length`` metres; hemispherical caps of ``radius``. When ``mass`` is given, the inertia is
    scaled to it (uniform density).
    """
    cylinder = density * math.pi * radius**2 * length
    caps = density * 4.0 / 3.0 * math.pi * radius**3
    natural = cylinder + caps
    axial = cylinder * radius**2 / 2.0 + caps * 2.0 * radius**2 / 5.0
    transverse = cylinder * (length**2 / 12.0 + radius**2 / 4.0) + caps * (
        2.0 * radius**2 / 5.0 + length**2 / 4.0 + 3.0 * length * radius / 8.0
    )
    scale = 1.0 if mass is None else mass / natural
    local = np.diag([axial, transverse, transverse]) * scale
    rotation = rpy_matrix(np.array(orientation))
    inertia = rotation @ local @ rotation.T
    cog = rotation @ np.array([length / 2.0, 0.0, 0.0])
    return (
        (natural if mass is None else mass),
        (float(cog[0]), float(cog[1]), float(cog[2])),
        inertia,
    )
