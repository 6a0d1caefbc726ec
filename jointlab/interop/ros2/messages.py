"""ROS 2 message contents checked and turned into Commander requests (no ROS needed).

The bridge hands the fields of a ``sensor_msgs/JointState`` command or a
``trajectory_msgs/JointTrajectory`` here as plain sequences. Bad input is refused with
:class:`BadMessage`, whose ``field`` names the message field as ROS spells it
(``name[3]``, ``position``, ``effort[2]``, ``points[4].time_from_start``); the bridge
publishes it as an event and applies nothing.

The command contract is ``joint_state_topic_hardware_interface``'s (formerly
``topic_based_ros2_control``): ``name`` lists the joints; ``position``, ``velocity`` and
``effort`` are each empty or one value per name. What each field may hold:

* ``position``: a number, or NaN to leave the joint out of the command;
* ``velocity``: a number, or NaN (left out as a target; 0 as a feed-forward);
* ``effort``: a finite number (an effort command cannot be "no effort").

Infinities are refused in every field.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jointlab.controllers.waypoints import Waypoint
from jointlab.errors import CommandRefused, quote
from jointlab.robots.description import RobotDescription

__all__ = [
    "BadMessage",
    "JointCommand",
    "TrajectoryPoint",
    "TrajectoryRequest",
    "event_json",
    "joint_command",
    "joint_trajectory",
]


class BadMessage(CommandRefused):
    """A message the bridge refuses (reason ``bad_command``); ``field`` names the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}", reason="bad_command")
        #: The message field, as ROS spells it (``points[2].time_from_start``).
        self.field = field


@dataclass(frozen=True, eq=False)
class JointCommand:
    """A checked ``JointState`` command: joint indices and the fields it gives, ``(n,)`` each."""

    joints: np.ndarray
    position: np.ndarray | None
    velocity: np.ndarray | None
    effort: np.ndarray | None


@dataclass(frozen=True)
class TrajectoryPoint:
    """One ``JointTrajectoryPoint``'s fields (empty sequences where not given)."""

    positions: Sequence[float]
    velocities: Sequence[float]
    accelerations: Sequence[float]
    effort: Sequence[float]
    #: ``time_from_start`` in seconds.
    time_from_start: float


@dataclass(frozen=True, eq=False)
class TrajectoryRequest:
    """A checked trajectory: joint indices and waypoints; no waypoints means stop and hold."""

    joints: np.ndarray
    waypoints: tuple[Waypoint, ...]


def _joints(description: RobotDescription, names: Sequence[str], field: str) -> np.ndarray:
    """Indices of ``names``; refuses unknown and repeated names, naming ``field[i]``."""
    known = description.joint_names
    seen: dict[str, int] = {}
    indices = []
    for i, name in enumerate(names):
        if name not in known:
            hint = difflib.get_close_matches(str(name), known, n=1)
            raise BadMessage(
                f"{field}[{i}]",
                f"robot {description.name!r} has no joint "
                f"{quote(name)}"
                + (f"; did you mean {hint[0]!r}?" if hint else "")
                + f" (joints: {list(known)})",
            )
        if name in seen:
            raise BadMessage(
                f"{field}[{i}]", f"joint {name!r} is named twice (also at {field}[{seen[name]}])"
            )
        seen[name] = i
        indices.append(known.index(name))
    return np.array(indices, dtype=int)


def _values(
    values: Sequence[float], n: int, field: str, names: str, *, nan: bool, required: bool = False
) -> np.ndarray | None:
    """``values`` as ``(n,)`` floats, None when empty; refuses lengths, inf (and NaN)."""
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    if array.size == 0 and not required:
        return None
    if array.shape[0] != n:
        raise BadMessage(
            field,
            f"{array.shape[0]} values for the {n} joints of {names}: give one per joint, or none",
        )
    bad = np.isinf(array) | (np.isnan(array) if not nan else False)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        allowed = "a number or NaN" if nan else "a finite number"
        raise BadMessage(f"{field}[{i}]", f"{array[i]} is not allowed here: {allowed}")
    return array


def joint_command(
    description: RobotDescription,
    name: Sequence[str],
    position: Sequence[float],
    velocity: Sequence[float],
    effort: Sequence[float],
) -> JointCommand:
    """Check a ``JointState`` command (see the module docstring for what each field holds).

    Raises:
        BadMessage: no joints or no values, an unknown or repeated name, an array whose
            length is not ``len(name)``, an infinity, a NaN effort.
    """
    if len(name) == 0:
        raise BadMessage("name", "no joints named: list the joints the command is for")
    joints = _joints(description, name, "name")
    n = joints.shape[0]
    fields = {
        "position": _values(position, n, "position", "name", nan=True),
        "velocity": _values(velocity, n, "velocity", "name", nan=True),
        "effort": _values(effort, n, "effort", "name", nan=False),
    }
    if all(value is None for value in fields.values()):
        raise BadMessage("position", "no position, velocity or effort given")
    return JointCommand(joints, fields["position"], fields["velocity"], fields["effort"])


def joint_trajectory(
    description: RobotDescription, joint_names: Sequence[str], points: Sequence[TrajectoryPoint]
) -> TrajectoryRequest:
    """Check a ``JointTrajectory``: names, per-point lengths and values, increasing times.

    Positions are required at every point; velocities and accelerations are optional (all
    or none per point) and must be finite; efforts are not followed and must be empty. An
    empty ``points`` is the ROS convention for "stop": a request without waypoints.

    Raises:
        BadMessage: naming ``joint_names[i]``, ``points[k].positions`` (or ``[j]``),
            ``points[k].velocities``, ``points[k].accelerations``, ``points[k].effort`` or
            ``points[k].time_from_start``.
    """
    if len(joint_names) == 0:
        raise BadMessage("joint_names", "no joints named: list the joints the trajectory moves")
    joints = _joints(description, joint_names, "joint_names")
    n = joints.shape[0]
    waypoints = []
    previous = -math.inf
    for k, point in enumerate(points):
        where = f"points[{k}]"
        p = _values(
            point.positions, n, f"{where}.positions", "joint_names", nan=False, required=True
        )
        v = _values(point.velocities, n, f"{where}.velocities", "joint_names", nan=False)
        a = _values(point.accelerations, n, f"{where}.accelerations", "joint_names", nan=False)
        if len(point.effort):
            raise BadMessage(
                f"{where}.effort",
                "efforts are not followed (the bridge tracks "
                "positions under PD with the model feed-forward): leave it empty",
            )
        t = float(point.time_from_start)
        if not math.isfinite(t) or t < 0:
            raise BadMessage(f"{where}.time_from_start", f"{t} s: expected a time >= 0 s")
        if t <= previous:
            raise BadMessage(
                f"{where}.time_from_start",
                f"{t:.9g} s is not after the previous "
                f"point's {previous:.9g} s: times must increase",
            )
        previous = t
        waypoints.append(Waypoint(position=p, velocity=v, acceleration=a, time_from_start=t))
    return TrajectoryRequest(joints, tuple(waypoints))


def event_json(kind: str, **fields: Any) -> str:
    """One event as the JSON text of a ``std_msgs/String`` (``kind`` first, NaN and inf null)."""
    return json.dumps(_plain({"kind": kind, **fields}), allow_nan=False, separators=(",", ":"))


def _plain(value: Any) -> Any:
    """``value`` with numpy values as Python ones and non-finite numbers as None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return value
    return str(value)
