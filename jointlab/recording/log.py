"""Values of a recorded run: column fields, events, metadata and the loaded :class:`Log`.

A log is a table with one row per control tick. Its first column is ``time`` (seconds);
every other column holds one number of one field of one *channel* (a named Loggable such as
the desired action, the applied action or the state) and is named
``<channel>.<field>[<i>]``, e.g. ``state.position[2]``. A field whose Loggable value is a
plain number rather than a list gets a single column without an index,
``<channel>.<field>``. Cells of a channel not logged in a row are NaN.

Events (command feedback, safety clamps) are sparse and live beside the table, each with a
time, a kind and JSON-serialisable fields.
"""

from __future__ import annotations

import enum
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import numpy as np

from jointlab.errors import JointLabError

__all__ = [
    "APPLIED",
    "DESIRED",
    "STATE",
    "TIME",
    "Event",
    "EventKind",
    "Field",
    "Log",
    "LogError",
    "LogMetadata",
    "Loggable",
    "fields_from_columns",
]

#: Name of the time column (seconds).
TIME = "time"
#: Conventional channel of the observed :class:`~jointlab.interface.ArrayState`.
STATE = "state"
#: Conventional channel of the action the controller asked for.
DESIRED = "desired"
#: Conventional channel of the action actually sent (after the safety layer or a device).
APPLIED = "applied"

FORMAT_NAME = "jointlab-log"
FORMAT_VERSION = 1

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_COLUMN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?\Z")


class LogError(JointLabError, ValueError):
    """A log file cannot be read, or a value given to a recorder cannot be logged."""


@runtime_checkable
class Loggable(Protocol):
    """Anything with named numeric fields, like :class:`~jointlab.interface.NJointAction`."""

    def get_name(self) -> list[str]:
        """Field names, in the order of :meth:`get_data`."""

    def get_data(self) -> list[list[float]]:
        """Field values: a list of floats (or a single float) per field."""


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


