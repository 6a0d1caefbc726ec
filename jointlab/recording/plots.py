"""Plots of recorded runs for control engineers: :func:`plot_log`, :func:`plot_comparison`.

:func:`plot_log` draws small multiples, one row per joint (its own colour, its own units:
rad or m) and one column per quantity: the position with its target drawn on top, the
tracking error (target − position, in mrad or mm, with its RMS and maximum), and the
torque as a percentage of the effort limit, with saturated spans shaded. Limits are drawn
but never set the scale. Program commands are labelled above the top row and every event
kind has a legend entry.

:func:`plot_comparison` overlays two or more runs of the same joints (e.g. simulation and a
device, or a run and its replay), aligned on their first command, in the same colour per
joint, with a difference panel.

Figures are :class:`matplotlib.figure.Figure` objects built without ``pyplot``, so no
backend is selected or changed and this works headless (:func:`save` renders with Agg).
In Jupyter a figure shows as a picture when it is the value of a cell under the inline
backend (the IPython kernel's default, or ``%matplotlib inline``); ``IPython.display
.display(fig)`` shows one from inside a loop.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from jointlab.errors import ConfigurationError
from jointlab.recording.formats import load_log
from jointlab.recording.log import COMMANDED, DESIRED, STATE, Log
from jointlab.recording.metadata import LogError
from jointlab.recording.plot_parts import (
    Joint,
    command_start,
    draw_events,
    field,
    fit_to_data,
    label_rows_height,
    limit_lines,
    select_joints,
    shade_saturation,
    style_handles,
)

__all__ = ["COLUMNS", "plot_comparison", "plot_episodes", "plot_log", "save"]

LogSource = Log | str | os.PathLike[str]
#: Quantities :func:`plot_log` can draw, one column each, and the fields they need.
COLUMNS: dict[str, tuple[str, ...]] = {
    "position": ("{state}.position",),
    "velocity": ("{state}.velocity",),
    "tracking_error": ("{state}.position", "{target}.position"),
    "torque": ("{state}.torque",),
    "current": ("{state}.current",),
}
_DEFAULT_COLUMNS = ("position", "tracking_error", "torque")
_TITLES = {
    "position": "position and target",
    "velocity": "velocity",
    "tracking_error": "tracking error (target − position)",
    "torque": "torque / effort limit",
    "current": "motor current",
}
#: Share of the effort limit counted as saturated.
SATURATED = 0.995
#: Share of an axes' height kept free of data at the top for its summary box.
HEADROOM = 0.2


class _Drawn:
    """What the columns drew, for the figure's legend."""

    def __init__(self) -> None:
        self.target = self.limit = self.saturated = False


def _position(ax: Axes, log: Log, joint: Joint, state: str, target: str, drawn: _Drawn) -> None:
    q = field(log, f"{state}.position")[:, joint.index]
    ax.plot(log.time, q, color=joint.color, lw=1.8, alpha=0.75, gid="state")
    series = [q]
    if f"{target}.position" in log.keys():
        reference = field(log, f"{target}.position")[:, joint.index]
        ax.plot(log.time, reference, color="0.1", ls="--", lw=1.0, zorder=3, gid="target")
        drawn.target |= bool(np.isfinite(reference).any())
        series.append(reference)
    fit_to_data(ax, *series, floor=1e-3)
    bounds = [log.metadata.vector(n) for n in ("position_lower", "position_upper")]
    levels = [b[joint.index] for b in bounds if b is not None and b.shape[0] > joint.index]
    drawn.limit |= limit_lines(ax, levels)
    ax.set_ylabel(f"{joint.name}\n[{joint.unit}]")


def _bounded(
    ax: Axes, values: np.ndarray, limit: np.ndarray | None, joint: Joint, drawn: _Drawn, unit: str
) -> None:
    """A signed quantity of one joint with its ±limit (drawn, not setting the scale)."""
    fit_to_data(ax, values, symmetric=True, floor=1e-3)
    if limit is not None and limit.shape[0] > joint.index:
        drawn.limit |= limit_lines(ax, [-limit[joint.index], limit[joint.index]])
    ax.set_ylabel(f"[{unit}]")


