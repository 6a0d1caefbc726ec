"""Plots of a recorded run: one call, :func:`plot_log`, or one panel per function.

Figures are built with :class:`matplotlib.figure.Figure` directly, never through
``pyplot``: no backend is selected or changed, so this works headless (``save`` renders
with Agg) and leaves alone a backend a user has already chosen. Embed a figure in a GUI
with that toolkit's canvas, or show it in Jupyter by evaluating it.

Every panel function takes an :class:`~matplotlib.axes.Axes` and a :class:`Log` (or a
path) and draws in joint colours ``C0, C1, ...``. Lines carry a ``gid`` so they can be
told apart programmatically: ``"state"`` (measured), ``"target"`` (desired),
``"limit"`` (limits from the log's metadata).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from jointlab.errors import ConfigurationError
from jointlab.interface import ActuatorState
from jointlab.recording.formats import load_log
from jointlab.recording.log import DESIRED, STATE, Log
from jointlab.recording.metadata import LogError

__all__ = [
    "PANELS",
    "STATE_COLORS",
    "plot_actuator_states",
    "plot_currents",
    "plot_events",
    "plot_log",
    "plot_positions",
    "plot_torques",
    "plot_tracking_error",
    "plot_velocities",
    "save",
]

#: Band colour of each actuator state flag in :func:`plot_actuator_states`.
STATE_COLORS = {
    ActuatorState.IDLE: "0.7",
    ActuatorState.MOVING: "tab:green",
    ActuatorState.BRAKED: "tab:blue",
    ActuatorState.STALLED: "tab:red",
}

LogSource = Log | str | os.PathLike[str]
#: Legends sit right of their panel so they never hide data.
_LEGEND: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": "small"}


def _joints(log: Log, dof: int, joints: Sequence[int | str] | None) -> list[tuple[int, str]]:
    names = log.metadata.joint_names
    if names is None or len(names) != dof:
        names = tuple(f"joint {j}" for j in range(dof))
    if joints is None:
        return list(enumerate(names))
    chosen = []
    for joint in joints:
        if isinstance(joint, str):
            if joint not in names:
                raise ConfigurationError(f"log has no joint {joint!r}; joints: {list(names)}")
            index = names.index(joint)
        else:
            index = int(joint)
            if not 0 <= index < dof:
                raise ConfigurationError(f"joint index {joint} out of range for {dof} joints")
        chosen.append((index, names[index]))
    return chosen


def _field(log: Log, key: str) -> np.ndarray:
    if key not in log.keys():
        raise LogError(f"log has no field {key!r} to plot; fields: {list(log.keys())}")
    return np.asarray(log[key]).reshape(len(log), -1)


def _limits(
    ax: Axes,
    log: Log,
    joints: list[tuple[int, str]],
    dof: int,
    upper: str,
    lower: str | None = None,
) -> bool:
    """Draw per-joint limit lines at metadata ``upper`` and ``lower`` (default ``-upper``).

    Limits are skipped when the metadata has none or its length is not ``dof``.
    """
    high = log.metadata.vector(upper)
    low = log.metadata.vector(lower) if lower else (None if high is None else -high)
    drawn = False
    for bound in (low, high):
        if bound is None or bound.shape[0] != dof:
            continue
        for j, _ in joints:
            if np.isfinite(bound[j]):
                ax.axhline(bound[j], color=f"C{j % 10}", ls=":", lw=0.9, alpha=0.7, gid="limit")
                drawn = True
    return drawn


def _legend(ax: Axes, *, target: bool = False, limit: bool = False) -> None:
    handles = [line for line in ax.get_lines() if line.get_gid() == "state"]
    if target:
        handles.append(Line2D([], [], color="0.3", ls="--", label="target"))
    if limit:
        handles.append(Line2D([], [], color="0.3", ls=":", label="limit"))
    if handles:
        ax.legend(handles=handles, **_LEGEND)


def _series(
    ax: Axes,
    log: Log,
    key: str,
    joints: Sequence[int | str] | None,
    *,
    title: str,
    ylabel: str,
    limit: str,
) -> Axes:
    values = _field(log, key)
    chosen = _joints(log, values.shape[1], joints)
    for j, name in chosen:
        ax.plot(log.time, values[:, j], color=f"C{j % 10}", lw=1.2, label=name, gid="state")
    drawn = _limits(ax, log, chosen, values.shape[1], limit)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    _legend(ax, limit=drawn)
    return ax


def plot_positions(
    ax: Axes,
    log: LogSource,
    *,
    joints: Sequence[int | str] | None = None,
    state: str = STATE,
    target: str = DESIRED,
    limits: bool = True,
) -> Axes:
    """Measured joint positions (solid) against the target positions (dashed).

    Targets are ``<target>.position`` (NaN where the PD is off, so not drawn); limits are
    the metadata's ``position_lower``/``position_upper``. Units: rad or m.
    """
    log = load_log(log)
    q = _field(log, f"{state}.position")
    chosen = _joints(log, q.shape[1], joints)
    for j, name in chosen:
        ax.plot(log.time, q[:, j], color=f"C{j % 10}", lw=1.2, label=name, gid="state")
    has_target = f"{target}.position" in log.keys()
    if has_target:
        qd = _field(log, f"{target}.position")
        for j, name in chosen:
            ax.plot(
                log.time,
                qd[:, j],
                color=f"C{j % 10}",
                ls="--",
                lw=1.0,
                label=f"_{name} target",
                gid="target",
            )
    drawn = limits and _limits(ax, log, chosen, q.shape[1], "position_upper", "position_lower")
    ax.set_title("Joint positions")
    ax.set_ylabel("position [rad | m]")
    ax.grid(True, alpha=0.3)
    _legend(ax, target=has_target, limit=drawn)
    return ax


def plot_velocities(
    ax: Axes, log: LogSource, *, joints: Sequence[int | str] | None = None, state: str = STATE
) -> Axes:
    """Measured joint velocities with the velocity limits (rad/s or m/s)."""
    return _series(
        ax,
        load_log(log),
        f"{state}.velocity",
        joints,
        title="Joint velocities",
        ylabel="velocity [rad/s | m/s]",
        limit="velocity_limit",
    )


def plot_torques(
    ax: Axes, log: LogSource, *, joints: Sequence[int | str] | None = None, state: str = STATE
) -> Axes:
    """Applied joint torques (after the effort clamp) with the effort limits (N·m or N)."""
    return _series(
        ax,
        load_log(log),
        f"{state}.torque",
        joints,
        title="Applied torques",
        ylabel="torque [N·m | N]",
        limit="effort_limit",
    )


def plot_currents(
    ax: Axes, log: LogSource, *, joints: Sequence[int | str] | None = None, state: str = STATE
) -> Axes:
    """Motor currents with the current limits (A)."""
    return _series(
        ax,
        load_log(log),
        f"{state}.current",
        joints,
        title="Motor currents",
        ylabel="current [A]",
        limit="current_limit",
    )


def plot_tracking_error(
    ax: Axes,
    log: LogSource,
    *,
    joints: Sequence[int | str] | None = None,
    state: str = STATE,
    target: str = DESIRED,
) -> Axes:
    """Target minus measured position per joint, with its RMS in the legend (rad or m).

    Rows where the target is NaN (PD off) are gaps and do not count in the RMS.
    """
    log = load_log(log)
    error = _field(log, f"{target}.position") - _field(log, f"{state}.position")
    chosen = _joints(log, error.shape[1], joints)
    for j, name in chosen:
        finite = error[np.isfinite(error[:, j]), j]
        rms = float(np.sqrt(np.mean(finite**2))) if finite.size else float("nan")
        ax.plot(
            log.time,
            error[:, j],
            color=f"C{j % 10}",
            lw=1.2,
            label=f"{name} (rms {rms:.3g})",
            gid="state",
        )
    ax.axhline(0.0, color="0.3", lw=0.8)
    ax.set_title("Tracking error (target − position)")
    ax.set_ylabel("error [rad | m]")
    ax.grid(True, alpha=0.3)
    _legend(ax)
    return ax


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start indices and exclusive end indices of the True runs of a boolean array."""
    steps = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    return np.flatnonzero(steps == 1), np.flatnonzero(steps == -1)


