"""Checks of command-program argument values, before the first command runs.

:func:`check_values` checks each argument's type (:data:`ARGUMENT_KINDS`) when a program
is loaded; :func:`check_shapes` checks what needs the robot (vector lengths, joint names
and indices) when it is about to run. Values the robot judges (a target outside the soft
limits, a disarmed robot) are refused by the Commander when the step runs; the refusal names
the step (:func:`jointlab.program.run_program`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError, DescriptionError, quote
from jointlab.robots.description import RobotDescription

__all__ = ["ARGUMENT_KINDS", "check_shapes", "check_values"]

#: Argument name -> kind of value (see :func:`check_values`).
ARGUMENT_KINDS = {
    "joint": "joint",
    "joints": "joints",
    "position": "number",
    "effort": "number",
    "current": "number",
    "speed": "number",
    "accel": "number",
    "velocity": "number_or_vector",
    "duration": "seconds",
    "timeout": "seconds",
    "positions": "vector",
    "velocities": "vector",
    "currents": "vector",
    "waypoints": "waypoints",
    "repeat": "repeat",
    "mode": "mode",
    "on": "bool",
    "command_id": "id",
}
#: Keys of a waypoint mapping.
WAYPOINT_KEYS = ("position", "velocity", "acceleration", "time_from_start")
#: Most waypoints of one step.
MAX_WAYPOINTS = 100_000
#: Longest vector argument (a robot has fewer joints).
MAX_VECTOR = 1000


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    try:
        return not math.isinf(float(value))  # NaN means "leave alone" in vectors
    except OverflowError:
        return False


def _vector(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, (str, bytes))
        and 0 < len(value) <= MAX_VECTOR
        and all(_is_number(v) for v in value)
    )


def _joint(value: Any) -> bool:
    return (isinstance(value, str) and 0 < len(value) <= 200) or (
        isinstance(value, int) and not isinstance(value, bool) and -1 <= value <= MAX_VECTOR
    )


def _waypoints(where: str, value: Any) -> None:
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)) or not value:
        raise ConfigurationError(f"{where}: waypoints must be a non-empty list, got {quote(value)}")
    if len(value) > MAX_WAYPOINTS:
        raise ConfigurationError(f"{where}: {len(value)} waypoints, at most {MAX_WAYPOINTS}")
    for index, point in enumerate(value):
        here = f"{where}: waypoint {index}"
        if not isinstance(point, Mapping):
            if _is_number(point) or _vector(point):
                continue  # a bare position
            raise ConfigurationError(
                f"{here} must be a mapping {{position: ..., "
                f"time_from_start: ...}}, got {quote(point)}"
            )
        for key, item in point.items():
            if key not in WAYPOINT_KEYS:
                raise ConfigurationError(
                    f"{here}: unknown key {quote(key, 60)}; expected {list(WAYPOINT_KEYS)}"
                )
            ok = (
                item is None or (_is_number(item) and item >= 0 and not math.isnan(item))
                if key == "time_from_start"
                else item is None or _is_number(item) or _vector(item)
            )
            if not ok:
                raise ConfigurationError(
                    f"{here}: {key} = {quote(item)} is not a finite number or a list of them"
                )
        if "position" not in point:
            raise ConfigurationError(f"{here}: needs a position")


def check_values(where: str, verb: str, arguments: Mapping[str, Any]) -> None:
    """Refuse an argument value of the wrong type (names the step and the argument).

    Raises:
        ConfigurationError: e.g. ``position: abc``, ``joints: {a: 1}``, ``repeat: -2``.
    """
    for name, value in arguments.items():
        kind = ARGUMENT_KINDS.get(name, "any")
        here = f"{where}: argument {name!r}"
        if kind == "waypoints":
            _waypoints(here, value)
            continue
        ok = {
            "joint": lambda v: _joint(v),
            "joints": lambda v: (
                v is None
                or _joint(v)
                or (
                    isinstance(v, Sequence)
                    and not isinstance(v, str)
                    and 0 < len(v) <= MAX_VECTOR
                    and all(_joint(j) for j in v)
                )
            ),
            "number": lambda v: _is_number(v) and not math.isnan(float(v)),
            "number_or_vector": lambda v: v is None or _is_number(v) or _vector(v),
            "seconds": lambda v: v is None or (_is_number(v) and float(v) >= 0),
            "vector": _vector,
            "repeat": lambda v: (
                v == "forever" or (isinstance(v, int) and not isinstance(v, bool) and v >= 1)
            ),
            "mode": lambda v: v in ("immediate", "decelerate"),
            "bool": lambda v: isinstance(v, bool),
            "id": lambda v: isinstance(v, (str, int)) and len(str(v)) <= 200,
            "any": lambda v: True,
        }[kind](value)
        if not ok:
            raise ConfigurationError(f"{here} = {quote(value)} is not {_EXPECTED[kind]}")


_EXPECTED = {
    "joint": "a joint index (-1 for all) or name",
    "joints": "a joint, a list of joints or null",
    "number": "a finite number",
    "number_or_vector": "a finite number or a list of numbers",
    "seconds": "a duration >= 0 in seconds",
    "vector": f"a list of 1 to {MAX_VECTOR} numbers (.nan to leave a joint alone)",
    "repeat": "a whole number >= 1 or 'forever'",
    "mode": "'immediate' or 'decelerate'",
    "bool": "true or false",
    "id": "a short string or a whole number",
}


def check_shapes(where: str, arguments: Mapping[str, Any], description: RobotDescription) -> None:
    """Refuse vectors of the wrong length and unknown joints for ``description``."""
    dof = description.dof
    for name, value in arguments.items():
        kind = ARGUMENT_KINDS.get(name)
        if (
            kind in ("vector", "number_or_vector")
            and isinstance(value, Sequence)
            and len(value) != dof
        ):
            raise ConfigurationError(
                f"{where}: argument {name!r} has {len(value)} values, "
                f"expected {dof} (one per joint of {description.name!r})"
            )
        joints = (
            value
            if kind == "joints" and isinstance(value, Sequence) and not isinstance(value, str)
            else [value]
            if kind in ("joint", "joints") and value is not None
            else []
        )
        for joint in joints:
            if joint == -1:
                continue
            try:
                description.joint_index(joint)
            except DescriptionError as exc:
                raise ConfigurationError(f"{where}: argument {name!r}: {exc}") from None