def _velocity(ax: Axes, log: Log, joint: Joint, state: str, target: str, drawn: _Drawn) -> None:
    qd = field(log, f"{state}.velocity")[:, joint.index]
    ax.plot(log.time, qd, color=joint.color, lw=1.4, gid="state")
    _bounded(ax, qd, log.metadata.vector("velocity_limit"), joint, drawn, f"{joint.unit}/s")


def _tracking_error(
    ax: Axes, log: Log, joint: Joint, state: str, target: str, drawn: _Drawn
) -> None:
    error = 1e3 * (field(log, f"{target}.position") - field(log, f"{state}.position"))
    error = error[:, joint.index]
    ax.plot(log.time, error, color=joint.color, lw=1.2, gid="state")
    ax.axhline(0.0, color="0.5", lw=0.6)
    finite = error[np.isfinite(error)]
    if finite.size:
        rms, worst = float(np.sqrt(np.mean(finite**2))), float(np.abs(finite).max())
        ax.text(
            0.01,
            0.97,
            f"rms {rms:.3g}, max {worst:.3g} {joint.milli}",
            transform=ax.transAxes,
            va="top",
            fontsize="x-small",
            gid="error_summary",
            bbox={"facecolor": "white", "alpha": 0.7, "lw": 0},
        )
    fit_to_data(ax, error, symmetric=True, floor=1e-3)
    if finite.size:
        _headroom(ax)
    ax.set_ylabel(f"[{joint.milli}]")


def _torque(ax: Axes, log: Log, joint: Joint, state: str, target: str, drawn: _Drawn) -> None:
    tau = field(log, f"{state}.torque")[:, joint.index]
    limit = log.metadata.vector("effort_limit")
    if limit is None or limit.shape[0] <= joint.index or not limit[joint.index] > 0:
        ax.plot(log.time, tau, color=joint.color, lw=1.2, gid="state")
        fit_to_data(ax, tau, symmetric=True, floor=1e-6)
        ax.set_ylabel(f"[{joint.torque_unit}]")
        return
    share = 100.0 * tau / limit[joint.index]
    ax.plot(log.time, share, color=joint.color, lw=1.2, gid="state")
    drawn.saturated |= shade_saturation(ax, log.time, np.abs(share) >= 100.0 * SATURATED)
    fit_to_data(ax, share, symmetric=True, floor=5.0)
    drawn.limit |= limit_lines(ax, [-100.0, 100.0])
    peak = np.nanmax(np.abs(share)) if np.isfinite(share).any() else float("nan")
    ax.text(
        0.01,
        0.97,
        f"peak {peak:.0f} % of {limit[joint.index]:g} {joint.torque_unit}",
        transform=ax.transAxes,
        va="top",
        fontsize="x-small",
        gid="torque_summary",
        bbox={"facecolor": "white", "alpha": 0.7, "lw": 0},
    )
    _headroom(ax)
    ax.set_ylabel("[% of limit]")


def _headroom(ax: Axes, share: float = HEADROOM) -> None:
    """Raise the top of the y range so the data stays below the summary box at the top."""
    low, high = ax.get_ylim()
    ax.set_ylim(low, high + (high - low) * share / (1.0 - share))


def _current(ax: Axes, log: Log, joint: Joint, state: str, target: str, drawn: _Drawn) -> None:
    current = field(log, f"{state}.current")[:, joint.index]
    ax.plot(log.time, current, color=joint.color, lw=1.2, gid="state")
    _bounded(ax, current, log.metadata.vector("current_limit"), joint, drawn, "A")


_DRAW = {
    "position": _position,
    "velocity": _velocity,
    "tracking_error": _tracking_error,
    "torque": _torque,
    "current": _current,
}