def plot_actuator_states(
    ax: Axes, log: LogSource, *, joints: Sequence[int | str] | None = None, state: str = STATE
) -> Axes:
    """Timeline of the actuator state flags: one row per joint, one lane per flag.

    A lane is filled where its flag (IDLE, MOVING, BRAKED, STALLED) is set; sample ``k``
    covers ``[time[k], time[k+1])``. Rows without a state (NaN) are left empty.
    """
    log = load_log(log)
    raw = _field(log, f"{state}.actuator_state")
    flags = np.where(np.isfinite(raw), raw, 0).astype(np.uint8)
    chosen = _joints(log, flags.shape[1], joints)
    t = log.time
    step = log.metadata.dt or (float(np.median(np.diff(t))) if len(t) > 1 else 1.0)
    edges = np.append(t, t[-1] + step) if len(t) else t
    lane = 0.8 / len(STATE_COLORS)
    for row, (j, _) in enumerate(chosen):
        for k, (flag, color) in enumerate(STATE_COLORS.items()):
            starts, ends = _runs((flags[:, j] & int(flag)) != 0)
            if starts.size:
                spans = np.column_stack((edges[starts], edges[ends] - edges[starts]))
                y = row - 0.4 + k * lane
                ax.broken_barh(spans.tolist(), (y, lane), facecolors=color, gid=flag.name)
    ax.set_yticks(range(len(chosen)), [name for _, name in chosen])
    ax.set_ylim(len(chosen) - 0.5, -0.5)
    ax.set_title("Actuator state")
    ax.set_ylabel("joint")
    handles = [Patch(color=c, label=str(f.name)) for f, c in STATE_COLORS.items()]
    ax.legend(handles=handles, **_LEGEND)
    return ax


