"""What a robot file may say: names and physically plausible ranges.

**Names** (the robot, each actuator) are identifiers, never paths: 1 to
:data:`MAX_NAME_LENGTH` characters from ``A-Z a-z 0-9 _ - .``, starting with a letter, a
digit or ``_``. Nothing in JointLab derives a file path from a name.

**Ranges** (:data:`RANGES`) bound every number a robot file gives to what a physical
robot actuator array can have, in SI units. They keep the simulation well conditioned and
every derived quantity (capsule masses, default gains, a delay line's memory) finite and
small; docs/robot-files.md lists them. A value outside its range is a
:class:`~jointlab.errors.DescriptionError` that names the field and quotes the range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_LINKS", "MAX_NAME_LENGTH", "NAME_PATTERN", "RANGES", "Range", "name_problem"]

#: Longest robot or actuator name, characters.
MAX_NAME_LENGTH = 100
#: The character set of names (see the module docstring).
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
#: Most links of one robot's simulated body: one per element (actuators and fixed elements)
#: plus one tool frame per chain end. PyBullet holds at most 127 joints in one body (one
#: more and its joint-state queries fail; ``tests/robots/test_hostile_files.py`` finds the
#: edge), so JointLab stays clearly below.
MAX_LINKS = 120


def name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid robot or actuator name, or None if it is."""
    if not isinstance(name, str):
        return f"must be a string, got {type(name).__name__}"
    if not name:
        return "must not be empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long, at most {MAX_NAME_LENGTH}"
    if not NAME_PATTERN.fullmatch(name):
        return (
            "may hold only letters, digits, '_', '-' and '.', and must start with a "
            "letter, a digit or '_'"
        )
    return None


@dataclass(frozen=True)
class Range:
    """An inclusive range ``[low, high]`` (``low`` excluded when ``open_low``)."""

    low: float
    high: float
    #: Unit, for messages and the docs.
    unit: str
    open_low: bool = False

    def contains(self, value: float) -> bool:
        """True if ``value`` lies in the range."""
        above = value > self.low if self.open_low else value >= self.low
        return above and value <= self.high

    def problem(self, value: float) -> str | None:
        """Why ``value`` lies outside the range (``"must be > 0 ..."``), or None."""
        if self.contains(value):
            return None
        if value <= self.low:
            bound = f"> {self.low:g}" if self.open_low else f">= {self.low:g}"
        else:
            bound = f"<= {self.high:g}"
        return f"= {value:g} must be {bound} (plausible range {self})"

    def __str__(self) -> str:
        left = "(" if self.open_low else "["
        unit = f" {self.unit}" if self.unit else ""
        return f"{left}{self.low:g}, {self.high:g}]{unit}"


_POSITION = Range(-1000.0, 1000.0, "rad or m")

#: Plausible range of each robot-file field (dotted path below an actuator or ``base``).
RANGES: dict[str, Range] = {
    "base.position": Range(-1e4, 1e4, "m"),
    "base.orientation": Range(-100.0, 100.0, "rad"),
    "base.mass": Range(0.0, 1e4, "kg", open_low=True),
    "base.radius": Range(0.0, 10.0, "m", open_low=True),
    "base.friction": Range(0.0, 10.0, "", open_low=True),
    "axis": Range(-1e6, 1e6, ""),
    "length": Range(0.0, 100.0, "m"),
    "orientation": Range(-100.0, 100.0, "rad"),
    "min": _POSITION,
    "max": _POSITION,
    "centre": _POSITION,
    "home": _POSITION,
    "config_speed": Range(0.0, 1e4, "rad/s or m/s", open_low=True),
    "limits.velocity": Range(0.0, 1e4, "rad/s or m/s", open_low=True),
    "limits.acceleration": Range(0.0, 1e6, "rad/s² or m/s²", open_low=True),
    "limits.jerk": Range(0.0, 1e9, "rad/s³ or m/s³", open_low=True),
    "limits.effort": Range(0.0, 1e6, "N·m or N", open_low=True),
    "soft_limits.min": _POSITION,
    "soft_limits.max": _POSITION,
    "dynamics.static_friction": Range(0.0, 1e6, "N·m or N"),
    "dynamics.damping": Range(0.0, 1e6, "N·m·s/rad or N·s/m"),
    "dynamics.armature": Range(0.0, 1e4, "kg·m² or kg"),
    "link.mass": Range(0.0, 1e4, "kg", open_low=True),
    "link.density": Range(0.0, 25_000.0, "kg/m³", open_low=True),
    "link.radius": Range(0.0, 10.0, "m", open_low=True),
    "link.friction": Range(0.0, 10.0, "", open_low=True),
    "link.torsional_friction": Range(0.0, 0.1, "m"),
    "link.center_of_gravity": Range(-100.0, 100.0, "m"),
    "link.inertia": Range(0.0, 1e8, "kg·m² (principal moments)", open_low=True),
    "motor.torque_constant": Range(0.0, 100.0, "N·m/A", open_low=True),
    "motor.gear_ratio": Range(0.0, 1e5, "", open_low=True),
    "motor.max_current": Range(0.0, 1e5, "A", open_low=True),
    "motor.stall_torque": Range(0.0, 1e6, "N·m", open_low=True),
    "motor.no_load_speed": Range(0.0, 1e6, "rad/s", open_low=True),
    "motor.rotor_inertia": Range(0.0, 1.0, "kg·m²"),
    "motor.delay": Range(0.0, 1000.0, "physics steps"),
    "gains.kp": Range(0.0, 1e8, "N·m/rad or N/m"),
    "gains.kd": Range(0.0, 1e6, "N·m·s/rad or N·s/m"),
    "coupling.alpha_self": Range(-1e3, 1e3, ""),
    "coupling.alpha_leading": Range(-1e3, 1e3, ""),
}
