"""Export a JointLab log to a Rerun recording (``.rrd``, rerun-sdk), as LeRobot's viewer uses.

Layout of the recording (application id ``jointlab``):

* one entity per joint and field, ``/<channel>/<field>/<joint name>``
  (``/state/position/elbow``, ``/commanded/position/elbow``, ``/sent/torque/elbow``), holding
  :class:`rerun.Scalars` on the timeline ``time`` (a duration: the log's seconds). Rows where
  the number was not logged (NaN) are left out. A time-series view of ``/state/position``
  overlays the joints; ``/commanded/position/elbow`` beside ``/state/position/elbow`` is
  desired against actual. A plain-number field is ``/<channel>/<field>``;
* ``/events``: one :class:`rerun.TextLog` per event (its kind and fields), at its time;
* static ``/robot``: a :class:`rerun.TextDocument` with the log's robot metadata (JSON);
* a default blueprint: per joint, one time-series view of the target (``commanded``, else
  ``desired``) against the measured ``state`` position, and the events' text log.

Joints are named from the log's metadata (``joint0``, ``joint1``... where it has none).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.extras import require
from jointlab.recording.formats import load_log
from jointlab.recording.log import Log
from jointlab.recording.metadata import LogError, dumps

__all__ = ["APPLICATION_ID", "TIMELINE", "WARNINGS", "entity_paths", "export_rerun"]

APPLICATION_ID = "jointlab"
#: The timeline of every entity: the log's time, seconds.
TIMELINE = "time"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _joint_names(log: Log, width: int) -> list[str]:
    names = log.metadata.joint_names
    if names is None or len(names) != width:
        return [f"joint{i}" for i in range(width)]
    return [_SAFE.sub("_", name) or f"joint{i}" for i, name in enumerate(names)]


def entity_paths(log: Log) -> dict[str, str]:
    """``{entity path: log column}`` of every scalar series the export writes."""
    paths = {}
    for f in log.fields:
        base = f"/{f.channel}/{f.name}"
        if not f.indexed or f.width == 1:
            paths[base] = f.columns[0]
        else:
            for joint, column in zip(_joint_names(log, f.width), f.columns, strict=True):
                paths[f"{base}/{joint}"] = column
    return paths


#: Events drawn as warnings in the viewer's text log (the rest are INFO).
WARNINGS = frozenset({"refused", "clamped", "stalled", "preempted"})


def _blueprint(rrb: Any, log: Log, paths: dict[str, str]) -> Any:
    """Target against measured position per joint, then the events; None without a state."""
    target = next((c for c in ("commanded", "desired") if f"{c}.position" in log), None)
    if "state.position" not in log:
        return None
    views = []
    for joint in _joint_names(log, log["state.position"].shape[1]):
        contents = [
            p for p in (f"/{target}/position/{joint}", f"/state/position/{joint}") if p in paths
        ]
        views.append(
            rrb.TimeSeriesView(
                origin="/", contents=contents, name=f"{joint}: position, target vs measured"
            )
        )
    return rrb.Blueprint(
        rrb.Vertical(rrb.Grid(*views), rrb.TextLogView(origin="/events"), row_shares=[4, 1])
    )


def export_rerun(source: str | Path | Log, target: str | Path) -> Path:
    """Write the log ``source`` as the Rerun recording ``target`` (``.rrd``); returns its path.

    Args:
        source: A log file (any format :func:`~jointlab.recording.load_log` reads) or a
            loaded :class:`~jointlab.recording.Log`.
        target: The ``.rrd`` file to write (replaced if it exists).

    Raises:
        LogError: the source is not a readable JointLab log, or a time is not finite.
        MissingExtraError: the ``export`` extra (``rerun-sdk``) is not installed.
    """
    (rr,) = require("export", "Rerun export", "rerun")
    log = load_log(source)
    if not np.isfinite(log.time).all():
        row = int(np.flatnonzero(~np.isfinite(log.time))[0])
        raise LogError(
            f"{log.source or 'log'}: time {log.time[row]} at row {row} is not a "
            "finite number of seconds"
        )
    target = Path(target)
    if target.is_dir():
        raise ConfigurationError(f"{target} is a folder; expected an .rrd file to write")
    import rerun.blueprint as rrb

    paths = entity_paths(log)
    recording = rr.RecordingStream(APPLICATION_ID, send_properties=False)
    recording.save(target, default_blueprint=_blueprint(rrb, log, paths))
    for path, column in paths.items():
        values = log[column]
        logged = ~np.isnan(values)
        if not logged.any():
            continue
        recording.send_columns(
            path,
            indexes=[rr.TimeColumn(TIMELINE, duration=log.time[logged])],
            columns=rr.Scalars.columns(scalars=values[logged]),
        )
    for event in log.events:
        recording.set_time(TIMELINE, duration=event.time)
        text = json.dumps(dict(event.fields), default=str)
        level = "WARN" if event.kind in WARNINGS else "INFO"
        recording.log("/events", rr.TextLog(f"{event.kind}: {text}", level=level))
    recording.log(
        "/robot",
        rr.TextDocument(dumps(log.metadata.to_json()), media_type="text/plain"),
        static=True,
    )
    recording.flush()
    recording.disconnect()
    return target
