"""Export a JointLab log to MCAP, the container Foxglove opens (``mcap`` package).

Layout of the file:

* one channel per log channel, topic ``/jointlab/<channel>`` (``/jointlab/state``,
  ``/jointlab/commanded``, ``/jointlab/feedforward``, ``/jointlab/sent``, ...), message
  encoding ``json`` with a ``jsonschema`` schema named ``jointlab.<channel>``. One message
  per row in which the channel was logged: ``{"time": seconds, "<field>": [one number per
  joint], ...}`` (a plain-number field is one number; a number that was not logged, NaN in
  the log, is ``null`` because JSON has no NaN). Foxglove plots ``/jointlab/state.position[1]``;
* topic ``/jointlab/events``: one message per event, ``{"time", "kind", "fields"}``;
* a metadata record ``jointlab`` with the log's header (format, version, robot metadata:
  joint names, limits, control period) as JSON text.

Log and publish times are the log's ``time`` in integer nanoseconds (the log's own clock:
seconds from the start of the run, so Foxglove shows dates in January 1970).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.extras import require
from jointlab.recording.formats import load_log
from jointlab.recording.log import Log
from jointlab.recording.metadata import LogError

__all__ = ["EVENTS_TOPIC", "TOPIC_PREFIX", "UNITS", "export_mcap", "nanoseconds", "schema_of"]

#: Topic of channel ``c``: ``TOPIC_PREFIX + c``.
TOPIC_PREFIX = "/jointlab/"
EVENTS_TOPIC = "/jointlab/events"
#: Units of the fields of actions and states (rotary joint / linear joint), for the schemas.
UNITS = {
    "time": "s",
    "position": "rad / m",
    "velocity": "rad/s / m/s",
    "acceleration": "rad/s² / m/s²",
    "torque": "N·m / N",
    "current": "A",
    "position_kp": "N·m/rad / N/m",
    "position_kd": "N·m·s/rad / N·s/m",
}


def nanoseconds(log: Log) -> np.ndarray:
    """The log's times in integer nanoseconds, shape ``(T,)``.

    Raises:
        LogError: a time is negative or not finite (MCAP times are unsigned), naming the file.
    """
    time = log.time
    bad = ~np.isfinite(time) | (time < 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise LogError(
            f"{log.source or 'log'}: time {time[row]} s at row {row} cannot be an "
            "MCAP time: expected finite seconds >= 0"
        )
    return np.round(time * 1e9).astype(np.int64)


def schema_of(log: Log, channel: str) -> dict[str, Any]:
    """The JSON schema of the messages of ``channel``."""
    number = {"type": ["number", "null"]}
    properties: dict[str, Any] = {"time": {"type": "number", "description": "time [s]"}}
    for f in log.fields:
        if f.channel != channel:
            continue
        unit = f" [{UNITS[f.name]}]" if f.name in UNITS else ""
        if f.indexed:
            properties[f.name] = {
                "type": "array",
                "items": number,
                "minItems": f.width,
                "maxItems": f.width,
                "description": f"{f.key}, one per joint{unit}",
            }
        else:
            properties[f.name] = {**number, "description": f"{f.key}{unit}"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"jointlab.{channel}",
        "type": "object",
        "properties": properties,
        "required": list(properties),
    }


def _cells(values: np.ndarray) -> list[float | None]:
    return [None if math.isnan(v) else v for v in values.tolist()]


def _strict(value: Any) -> Any:
    """``value`` with NaN and infinities as None: standard JSON (logs allow NaN, JSON not)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    return value


def _json(value: Any) -> str:
    return json.dumps(_strict(value), separators=(",", ":"), allow_nan=False)


def export_mcap(source: str | Path | Log, target: str | Path) -> Path:
    """Write the log ``source`` as the MCAP file ``target``; returns its path.

    Args:
        source: A log file (any format :func:`~jointlab.recording.load_log` reads) or a
            loaded :class:`~jointlab.recording.Log`.
        target: The ``.mcap`` file to write (replaced if it exists).

    Raises:
        LogError: the source is not a readable JointLab log, or has a negative time.
        MissingExtraError: the ``export`` extra (``mcap``) is not installed.
    """
    require("export", "MCAP export", "mcap")
    from mcap.well_known import MessageEncoding, SchemaEncoding
    from mcap.writer import Writer

    from jointlab import __version__

    log = load_log(source)
    stamps = nanoseconds(log)
    target = Path(target)
    if target.is_dir():
        raise ConfigurationError(f"{target} is a folder; expected an .mcap file to write")
    records: list[tuple[int, int, str, bytes]] = []  # (ns, order, topic, JSON)
    for order, channel in enumerate(log.channels):
        fields = [f for f in log.fields if f.channel == channel]
        block = np.column_stack([log[f.key] for f in fields])
        logged = ~np.isnan(block).all(axis=1)
        for row in np.flatnonzero(logged):
            message: dict[str, Any] = {"time": float(log.time[row])}
            for f in fields:
                value = log[f.key][row]
                message[f.name] = (
                    _cells(np.atleast_1d(value))
                    if f.indexed
                    else (None if math.isnan(value) else float(value))
                )
            records.append(
                (int(stamps[row]), order, TOPIC_PREFIX + channel, _json(message).encode())
            )
    for event in log.events:
        if not math.isfinite(event.time) or event.time < 0:
            raise LogError(
                f"{log.source or 'log'}: event {event.kind!r} at {event.time} s "
                "cannot be an MCAP time: expected seconds >= 0"
            )
        records.append(
            (
                round(event.time * 1e9),
                len(log.channels),
                EVENTS_TOPIC,
                _json(event.to_json()).encode(),
            )
        )
    records.sort(key=lambda r: (r[0], r[1]))
    with target.open("wb") as stream:
        writer = Writer(stream)
        writer.start(profile="", library=f"jointlab {__version__}")
        ids = {}
        for channel in log.channels:
            schema = writer.register_schema(
                name=f"jointlab.{channel}",
                encoding=SchemaEncoding.JSONSchema,
                data=json.dumps(schema_of(log, channel)).encode(),
            )
            ids[TOPIC_PREFIX + channel] = writer.register_channel(
                topic=TOPIC_PREFIX + channel,
                message_encoding=MessageEncoding.JSON,
                schema_id=schema,
            )
        if log.events:
            event_schema = {
                "title": "jointlab.event",
                "type": "object",
                "properties": {
                    "time": {"type": "number", "description": "[s]"},
                    "kind": {"type": "string"},
                    "fields": {"type": "object"},
                },
                "required": ["time", "kind", "fields"],
            }
            schema = writer.register_schema(
                name="jointlab.event",
                encoding=SchemaEncoding.JSONSchema,
                data=json.dumps(event_schema).encode(),
            )
            ids[EVENTS_TOPIC] = writer.register_channel(
                topic=EVENTS_TOPIC, message_encoding=MessageEncoding.JSON, schema_id=schema
            )
        sequence: dict[str, int] = {}
        for stamp, _, topic, data in records:
            sequence[topic] = sequence.get(topic, 0) + 1
            writer.add_message(
                channel_id=ids[topic],
                log_time=stamp,
                data=data,
                publish_time=stamp,
                sequence=sequence[topic],
            )
        header = log.header_json()
        writer.add_metadata(
            "jointlab",
            {
                "format": str(header["format"]),
                "version": str(header["version"]),
                "metadata": _json(header["metadata"]),
                "source": str(log.source or ""),
            },
        )
        writer.finish()
    return target
