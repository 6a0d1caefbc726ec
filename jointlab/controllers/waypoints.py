"""Waypoints of a trajectory and their validation (``CommandRefused`` "bad_trajectory").

A :class:`Waypoint` has a ``position`` and optionally a ``velocity``, an ``acceleration`` and a
``time_from_start`` in **seconds**; the BB seed gives times in milliseconds, which
:func:`from_milliseconds` converts. Every check names the waypoint, the joint, the value and the
limit, and all problems are listed at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jointlab.controllers.motion import MotionLimits
from jointlab.controllers.polynomial import PiecewisePolynomial
from jointlab.errors import CommandRefused

__all__ = [
    "Waypoint",
    "check_motion",
    "check_points",
    "from_milliseconds",
    "refuse",
    "stack_waypoints",
    "to_waypoints",
]

_KEYS = ("position", "velocity", "acceleration", "time_from_start")


def refuse(message: str) -> CommandRefused:
    """A ``CommandRefused`` with reason ``"bad_trajectory"``."""
    return CommandRefused(f"bad trajectory: {message}", reason="bad_trajectory")


def _array(value: Any, what: str) -> np.ndarray:
    try:
        array = np.atleast_1d(np.array(value, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise refuse(f"{what} must be a number or a list of numbers, got {value!r}") from exc
    if array.ndim != 1:
        raise refuse(f"{what} must be a number or a flat list, got shape {array.shape}")
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Waypoint:
    """One trajectory point; arrays have one value per commanded joint (shape ``(n,)``)."""

    #: Position in rad or m.
    position: np.ndarray
    #: Velocity in rad/s or m/s; ``None`` (or NaN entries) to let the interpolation choose.
    velocity: np.ndarray | None = None
    #: Acceleration in rad/s² or m/s²; ``None`` (or NaN entries) for a cubic piece.
    acceleration: np.ndarray | None = None
    #: Seconds from the start of the trajectory; ``None`` for automatic timing.
    time_from_start: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "position", _array(self.position, "waypoint position"))
        for name in ("velocity", "acceleration"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _array(value, f"waypoint {name}"))
        if self.time_from_start is not None:
            try:
                time = float(self.time_from_start)
            except (TypeError, ValueError) as exc:
                raise refuse(
                    f"time_from_start must be a number of seconds, got {self.time_from_start!r}"
                ) from exc
            object.__setattr__(self, "time_from_start", time)

    @classmethod
    def coerce(cls, value: Any, index: int = 0) -> Waypoint:
        """A waypoint from a :class:`Waypoint`, a mapping with the field names, or a position."""
        if isinstance(value, Waypoint):
            return value
        if isinstance(value, Mapping):
            unknown = set(value) - set(_KEYS)
            if unknown:
                raise refuse(
                    f"waypoint {index} has unknown keys {sorted(unknown)}; expected {list(_KEYS)}"
                )
            if "position" not in value:
                raise refuse(f"waypoint {index} has no position")
            return cls(**{k: value[k] for k in _KEYS if k in value})
        return cls(position=value)


def to_waypoints(waypoints: Iterable[Any]) -> list[Waypoint]:
    """Coerce each item with :meth:`Waypoint.coerce`."""
    if isinstance(waypoints, (str, bytes)) or not isinstance(waypoints, Iterable):
        raise refuse(f"waypoints must be a list, got {waypoints!r}")
    return [Waypoint.coerce(w, i) for i, w in enumerate(waypoints)]


def from_milliseconds(waypoints: Iterable[Any]) -> list[Waypoint]:
    """Waypoints whose ``time_from_start`` is in milliseconds (the BB seed), in seconds."""
    result = []
    for w in to_waypoints(waypoints):
        time = None if w.time_from_start is None else w.time_from_start / 1000.0
        result.append(Waypoint(w.position, w.velocity, w.acceleration, time))
    return result


def stack_waypoints(
    waypoints: Sequence[Waypoint], n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Positions, velocities, accelerations (``(n_points, n)``, NaN = not given) and times.

    Refuses wrong sizes, non-finite positions, and times that are partial, negative or not
    increasing. ``times`` is ``None`` when no waypoint has one (automatic timing).
    """
    problems = []
    count = len(waypoints)
    p = np.zeros((count, n))
    v = np.full((count, n), np.nan)
    a = np.full((count, n), np.nan)
    for i, w in enumerate(waypoints):
        for name, target in (("position", p), ("velocity", v), ("acceleration", a)):
            value = getattr(w, name)
            if value is None:
                continue
            if value.shape[0] != n:
                problems.append(f"waypoint {i} {name} has {value.shape[0]} values, expected {n}")
                continue
            if name == "position" and not np.all(np.isfinite(value)):
                problems.append(f"waypoint {i} position {value.tolist()} is not finite")
            if np.any(np.isinf(value)):
                problems.append(f"waypoint {i} {name} {value.tolist()} is infinite")
            target[i] = value
    timed = [w.time_from_start is not None for w in waypoints]
    times = None
    if any(timed):
        if not all(timed):
            missing = [i for i, t in enumerate(timed) if not t]
            problems.append(
                f"waypoints {missing} have no time_from_start while others have one; "
                "give all times or none"
            )
        else:
            times = np.array([w.time_from_start for w in waypoints])
            if not np.all(np.isfinite(times)) or np.any(times < 0):
                problems.append(f"times_from_start must be finite and >= 0, got {times.tolist()}")
            for i in np.flatnonzero(np.diff(times) <= 0):
                problems.append(
                    f"time_from_start of waypoint {i + 1} ({times[i + 1]} s) is not after "
                    f"waypoint {i} ({times[i]} s); times must increase"
                )
    if problems:
        raise refuse("; ".join(problems))
    return p, v, a, times


