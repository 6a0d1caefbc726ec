"""The pieces :mod:`jointlab.recording.plots` builds its figures from.

Joint selection and units, limit lines that never set the scale, saturation bands, event
and command markers, and the alignment of two runs on their first command.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from jointlab.errors import ConfigurationError
from jointlab.recording.log import DESIRED, Log
from jointlab.recording.metadata import LogError

__all__ = [
    "Joint",
    "command_start",
    "draw_events",
    "field",
    "label_rows_height",
    "limit_lines",
    "select_joints",
    "shade_saturation",
    "style_handles",
]

#: Colour of each event kind (other kinds: grey).
EVENT_COLORS = {
    "accepted": "tab:olive",
    "begin_motion": "tab:green",
    "end_motion": "tab:blue",
    "stalled": "tab:red",
    "refused": "tab:purple",
    "preempted": "tab:orange",
    "clamped": "tab:brown",
}
#: Kind of the events that mark the start of a program step (``verb`` field).
COMMAND = "command"
LIMIT_STYLE: dict[str, Any] = {"color": "tab:red", "ls": ":", "lw": 1.0, "alpha": 0.8}
SATURATION_COLOR = "tab:red"


class Joint:
    """One joint of a log: index, name, colour and units (rad or m)."""

    def __init__(self, index: int, name: str, kind: str | None) -> None:
        self.index = index
        self.name = name
        self.color = f"C{index % 10}"
        self.linear = kind == "linear"
        #: Units of a position; ``rad | m`` when the log does not say.
        self.unit = "m" if self.linear else ("rad" if kind == "rotary" else "rad | m")
        self.milli = "mm" if self.linear else ("mrad" if kind == "rotary" else "mrad | mm")
        self.torque_unit = "N" if self.linear else ("N·m" if kind == "rotary" else "N·m | N")


def field(log: Log, key: str) -> np.ndarray:
    """Column block ``key`` as ``(rows, dof)``; raises if the log has no such field."""
    if key not in log.keys():
        raise LogError(f"log has no field {key!r} to plot; fields: {list(log.keys())}")
    return np.asarray(log[key], dtype=np.float64).reshape(len(log), -1)


def select_joints(log: Log, dof: int, joints: Sequence[int | str] | None) -> list[Joint]:
    """The joints to draw (all by default), by index or name."""
    meta = log.metadata
    names = meta.joint_names if meta.joint_names and len(meta.joint_names) == dof else None
    names = names or tuple(f"joint {j}" for j in range(dof))
    kinds = meta.joint_types if meta.joint_types and len(meta.joint_types) == dof else None
    chosen = []
    for joint in range(dof) if joints is None else joints:
        if isinstance(joint, str):
            if joint not in names:
                raise ConfigurationError(f"log has no joint {joint!r}; joints: {list(names)}")
            index = names.index(joint)
        else:
            index = int(joint)
            if not 0 <= index < dof:
                raise ConfigurationError(f"joint index {joint} out of range for {dof} joints")
        chosen.append(Joint(index, names[index], kinds[index] if kinds else None))
    return chosen


def fit_to_data(ax: Axes, *series: np.ndarray, symmetric: bool = False, floor: float = 0.0) -> None:
    """Set the y range from the data only (5 % margins), never from reference lines."""
    values = np.concatenate([np.asarray(s, dtype=np.float64).ravel() for s in series])
    values = values[np.isfinite(values)]
    if values.size == 0:
        return
    low, high = float(values.min()), float(values.max())
    if symmetric:
        high = max(abs(low), abs(high), floor)
        low = -high
    span = max(high - low, floor, 1e-12)
    ax.set_ylim(low - 0.05 * span, high + 0.05 * span)


def limit_lines(ax: Axes, levels: Sequence[float]) -> bool:
    """Draw limits at ``levels`` without changing the y range; True if one is in view."""
    low, high = ax.get_ylim()
    shown = False
    for level in levels:
        if np.isfinite(level):
            ax.axhline(level, gid="limit", **LIMIT_STYLE)
            shown |= low <= level <= high
    ax.set_ylim(low, high)
    return shown


def shade_saturation(ax: Axes, time: np.ndarray, saturated: np.ndarray) -> bool:
    """Shade the spans where ``saturated`` is true; True if there is one."""
    steps = np.diff(np.concatenate(([0], saturated.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(steps == 1), np.flatnonzero(steps == -1)
    period = float(np.median(np.diff(time))) if len(time) > 1 else 0.0
    for start, end in zip(starts, ends, strict=True):
        stop = time[end] if end < len(time) else time[-1] + period
        ax.axvspan(time[start], stop, color=SATURATION_COLOR, alpha=0.18, lw=0, gid="saturated")
    return bool(starts.size)


#: Command labels: font size (points), the average character width (em) used to place them,
#: and the height of one row of labels (points).
LABEL_FONT = 6.0
LABEL_CHAR_EM = 0.62
LABEL_ROW = 8.0


def draw_events(
    axes: Sequence[Axes], log: Log, offset: float = 0.0, label_axes: Sequence[Axes] = ()
) -> list[str]:
    """Mark the log's events on every axes; label commands above ``label_axes``.

    Labels go on rows above the axes: each on the lowest row where it does not touch the
    label before it (their widths are estimated from the text and the axes' width), so close
    commands never print over each other. Returns the event kinds drawn (for the legend),
    commands first.
    """
    kinds: list[str] = []
    commands = []
    for event in log.events:
        t = event.time - offset
        if event.kind == COMMAND:
            for ax in axes:
                ax.axvline(t, color="0.45", ls="--", lw=0.8, gid="command")
            commands.append((t, str(event.get("verb", ""))))
        else:
            color = EVENT_COLORS.get(event.kind, "0.6")
            for ax in axes:
                ax.axvline(t, color=color, ls="-.", lw=0.7, alpha=0.8, gid="event")
        if event.kind not in kinds:
            kinds.append(event.kind)
    for ax in label_axes:
        _label_commands(ax, commands, log.time - offset)
    return sorted(kinds, key=lambda kind: kind != COMMAND)


def _label_commands(ax: Axes, commands: list[tuple[float, str]], time: np.ndarray) -> None:
    """Put each command's name above ``ax`` at its time, on non-overlapping rows."""
    if not commands:
        return
    start = float(time[0]) if len(time) else commands[0][0]
    span = (float(np.ptp(time)) if len(time) > 1 else 0.0) or 1.0
    margin = ax.margins()[0]
    width_points = ax.get_position().width * ax.figure.get_figwidth() * 72.0
    row_ends: list[float] = []  # per row, where its last label ends (axes fraction)
    for t, verb in sorted(commands):
        x = (margin + (t - start) / span) / (1.0 + 2.0 * margin)
        width = (len(verb) * LABEL_CHAR_EM * LABEL_FONT + 6.0) / width_points
        row = next((r for r, end in enumerate(row_ends) if end < x), len(row_ends))
        if row == len(row_ends):
            row_ends.append(0.0)
        row_ends[row] = x + width
        ax.annotate(
            verb,
            (t, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, 2 + LABEL_ROW * row),
            textcoords="offset points",
            fontsize=LABEL_FONT,
            color="0.25",
            annotation_clip=False,
            gid="command_label",
        )


def label_rows_height(ax: Axes) -> float:
    """Height in points that ``ax``'s command labels take above it (0 without labels)."""
    lifts = [a.xyann[1] for a in ax.texts if a.get_gid() == "command_label"]
    return max(lifts) + LABEL_FONT + 4.0 if lifts else 0.0


def style_handles(
    *, target: bool, limit: bool, saturated: bool, events: Sequence[str] = ()
) -> list[Any]:
    """Legend entries for the line styles and event kinds a figure uses."""
    handles: list[Any] = [Line2D([], [], color="0.4", lw=1.8, alpha=0.75, label="measured")]
    if target:
        handles.append(Line2D([], [], color="0.1", ls="--", lw=1.0, label="target"))
    if limit:
        handles.append(Line2D([], [], label="limit", **LIMIT_STYLE))
    if saturated:
        handles.append(Patch(color=SATURATION_COLOR, alpha=0.18, label="torque saturated"))
    for kind in events:
        if kind == COMMAND:
            handles.append(Line2D([], [], color="0.45", ls="--", lw=0.8, label="command"))
        else:
            handles.append(
                Line2D(
                    [],
                    [],
                    color=EVENT_COLORS.get(kind, "0.6"),
                    ls="-.",
                    lw=0.7,
                    label=kind.replace("_", " "),
                )
            )
    return handles


def command_start(log: Log, target: str = DESIRED) -> float:
    """Time of the first command in ``log`` (seconds).

    The first row whose target position differs from the first row's (the same rule for
    every log, so runs with and without events align alike); without targets, the first
    ``command``, ``accepted`` or ``begin_motion`` event; else the first row.
    """
    key = f"{target}.position"
    if key in log.keys() and len(log) > 1:
        values = field(log, key)
        moved = np.abs(values - values[0])
        changed = np.where(np.isfinite(moved), moved, 0.0).max(axis=1) > 1e-9
        if changed.any():
            return float(log.time[int(np.argmax(changed))])
    starts = [e.time for e in log.events if e.kind in (COMMAND, "accepted", "begin_motion")]
    if starts:
        return float(min(starts))
    return float(log.time[0]) if len(log) else 0.0