def plot_log(
    source: LogSource,
    *,
    columns: Sequence[str] | None = None,
    joints: Sequence[int | str] | None = None,
    state: str = STATE,
    target: str | None = None,
    events: bool = True,
    title: str | None = None,
) -> Figure:
    """Small multiples of a run: one row per joint, one column per quantity.

    Args:
        source: A :class:`Log` or a log path (an unfinalised journal works too).
        columns: Names from :data:`COLUMNS`; default position, tracking error and torque
            (those the log has data for).
        joints: Joint indices or names; default all.
        state: Channel of the measured state.
        target: Channel of the targets (and the tracking error); default ``commanded``
            where the log has it (what the commands asked for, before a servo's gravity
            offset), else ``desired``.
        events: Mark events and label program commands.
        title: Figure title; default the robot name and file name.

    Raises:
        LogError: the log lacks the fields a requested column needs, or has none to plot.
        ConfigurationError: an unknown column or joint.
    """
    log = load_log(source)
    keys = set(log.keys())
    if target is None:
        target = COMMANDED if f"{COMMANDED}.position" in keys else DESIRED

    def needs(name: str) -> list[str]:
        return [k.format(state=state, target=target) for k in COLUMNS[name]]

    if columns is None:
        columns = [c for c in _DEFAULT_COLUMNS if all(k in keys for k in needs(c))]
        if not columns:
            raise LogError(f"log has no {state!r} channel fields to plot; fields: {sorted(keys)}")
    for name in columns:
        if name not in COLUMNS:
            raise ConfigurationError(
                f"unknown plot column {name!r}; expected one of {list(COLUMNS)}"
            )
        missing = [k for k in needs(name) if k not in keys]
        if missing:
            raise LogError(f"plot column {name!r} needs the log fields {missing}")
    dof = field(log, needs(columns[0])[0]).shape[1]
    chosen = select_joints(log, dof, joints)
    fig = Figure(figsize=(3.9 * len(columns) + 1.0, 1.45 * len(chosen) + 1.5), layout="constrained")
    grid = fig.subplots(len(chosen), len(columns), sharex=True, squeeze=False)
    drawn = _Drawn()
    for row, joint in enumerate(chosen):
        for col, name in enumerate(columns):
            ax = grid[row, col]
            _DRAW[name](ax, log, joint, state, target, drawn)
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize="small")
    kinds = draw_events(list(grid.ravel()), log, label_axes=[grid[0, 0]]) if events else []
    pad = label_rows_height(grid[0, 0]) + 4.0  # the titles stand above the command labels
    for col, name in enumerate(columns):
        grid[0, col].set_title(_TITLES[name], fontsize="medium", pad=pad)
        grid[-1, col].set_xlabel("time [s]")
    handles = style_handles(
        target=drawn.target, limit=drawn.limit, saturated=drawn.saturated, events=kinds
    )
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncol=min(len(handles), 6),
        fontsize="small",
        frameon=False,
    )
    if title is None:
        robot = log.metadata.robot or "robot"
        title = robot if log.source is None else f"{robot} — {Path(log.source).name}"
    fig.suptitle(title)
    return fig


