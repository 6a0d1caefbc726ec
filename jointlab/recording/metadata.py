"""The JSON side of a log: run metadata, events, and the error type of this package.

Metadata (robot name, joints, dt, limits) is stored in every log file so plots can draw
limits; events (command feedback, safety clamps) are sparse, timestamped JSON records.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from jointlab.errors import JointLabError

__all__ = ["Event", "EventKind", "LogError", "LogMetadata", "dumps", "to_jsonable"]


class LogError(JointLabError, ValueError):
    """A log file cannot be read, or a value given to a recorder cannot be logged."""


class EventKind(str, enum.Enum):
    """Kinds of event the controllers and backends emit; any other identifier works too."""

    ACCEPTED = "accepted"
    BEGIN_MOTION = "begin_motion"
    END_MOTION = "end_motion"
    STALLED = "stalled"
    REFUSED = "refused"
    PREEMPTED = "preempted"
    #: The safety layer changed an action (torque, position or velocity clamped).
    CLAMPED = "clamped"


def to_jsonable(value: Any, where: str) -> Any:
    """Convert numpy scalars/arrays, enums and tuples to plain JSON values (NaN allowed)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value, where)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, np.generic):
        return to_jsonable(value.item(), where)
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist(), where)
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise LogError(f"{where} has a non-string key {key!r}; keys must be strings")
            out[key] = to_jsonable(item, f"{where}.{key}")
        return out
    raise LogError(
        f"{where} = {value!r} ({type(value).__name__}) cannot be logged: expected numbers, "
        "strings, bools, None, arrays, lists or dicts of them"
    )


def _finite_time(time: Any, where: str) -> float:
    try:
        value = float(time)
    except (TypeError, ValueError) as exc:
        raise LogError(f"{where} time must be a number of seconds, got {time!r}") from exc
    if not math.isfinite(value):
        raise LogError(f"{where} time must be finite, got {value}")
    return value