def check_name(what: str, name: object) -> str:
    """Return ``name`` if it is an identifier usable in a column name, else raise LogError."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise LogError(
            f"{what} {name!r} is not a valid name: expected letters, digits and '_', "
            "not starting with a digit"
        )
    if what == "channel" and name == TIME:
        raise LogError(f"channel name {TIME!r} is reserved for the time column")
    return name


@dataclass(frozen=True)
class Field:
    """One field of one channel and the columns it occupies."""

    #: Channel name, e.g. ``"state"``.
    channel: str
    #: Field name within the channel, e.g. ``"position"``.
    name: str
    #: Number of columns (numbers per row).
    width: int
    #: True for a list-valued field (columns ``name[i]``); False for one plain number.
    indexed: bool = True

    @property
    def key(self) -> str:
        """``"<channel>.<field>"``."""
        return f"{self.channel}.{self.name}"

    @property
    def columns(self) -> tuple[str, ...]:
        """Column names of this field."""
        if not self.indexed:
            return (self.key,)
        return tuple(f"{self.key}[{i}]" for i in range(self.width))

    def to_json(self) -> list[Any]:
        """Compact JSON form ``[channel, name, width, indexed]``."""
        return [self.channel, self.name, self.width, self.indexed]

    @classmethod
    def from_json(cls, value: Any) -> Field:
        """Inverse of :meth:`to_json`."""
        try:
            channel, name, width, indexed = value
            return cls(str(channel), str(name), int(width), bool(indexed))
        except (TypeError, ValueError) as exc:
            raise LogError(
                f"log field entry {value!r} is not [channel, name, width, indexed]"
            ) from exc


def fields_from_columns(columns: Sequence[str]) -> tuple[Field, ...]:
    """Rebuild the fields from column names (without ``time``), e.g. a CSV header.

    Raises:
        LogError: a column name does not follow ``<channel>.<field>[<i>]`` or a field's
            indices are not ``0, 1, ..., width - 1`` in order.
    """
    fields: list[Field] = []
    seen: set[str] = set()
    i = 0
    while i < len(columns):
        match = _COLUMN.match(columns[i])
        if match is None:
            raise LogError(f"log column {columns[i]!r} is not named <channel>.<field>[<index>]")
        channel, name, index = match.groups()
        key = f"{channel}.{name}"
        if key in seen:
            raise LogError(f"log columns of field {key!r} are not contiguous")
        seen.add(key)
        if index is None:
            fields.append(Field(channel, name, 1, indexed=False))
            i += 1
            continue
        width = 0
        while i < len(columns):
            match = _COLUMN.match(columns[i])
            if match is None or f"{match[1]}.{match[2]}" != key or match[3] is None:
                break
            if int(match[3]) != width:
                raise LogError(
                    f"log column {columns[i]!r}: expected index {width} of field {key!r}"
                )
            width += 1
            i += 1
        fields.append(Field(channel, name, width, indexed=True))
    return tuple(fields)


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
        if self.joint_names is not None:
            names = tuple(str(n) for n in self.joint_names)
            object.__setattr__(self, "joint_names", names)
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
            for name in ("joint_names", *_VECTORS):
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
        return cls(
            robot=description.name,
            dof=description.dof,
            joint_names=tuple(description.joint_names),
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
        """Metadata of a live :class:`~jointlab.interface.Robot` (its description and dt)."""
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
        for name in ("robot", "dof", "joint_names", "dt", *_VECTORS):
            value = getattr(self, name)
            out[name] = list(value) if isinstance(value, tuple) else value
        out["extra"] = dict(self.extra)
        return out

    @classmethod
    def from_json(cls, value: Any) -> LogMetadata:
        """Inverse of :meth:`to_json`; unknown keys go to ``extra``."""
        if not isinstance(value, Mapping):
            raise LogError(f"log metadata must be a JSON object, got {value!r}")
        known = {"robot", "dof", "joint_names", "dt", "extra", *_VECTORS}
        kwargs = {k: v for k, v in value.items() if k in known}
        extra = dict(kwargs.pop("extra", None) or {})
        extra.update({k: v for k, v in value.items() if k not in known})
        return cls(**kwargs, extra=extra)


@dataclass(frozen=True, eq=False)
class Log:
    """A loaded log: the time column, the data table, metadata and events.

    Index it like a mapping: ``log["time"]`` (shape ``(T,)``), ``log["state.position"]``
    (shape ``(T, width)``; ``(T,)`` for a plain-number field), ``log["state.position[2]"]``
    (shape ``(T,)``). Arrays are read-only views of one table.
    """

    #: Seconds, shape ``(T,)``.
    time: np.ndarray
    #: Every column but time, shape ``(T, C)``, float64 (NaN where not logged).
    data: np.ndarray
    #: Fields in column order.
    fields: tuple[Field, ...]
    #: Robot metadata.
    metadata: LogMetadata = field(default_factory=LogMetadata)
    #: Events in the order they were recorded.
    events: tuple[Event, ...] = ()
    #: False when read from an unfinalised file (a recorder that did not close).
    finalised: bool = True
    #: The file it was read from, if any.
    source: Path | None = None

    def __post_init__(self) -> None:
        time = np.asarray(self.time, dtype=np.float64).reshape(-1)
        width = sum(f.width for f in self.fields)
        data = np.asarray(self.data, dtype=np.float64).reshape(time.shape[0], width)
        for array in (time, data):
            array.setflags(write=False)
        object.__setattr__(self, "time", time)
        object.__setattr__(self, "data", data)
        index: dict[str, tuple[int, Field]] = {}
        offset = 0
        for f in self.fields:
            if f.key in index:
                raise LogError(f"log field {f.key!r} appears twice")
            index[f.key] = (offset, f)
            offset += f.width
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_columns", {c: i for i, c in enumerate(self.columns)})

    @property
    def columns(self) -> tuple[str, ...]:
        """Column names of ``data`` in order (``time`` excluded)."""
        return tuple(c for f in self.fields for c in f.columns)

    @property
    def channels(self) -> tuple[str, ...]:
        """Channel names in column order."""
        return tuple(dict.fromkeys(f.channel for f in self.fields))

    def field_names(self, channel: str) -> tuple[str, ...]:
        """Field names of ``channel``."""
        return tuple(f.name for f in self.fields if f.channel == channel)

    def channel(self, name: str) -> dict[str, np.ndarray]:
        """All fields of channel ``name`` as ``{field: array}``."""
        if name not in self.channels:
            raise LogError(f"log has no channel {name!r}; channels: {list(self.channels)}")
        return {f.name: self[f.key] for f in self.fields if f.channel == name}

    def keys(self) -> tuple[str, ...]:
        """``time`` and every ``<channel>.<field>`` key."""
        return (TIME, *self._index)

    def __getitem__(self, key: str) -> np.ndarray:
        if key == TIME:
            return self.time
        if key in self._index:
            offset, f = self._index[key]
            if not f.indexed:
                return self.data[:, offset]
            return self.data[:, offset : offset + f.width]
        if key in self._columns:
            return self.data[:, self._columns[key]]
        raise KeyError(f"log has no column or field {key!r}; fields: {list(self._index)}")

    def __contains__(self, key: object) -> bool:
        return key == TIME or key in self._index or key in self._columns

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return int(self.time.shape[0])

    def events_of(self, kind: str | EventKind) -> tuple[Event, ...]:
        """Events of one kind."""
        kind = kind.value if isinstance(kind, EventKind) else kind
        return tuple(e for e in self.events if e.kind == kind)

    def header_json(self) -> dict[str, Any]:
        """The JSON header written into files: format, version, metadata, fields."""
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "metadata": self.metadata.to_json(),
            "fields": [f.to_json() for f in self.fields],
        }


def dumps(value: Any) -> str:
    """One-line JSON (NaN and infinities allowed, exact float round trip)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=True)