def plot_comparison(
    logs: Mapping[str, LogSource],
    *,
    joints: Sequence[int | str] | None = None,
    state: str = STATE,
    target: str = DESIRED,
    title: str | None = None,
) -> Figure:
    """Overlay runs of the same robot, aligned on their first command, with differences.

    One row per joint in its own colour; left, each run's position (solid, dashed,
    dotted... in the order of ``logs``); right, each later run minus the first, in mrad or
    mm, on the first run's time grid. The figure's label (``fig.get_label()``) states the
    largest difference.

    Args:
        logs: Run name -> :class:`Log` or path; the first is the reference.
        joints: Joint indices or names; default all.
        state: Channel of the measured state.
        target: Channel of the commands (used for alignment when there are no events).
        title: Figure title.

    Raises:
        ConfigurationError: fewer than two runs, or runs of different joint counts.
    """
    runs = {name: load_log(source) for name, source in logs.items()}
    if len(runs) < 2:
        raise ConfigurationError(f"plot_comparison needs two runs or more, got {len(runs)}")
    positions = {name: field(log, f"{state}.position") for name, log in runs.items()}
    sizes = {name: q.shape[1] for name, q in positions.items()}
    if len(set(sizes.values())) != 1:
        raise ConfigurationError(f"runs have different joint counts: {sizes}")
    names = list(runs)
    reference = runs[names[0]]
    chosen = select_joints(reference, sizes[names[0]], joints)
    times = {name: log.time - command_start(log, target) for name, log in runs.items()}
    fig = Figure(figsize=(11.0, 1.45 * len(chosen) + 1.6), layout="constrained")
    grid = fig.subplots(len(chosen), 2, sharex=True, squeeze=False)
    styles = ["-", "--", ":", "-."]
    worst = (0.0, "")
    for row, joint in enumerate(chosen):
        overlay, difference = grid[row]
        for k, name in enumerate(names):
            overlay.plot(
                times[name],
                positions[name][:, joint.index],
                color=joint.color,
                ls=styles[k % len(styles)],
                lw=1.2 + 0.4 * (k == 0),
                gid=name,
            )
        t0, q0 = times[names[0]], positions[names[0]][:, joint.index]
        for k, name in enumerate(names[1:], start=1):
            t, q = times[name], positions[name][:, joint.index]
            inside = (t0 >= t[0]) & (t0 <= t[-1])
            delta = np.full_like(q0, np.nan)
            delta[inside] = 1e3 * (np.interp(t0[inside], t, q) - q0[inside])
            difference.plot(
                t0,
                delta,
                color=joint.color,
                ls=styles[k % len(styles)],
                lw=1.1,
                gid=f"{name} - {names[0]}",
            )
            if np.isfinite(delta).any() and np.nanmax(np.abs(delta)) > worst[0]:
                worst = (float(np.nanmax(np.abs(delta))), f"{joint.milli} ({joint.name})")
        difference.axhline(0.0, color="0.5", lw=0.6)
        overlay.set_ylabel(f"{joint.name}\n[{joint.unit}]")
        difference.set_ylabel(f"[{joint.milli}]")
        for ax in (overlay, difference):
            ax.grid(True, alpha=0.3)
            ax.tick_params(labelsize="small")
    grid[0, 0].set_title("position")
    grid[0, 1].set_title(f"difference to {names[0]}")
    for ax in grid[-1]:
        ax.set_xlabel("time from the first command [s]")
    handles = [
        Line2D([], [], color="0.3", ls=styles[k % len(styles)], label=name)
        for k, name in enumerate(names)
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), frameon=False)
    fig.suptitle(title or " vs ".join(names))
    fig.set_label(f"largest difference {worst[0]:.3g} {worst[1]}".strip())
    return fig


def plot_episodes(
    returns: Sequence[float], successes: Sequence[bool], *, title: str | None = None
) -> Figure:
    """Return of each episode, green where it succeeded, with the mean."""
    returns = np.asarray(returns, dtype=np.float64)
    successes = np.asarray(successes, dtype=bool)
    fig = Figure(figsize=(7.0, 3.2), layout="constrained")
    ax = fig.subplots()
    index = np.arange(1, returns.size + 1)
    ax.bar(index[successes], returns[successes], color="tab:green", label="success")
    ax.bar(index[~successes], returns[~successes], color="tab:red", label="failure")
    ax.axhline(
        float(returns.mean()) if returns.size else 0.0,
        color="0.2",
        ls="--",
        lw=1.0,
        label=f"mean {returns.mean():.2f}" if returns.size else "mean",
    )
    ax.set_xlabel("evaluation episode [number]")
    ax.set_ylabel("return [sum of rewards]")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=12))
    # The legend below the axes, the title above (at the right, a long title ran under the
    # legend); long titles (a backend URL and a summary) wrap.
    fig.legend(loc="outside lower center", ncol=3, fontsize="small", frameon=False)
    text = title or f"success {successes.mean():.0%} over {returns.size} episodes"
    ax.set_title("\n".join(textwrap.wrap(text, 80)), fontsize="medium")
    return fig


def save(fig: Figure, path: str | os.PathLike[str], *, dpi: int = 110) -> Path:
    """Render ``fig`` to ``path`` (format from the suffix, e.g. ``.png``, ``.pdf``, ``.svg``).

    Parent folders are created. Returns the path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path
