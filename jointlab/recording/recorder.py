"""The :class:`Recorder`: log Loggables and events tick by tick into a crash-safe file.

Typical use in a control loop::

    with Recorder("run.npz", robot) as rec:
        for _ in range(n):
            robot.apply(action)
            robot.step()
            rec.log(robot.time, desired=action, applied=applied, state=robot.read())
            rec.event(robot.time, "begin_motion", command_id=3)

Rows are buffered and flushed every ``flush_every`` rows or when ``flush_interval`` seconds
of wall-clock time have passed since the last flush (checked whenever a row or an event is
logged), so a crash loses at most the rows logged since the last flush. See
:mod:`jointlab.recording.formats` for what each format writes and how a killed process still
leaves a readable file.

The columns are fixed by the first flush: log every channel from the first tick (a channel
first seen after that raises :class:`~jointlab.recording.log.LogError`). A channel missing
from a row, or passed as ``None``, is NaN in that row.
"""

from __future__ import annotations

import math
import os
import threading
import time as _time
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.recording.formats import infer_format
from jointlab.recording.log import FORMAT_NAME, FORMAT_VERSION, Field, check_name
from jointlab.recording.metadata import Event, EventKind, LogError, LogMetadata
from jointlab.recording.writers import open_writer

__all__ = ["Recorder"]


@dataclass(frozen=True)
class _Channel:
    names: list[str]
    shapes: tuple[tuple[int, ...], ...]
    offset: int
    width: int
    #: Per-field lengths when every field is a list (enables the fast path), else None.
    lengths: list[int] | None


def _read(channel: str, value: Any) -> tuple[list[str], list[Any]]:
    """Field names and values of a Loggable or a mapping ``{field: number or array}``."""
    if isinstance(value, Mapping):
        names, data = list(value.keys()), list(value.values())
    elif callable(getattr(value, "get_name", None)) and callable(getattr(value, "get_data", None)):
        names, data = list(value.get_name()), list(value.get_data())
    else:
        raise LogError(
            f"channel {channel!r}: {type(value).__name__} is neither a Loggable "
            "(get_name() and get_data()) nor a mapping of field name to numbers"
        )
    if len(names) != len(data):
        raise LogError(
            f"channel {channel!r}: get_name() gives {len(names)} names but get_data() "
            f"{len(data)} values"
        )
    return names, data


def _arrays(channel: str, names: list[str], data: list[Any]) -> list[np.ndarray]:
    parts = []
    for name, value in zip(names, data, strict=True):
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise LogError(
                f"field {name!r} of channel {channel!r} is not numeric: {value!r}"
            ) from exc
        if array.ndim > 1:
            raise LogError(
                f"field {name!r} of channel {channel!r} has shape {array.shape}; "
                "expected a number or a 1-D list"
            )
        parts.append(array)
    return parts


def _metadata(value: Any) -> LogMetadata:
    if value is None:
        return LogMetadata()
    if isinstance(value, LogMetadata):
        return value
    if hasattr(value, "description") and hasattr(value, "control_dt"):
        return LogMetadata.from_robot(value)
    if hasattr(value, "joint_names") and hasattr(value, "effort_limit"):
        return LogMetadata.from_description(value)
    raise ConfigurationError(
        f"Recorder metadata must be a LogMetadata, a Robot or a RobotDescription, "
        f"got {type(value).__name__}"
    )


