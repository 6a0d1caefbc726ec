"""The table of a recorded run: column fields and the loaded :class:`Log`.

A log is a table with one row per control tick. Its first column is ``time`` (seconds);
every other column holds one number of one field of one *channel* (a named Loggable such as
the desired action, the applied action or the state) and is named
``<channel>.<field>[<i>]``, e.g. ``state.position[2]``. A field whose Loggable value is a
plain number rather than a list gets a single column without an index,
``<channel>.<field>``. Cells of a channel not logged in a row are NaN.

Events and metadata live beside the table (:mod:`jointlab.recording.metadata`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from jointlab.recording.metadata import Event, EventKind, LogError, LogMetadata

__all__ = [
    "APPLIED",
    "COMMANDED",
    "DESIRED",
    "FEEDFORWARD",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "SENT",
    "STATE",
    "TIME",
    "Field",
    "Log",
    "Loggable",
    "check_name",
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
#: Channel of what the commands asked for (their targets, before feed-forward or offsets).
COMMANDED = "commanded"
#: Channel of the controller's model feed-forward torque (gravity, inertia), N·m.
FEEDFORWARD = "feedforward"
#: Channel of the action handed to the robot (after the safety layer; on a position servo
#: its targets carry the feed-forward as an offset).
SENT = "sent"

FORMAT_NAME = "jointlab-log"
FORMAT_VERSION = 1

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_COLUMN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?\Z")


@runtime_checkable
class Loggable(Protocol):
    """Anything with named numeric fields, like :class:`~jointlab.interface.NJointAction`."""

    def get_name(self) -> list[str]:
        """Field names, in the order of :meth:`get_data`."""

    def get_data(self) -> list[list[float]]:
        """Field values: a list of floats (or a single float) per field."""


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
        # Copies: the arrays are made read-only, and callers' arrays must stay theirs.
        time = np.array(self.time, dtype=np.float64).reshape(-1)
        width = sum(f.width for f in self.fields)
        data = np.array(self.data, dtype=np.float64)
        if data.size == 0:
            data = data.reshape(time.shape[0], width)
        if data.shape != (time.shape[0], width):
            raise LogError(
                f"log data has shape {data.shape}, expected {(time.shape[0], width)} "
                f"({time.shape[0]} times, {width} columns of the fields)"
            )
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