def check_points(limits: MotionLimits, p: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
    """Refuse waypoint values beyond the limits, listing them all.

    ``p``, ``v`` and ``a`` have shape ``(n_points, n)``; NaN entries (not given) pass.
    """
    problems = []
    for i, j in zip(*np.nonzero((p < limits.lower) | (p > limits.upper)), strict=True):
        problems.append(
            f"waypoint {i} position {p[i, j]:.6g} of joint {limits.names[j]!r} is outside "
            f"its position limits [{limits.lower[j]:.6g}, {limits.upper[j]:.6g}]"
        )
    for i, j in zip(*np.nonzero(np.abs(v) > limits.velocity), strict=True):
        problems.append(
            f"waypoint {i} velocity {v[i, j]:.6g} of joint {limits.names[j]!r} exceeds its "
            f"velocity limit {limits.velocity[j]:.6g}"
        )
    for i, j in zip(*np.nonzero(np.abs(a) > limits.acceleration), strict=True):
        problems.append(
            f"waypoint {i} acceleration {a[i, j]:.6g} of joint {limits.names[j]!r} exceeds "
            f"its acceleration limit {limits.acceleration[j]:.6g}"
        )
    if problems:
        raise refuse("; ".join(problems))


def check_motion(limits: MotionLimits, motion: PiecewisePolynomial, what: str) -> None:
    """Refuse a motion whose exact position range or peak speed leaves the limits."""
    low, high, speed = motion.extrema()
    problems = []
    tol = 1e-9
    for j in np.flatnonzero((low < limits.lower - tol) | (high > limits.upper + tol)):
        problems.append(
            f"the interpolated {what} of joint {limits.names[j]!r} reaches "
            f"[{low[j]:.6g}, {high[j]:.6g}], outside its position limits "
            f"[{limits.lower[j]:.6g}, {limits.upper[j]:.6g}]"
        )
    for j in np.flatnonzero(speed > limits.velocity * (1 + 1e-9)):
        problems.append(
            f"the interpolated {what} of joint {limits.names[j]!r} reaches speed "
            f"{speed[j]:.6g}, above its velocity limit {limits.velocity[j]:.6g}"
        )
    if problems:
        raise refuse("; ".join(problems))