class Recorder:
    """Logs channels of Loggables and events, one row per tick, into a CSV/NPZ/Parquet file.

    Not meant to be shared between processes; calls from several threads are serialised.

    Args:
        path: Output file; the suffix picks the format (``.csv``, ``.npz``, ``.parquet``)
            unless ``format`` is given. Parent folders are created.
        metadata: A :class:`LogMetadata`, or a ``Robot`` / ``RobotDescription`` to take it
            from (robot name, dof, joint names, dt, limits), stored in the file for plots.
        format: ``"csv"``, ``"npz"`` or ``"parquet"`` (Parquet needs pyarrow).
        flush_every: Flush after this many buffered rows (>= 1).
        flush_interval: Also flush when this many seconds (wall clock, >= 0) have passed
            since the last flush; 0 flushes every row.
        fsync: Also ``fsync`` each flush (survives power loss, not only a process crash).
        overwrite: Replace an existing log at ``path``; if False, raise instead.

    Raises:
        ConfigurationError: an invalid option, an existing file with ``overwrite=False``
            or Parquet without pyarrow.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        metadata: LogMetadata | Any = None,
        *,
        format: str | None = None,
        flush_every: int = 1000,
        flush_interval: float = 1.0,
        fsync: bool = False,
        overwrite: bool = True,
    ) -> None:
        if isinstance(flush_every, bool) or not isinstance(flush_every, int) or flush_every < 1:
            raise ConfigurationError(f"flush_every must be an integer >= 1, got {flush_every!r}")
        try:
            interval = float(flush_interval)
        except (TypeError, ValueError):
            interval = math.nan
        if math.isnan(interval) or interval < 0:
            raise ConfigurationError(f"flush_interval must be >= 0 seconds, got {flush_interval!r}")
        self._path = Path(path)
        self._format = infer_format(self._path, format)
        self._metadata = _metadata(metadata)
        self._flush_every = flush_every
        self._flush_interval = interval
        header = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "metadata": self._metadata.to_json(),
        }
        self._writer = open_writer(
            self._path, self._format, header, fsync=bool(fsync), overwrite=overwrite
        )
        self._lock = threading.RLock()
        self._channels: dict[str, _Channel] = {}
        self._fields: list[Field] = []
        self._width = 0
        self._fixed = False
        self._times: list[float] = []
        self._rows: list[np.ndarray] = []
        self._events: list[Event] = []
        self._open_time: float | None = None
        self._open: dict[str, np.ndarray] = {}
        self._rows_logged = 0
        self._rows_written = 0
        self._last_flush = _time.monotonic()
        self._closed = False

    # ----------------------------------------------------------------- properties
    @property
    def path(self) -> Path:
        """The output file (for NPZ/Parquet it exists once the recorder is closed)."""
        return self._path

    @property
    def format(self) -> str:
        """``"csv"``, ``"npz"`` or ``"parquet"``."""
        return self._format

    @property
    def metadata(self) -> LogMetadata:
        """The metadata stored in the file."""
        return self._metadata

    @property
    def fields(self) -> tuple[Field, ...]:
        """Fields known so far, in column order."""
        return tuple(self._fields)

    @property
    def rows_logged(self) -> int:
        """Rows completed so far (an open row of :meth:`record` is not counted)."""
        return self._rows_logged

    @property
    def rows_written(self) -> int:
        """Rows flushed to the file: what survives a crash."""
        return self._rows_written

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    # ----------------------------------------------------------------- logging
    def log(self, time: float, /, **channels: Any) -> None:
        """Log one row: ``rec.log(t, desired=action, applied=applied, state=state)``.

        Args:
            time: Seconds (finite), usually the robot's ``time``.
            **channels: Channel name -> Loggable (``get_name``/``get_data``) or a mapping
                ``{field: number or 1-D array}``; ``None`` leaves the channel NaN.

        Raises:
            LogError: a value is not loggable, a field changed its width or names, a new
                channel appeared after the first flush, or the recorder is closed.
        """
        with self._lock:
            self._check_open()
            t = self._time(time)
            values = {
                name: self._values(name, value)
                for name, value in channels.items()
                if value is not None
            }
            if self._open_time is not None:
                self._commit()
            self._open_time, self._open = t, values
            self._commit()

    def record(self, channel: str, time: float, value: Any) -> None:
        """Log one channel into the row at ``time``.

        Consecutive calls with the same ``time`` and different channels fill one row; a new
        time, or a channel already set in the open row, starts the next row. The open row is
        written by the next row, :meth:`flush` or :meth:`close`.
        """
        with self._lock:
            self._check_open()
            t = self._time(time)
            if value is None:
                return
            flat = self._values(channel, value)
            if self._open_time is not None and (t != self._open_time or channel in self._open):
                self._commit()
            self._open_time = t
            self._open[channel] = flat

    def event(self, time: float, kind: str | EventKind, /, **fields: Any) -> Event:
        """Log an event, e.g. ``rec.event(t, "accepted", command_id=3)``.

        Args:
            time: Seconds (finite).
            kind: What happened (an :class:`EventKind` or any non-empty string).
            **fields: JSON values: numbers, strings, bools, None, arrays, lists, dicts.

        Returns:
            The event as stored.
        """
        with self._lock:
            self._check_open()
            event = Event(time, kind, fields)
            self._events.append(event)
            if _time.monotonic() - self._last_flush >= self._flush_interval:
                self._flush()
            return event

    def flush(self) -> None:
        """Complete the open row and write every buffered row and event to the file."""
        with self._lock:
            self._check_open()
            if self._open_time is not None:
                self._commit()
            self._flush()

    def close(self) -> None:
        """Flush and finish the file (NPZ/Parquet: convert the journal). Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._open_time is not None:
                    self._commit()
                self._flush()
            finally:
                self._writer.close(self._rows_written)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return (
            f"Recorder({str(self._path)!r}, format={self._format!r}, "
            f"rows={self._rows_logged}, written={self._rows_written}, {state})"
        )

    # ----------------------------------------------------------------- internals
    def _check_open(self) -> None:
        if self._closed:
            raise LogError(f"the recorder of {self._path} is closed")

    @staticmethod
    def _time(time: Any) -> float:
        try:
            t = float(time)
        except (TypeError, ValueError) as exc:
            raise LogError(f"row time must be a number of seconds, got {time!r}") from exc
        if not math.isfinite(t):
            raise LogError(f"row time must be finite, got {t}")
        return t

    def _values(self, channel: str, value: Any) -> np.ndarray:
        names, data = _read(channel, value)
        spec = self._channels.get(channel)
        if spec is not None and spec.lengths is not None and names == spec.names:
            # Fast path for a known all-list channel; anything odd falls through to the
            # checked path below, which names the offending field.
            try:
                if [len(x) for x in data] == spec.lengths:
                    return np.fromiter(chain.from_iterable(data), np.float64, count=spec.width)
            except (TypeError, ValueError):
                pass
        parts = _arrays(channel, names, data)
        shapes = tuple(p.shape for p in parts)
        if spec is None:
            spec = self._add_channel(channel, names, shapes)
        elif names != spec.names or shapes != spec.shapes:
            raise LogError(self._mismatch(channel, spec, names, shapes))
        if not parts:
            return np.empty(0)
        return np.concatenate([p.reshape(-1) for p in parts])

    def _add_channel(
        self, channel: str, names: list[str], shapes: tuple[tuple[int, ...], ...]
    ) -> _Channel:
        check_name("channel", channel)
        if self._fixed:
            raise LogError(
                f"channel {channel!r} first appeared after the log's columns were fixed by "
                f"the first flush (channels: {list(self._channels)}); log every channel "
                "from the first row"
            )
        if len(set(names)) != len(names):
            raise LogError(f"channel {channel!r} has repeated field names {names}")
        offset = self._width
        for name, shape in zip(names, shapes, strict=True):
            check_name(f"field of channel {channel!r}", name)
            width = shape[0] if shape else 1
            self._fields.append(Field(channel, name, width, indexed=bool(shape)))
            self._width += width
        lengths = [s[0] for s in shapes] if all(shapes) else None
        spec = _Channel(names, shapes, offset, self._width - offset, lengths)
        self._channels[channel] = spec
        return spec

    @staticmethod
    def _mismatch(
        channel: str, spec: _Channel, names: list[str], shapes: tuple[tuple[int, ...], ...]
    ) -> str:
        if names != spec.names:
            return f"channel {channel!r} has fields {names}, but its first row had {spec.names}"
        for name, shape, first in zip(names, shapes, spec.shapes, strict=True):
            if shape != first:

                def size(s: tuple[int, ...]) -> str:
                    return f"{s[0]} values" if s else "a single number"

                return (
                    f"field {name!r} of channel {channel!r} has {size(shape)}, "
                    f"but {size(first)} in its first row"
                )
        return f"channel {channel!r} changed shape"  # pragma: no cover - unreachable

    def _commit(self) -> None:
        row = np.full(self._width, np.nan)
        for name, flat in self._open.items():
            spec = self._channels[name]
            row[spec.offset : spec.offset + spec.width] = flat
        self._times.append(self._open_time)  # type: ignore[arg-type]
        self._rows.append(row)
        self._open_time, self._open = None, {}
        self._rows_logged += 1
        if (
            len(self._rows) >= self._flush_every
            or _time.monotonic() - self._last_flush >= self._flush_interval
        ):
            self._flush()

    def _flush(self) -> None:
        rows, times, events = self._rows, self._times, self._events
        if rows and not self._fixed:
            self._writer.write_schema(self._fields)
            self._fixed = True
        if rows or events:
            block = np.full((len(rows), self._width), np.nan)
            for i, row in enumerate(rows):
                block[i, : row.shape[0]] = row
            self._writer.write_block(np.array(times, dtype=np.float64), block, events)
        self._rows_written += len(rows)
        self._rows, self._times, self._events = [], [], []
        self._last_flush = _time.monotonic()