@dataclass(frozen=True)
class Event:
    """A sparse, timestamped occurrence: command feedback or a safety intervention.

    ``fields`` holds JSON values (numbers, strings, bools, None, lists, dicts); numpy values
    are converted when the event is built, so a saved and reloaded event compares equal.
    """

    #: Seconds, on the same clock as the log's ``time`` column.
    time: float
    #: What happened, e.g. ``"accepted"``, ``"stalled"`` (see :class:`EventKind`).
    kind: str
    #: Details, e.g. ``{"command_id": 3, "joint": 1}``.
    fields: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        kind = self.kind.value if isinstance(self.kind, enum.Enum) else self.kind
        if not isinstance(kind, str) or not kind:
            raise LogError(f"event kind must be a non-empty string, got {self.kind!r}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "time", _finite_time(self.time, f"event {kind!r}"))
        fields = to_jsonable(dict(self.fields), f"event {kind!r} field")
        object.__setattr__(self, "fields", MappingProxyType(fields))

    def get(self, key: str, default: Any = None) -> Any:
        """Return field ``key`` or ``default``."""
        return self.fields.get(key, default)

    def to_json(self) -> dict[str, Any]:
        """``{"time": ..., "kind": ..., "fields": {...}}``."""
        return {"time": self.time, "kind": self.kind, "fields": dict(self.fields)}

    @classmethod
    def from_json(cls, value: Any) -> Event:
        """Inverse of :meth:`to_json`."""
        try:
            return cls(value["time"], value["kind"], value.get("fields", {}))
        except (TypeError, KeyError, AttributeError) as exc:
            raise LogError(f"log event {value!r} is not {{time, kind, fields}}") from exc


_VECTORS = ("effort_limit", "position_lower", "position_upper", "velocity_limit", "current_limit")


@dataclass(frozen=True)
class LogMetadata:
    """What plots need to know about the robot behind a log. Every entry is optional.

    Vectors are tuples of length ``dof`` in the description's joint order.
    """

    #: Robot name.
    robot: str | None = None
    #: Number of joints.
    dof: int | None = None
    #: Joint names in joint-space order.
    joint_names: tuple[str, ...] | None = None
    #: ``"rotary"`` or ``"linear"`` per joint (plots choose rad or m from it).
    joint_types: tuple[str, ...] | None = None
    #: Control period in seconds (the nominal spacing of rows).
    dt: float | None = None
    #: Effort limits in N·m (N for linear joints).
    effort_limit: tuple[float, ...] | None = None
    #: Lower position limits in rad or m.
    position_lower: tuple[float, ...] | None = None
    #: Upper position limits in rad or m.
    position_upper: tuple[float, ...] | None = None
    #: Velocity limits in rad/s or m/s.
    velocity_limit: tuple[float, ...] | None = None
    #: Motor current limits in A.
    current_limit: tuple[float, ...] | None = None
    #: Anything else worth keeping (JSON values), e.g. the backend URL or a seed.
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        dof = self.dof
        for name in ("joint_names", "joint_types"):
            if getattr(self, name) is not None:
                names = tuple(str(n) for n in getattr(self, name))
                object.__setattr__(self, name, names)
                dof = len(names) if dof is None else dof
        for name in _VECTORS:
            value = getattr(self, name)
            if value is None:
                continue
            vector = tuple(float(v) for v in np.asarray(value, dtype=np.float64).ravel())
            object.__setattr__(self, name, vector)
            dof = len(vector) if dof is None else dof
        if dof is not None:
            if isinstance(dof, bool) or int(dof) != dof or dof < 0:
                raise LogError(f"LogMetadata.dof must be a non-negative integer, got {dof!r}")
            dof = int(dof)
            object.__setattr__(self, "dof", dof)
            for name in ("joint_names", "joint_types", *_VECTORS):
                value = getattr(self, name)
                if value is not None and len(value) != dof:
                    raise LogError(f"LogMetadata.{name} has {len(value)} entries, expected {dof}")
        if self.dt is not None:
            dt = float(self.dt)
            if not (math.isfinite(dt) and dt > 0):
                raise LogError(f"LogMetadata.dt must be a positive number of seconds, got {dt}")
            object.__setattr__(self, "dt", dt)
        object.__setattr__(
            self, "extra", MappingProxyType(to_jsonable(dict(self.extra), "LogMetadata.extra"))
        )

    @classmethod
    def from_description(
        cls, description: Any, dt: float | None = None, **extra: Any
    ) -> LogMetadata:
        """Metadata of a :class:`~jointlab.robots.description.RobotDescription`.

        Args:
            description: The robot description.
            dt: Control period in seconds, if known.
            **extra: Extra JSON values to keep.
        """
        joints = description.joints
        currents = [getattr(getattr(j, "motor", None), "max_current", math.nan) for j in joints]
        linear = getattr(description, "is_linear", None)
        return cls(
            robot=description.name,
            dof=description.dof,
            joint_names=tuple(description.joint_names),
            joint_types=None
            if linear is None
            else tuple("linear" if is_linear else "rotary" for is_linear in linear),
            dt=dt,
            effort_limit=description.effort_limit,
            position_lower=description.lower,
            position_upper=description.upper,
            velocity_limit=description.velocity_limit,
            current_limit=currents,
            extra=extra,
        )

    @classmethod
    def from_robot(cls, robot: Any, **extra: Any) -> LogMetadata:
        """Metadata of a live :class:`~jointlab.contract.Robot` (its description and dt)."""
        return cls.from_description(robot.description, dt=robot.control_dt, **extra)

    def vector(self, name: str) -> np.ndarray | None:
        """Return vector entry ``name`` (e.g. ``"effort_limit"``) as an array, or None."""
        if name not in _VECTORS:
            raise LogError(f"LogMetadata has no vector {name!r}; known: {list(_VECTORS)}")
        value = getattr(self, name)
        return None if value is None else np.array(value, dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form (tuples as lists)."""
        out: dict[str, Any] = {}
        for name in ("robot", "dof", "joint_names", "joint_types", "dt", *_VECTORS):
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        out["extra"] = dict(self.extra)
        return out

    @classmethod
    def from_json(cls, value: Any) -> LogMetadata:
        """Inverse of :meth:`to_json`; unknown keys go to ``extra``."""
        if not isinstance(value, Mapping):
            raise LogError(f"log metadata must be a JSON object, got {value!r}")
        known = {"robot", "dof", "joint_names", "joint_types", "dt", "extra", *_VECTORS}
        kwargs = {k: v for k, v in value.items() if k in known}
        extra = dict(kwargs.pop("extra", None) or {})
        extra.update({k: v for k, v in value.items() if k not in known})
        return cls(**kwargs, extra=extra)


def dumps(value: Any) -> str:
    """One-line JSON (NaN and infinities allowed, exact float round trip)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=True)