def plot_events(ax: Axes, log: LogSource, *, kinds: Sequence[str] | None = None) -> Axes:
    """Mark events as vertical lines (one colour per kind) on an existing panel."""
    log = load_log(log)
    events = [e for e in log.events if kinds is None or e.kind in kinds]
    palette = {kind: f"C{i % 10}" for i, kind in enumerate(dict.fromkeys(e.kind for e in events))}
    for event in events:
        ax.axvline(event.time, color=palette[event.kind], ls="-.", lw=0.8, alpha=0.8, gid="event")
    return ax


_Panel = Callable[..., Axes]
#: Panel name -> (function, fields it needs, takes ``target``).
PANELS: dict[str, tuple[_Panel, tuple[str, ...], bool]] = {
    "positions": (plot_positions, ("{state}.position",), True),
    "velocities": (plot_velocities, ("{state}.velocity",), False),
    "torques": (plot_torques, ("{state}.torque",), False),
    "currents": (plot_currents, ("{state}.current",), False),
    "tracking_error": (
        plot_tracking_error,
        ("{state}.position", "{target}.position"),
        True,
    ),
    "actuator_states": (plot_actuator_states, ("{state}.actuator_state",), False),
}


def plot_log(
    source: LogSource,
    *,
    panels: Sequence[str] | None = None,
    joints: Sequence[int | str] | None = None,
    state: str = STATE,
    target: str = DESIRED,
    events: bool = True,
    title: str | None = None,
) -> Figure:
    """Plot a run: one panel per row, sharing the time axis.

    Args:
        source: A :class:`Log` or a log path (an unfinalised journal works too).
        panels: Names from :data:`PANELS`; default: every panel the log has data for.
        joints: Joint indices or names to show; default all.
        state: Channel of the measured state.
        target: Channel of the desired action (targets and tracking error).
        events: Mark events on the actuator-state panel (or the last panel).
        title: Figure title; default the robot name and file name.

    Raises:
        LogError: the log lacks the fields a requested panel needs, or has none to plot.
        ConfigurationError: an unknown panel name or joint.
    """
    log = load_log(source)
    keys = set(log.keys())

    def needs(name: str) -> list[str]:
        return [k.format(state=state, target=target) for k in PANELS[name][1]]

    if panels is None:
        panels = [p for p in PANELS if all(k in keys for k in needs(p))]
        if not panels:
            raise LogError(f"log has no {state!r} channel fields to plot; fields: {sorted(keys)}")
    for name in panels:
        if name not in PANELS:
            raise ConfigurationError(f"unknown plot panel {name!r}; expected one of {list(PANELS)}")
        missing = [k for k in needs(name) if k not in keys]
        if missing:
            raise LogError(f"plot panel {name!r} needs the log fields {missing}")
    fig = Figure(figsize=(10.0, 2.3 * len(panels) + 0.8), layout="constrained")
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, name in zip(axes, panels, strict=True):
        function, _, takes_target = PANELS[name]
        extra: dict[str, Any] = {"target": target} if takes_target else {}
        function(ax, log, joints=joints, state=state, **extra)
    if events and log.events:
        where = list(panels).index("actuator_states") if "actuator_states" in panels else -1
        plot_events(axes[where], log)
    axes[-1].set_xlabel("time [s]")
    if title is None:
        robot = log.metadata.robot or "robot"
        title = robot if log.source is None else f"{robot} — {Path(log.source).name}"
    fig.suptitle(title)
    return fig


def save(fig: Figure, path: str | os.PathLike[str], *, dpi: int = 120) -> Path:
    """Render ``fig`` to ``path`` (format from the suffix, e.g. ``.png``, ``.pdf``, ``.svg``).

    Parent folders are created. Returns the path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path
