"""What a servo really is, beyond its model's datasheet: the identified servo character.

Three optional keys of a servo in the robot file's ``bus`` section, written by servo-level
identification (``jointlab identify fit ROBOT DATASET``) and read by the emulated servos'
firmware (the twin):

::

    bus:
      servos:
        shoulder_lift: {id: 2, model: sts3215, mode: position,
                        stiffness: 0.71, backlash: 0.0175, delay: 0.012}

* ``stiffness``: the position stiffness the servo achieves per unit of its P register, as a
  factor on the documented scaling (:mod:`jointlab.hardware.servo.gains`); 1 = as
  documented. A worn or under-volted servo turns the same P into less torque per tick.
* ``backlash``: total play of the gear train, joint radians: the servo's loop pushes the
  joint only once its error leaves a dead band of ``backlash / 2`` either side (lost
  motion at every reversal).
* ``delay``: command-to-motion delay the servo adds, s: a goal written on the bus acts that
  much later (bus, firmware and driver latency beyond what the twin already models).

Friction and the torque limit are the joint's existing ``dynamics.static_friction`` (Coulomb,
N·m), ``dynamics.damping`` (viscous, N·m·s/rad) and ``limits.effort`` (N·m).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["CHARACTER_DEFAULTS", "character_to_dict", "parse_character"]

#: Key -> value meaning "as the datasheet says" (not written to files).
CHARACTER_DEFAULTS = {"stiffness": 1.0, "backlash": 0.0, "delay": 0.0}
#: Largest plausible values: a factor of 10, a quarter turn of play, 0.1 s of delay (an
#: emulated arm at rest may sleep after 0.2 s; a goal must reach it before).
_LIMITS = {"stiffness": 10.0, "backlash": math.pi / 2, "delay": 0.1}
_UNITS = {"stiffness": "(a factor)", "backlash": "rad", "delay": "s"}


def parse_character(where: Any, entry: Mapping[str, Any], field: str) -> dict[str, float]:
    """The character keys of one servo entry, checked (defaults where absent).

    Args:
        where: The schema's error formatter (``where.error(message, actuator, field)``).
        entry: The servo's mapping in ``bus.servos``.
        field: Its path in the file (``bus.servos.<joint>``).
    """
    values = {}
    for key, default in CHARACTER_DEFAULTS.items():
        value = entry.get(key, default)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise where.error(
                f"must be a number {_UNITS[key]}, got {value!r}", None, f"{field}.{key}"
            )
        value = float(value)
        low_ok = value > 0 if key == "stiffness" else value >= 0
        if not low_ok or value > _LIMITS[key]:
            bound = "> 0" if key == "stiffness" else ">= 0"
            raise where.error(
                f"= {value} must be {bound} and <= {_LIMITS[key]:.4g} {_UNITS[key]}",
                None,
                f"{field}.{key}",
            )
        values[key] = value
    return values


def character_to_dict(spec: Any) -> dict[str, float]:
    """The character keys of servo ``spec`` that differ from the datasheet (for files)."""
    return {
        key: float(getattr(spec, key))
        for key, default in CHARACTER_DEFAULTS.items()
        if float(getattr(spec, key)) != default
    }
