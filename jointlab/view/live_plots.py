"""Live plots in the view's side panel: desired against actual, per joint, with events.

uPlot charts (through viser's GUI): position, velocity, and torque with current, each of
the joint picked in a dropdown, over the feed's window of robot time; refusals and limit
events are drawn as points on the position chart and listed below it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jointlab.view.feed import FeedWindow

__all__ = ["LivePlots"]

_ACTUAL = "#1f77b4"
_DESIRED = "#d62728"
_EVENT = "#9467bd"


def _axes(unit: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return ({"label": "robot time (s)"}, {"label": unit, "size": 60})


def _scales(*series: np.ndarray, t: np.ndarray | None = None) -> dict[str, Any]:
    """Plain-number time axis; a y range from the finite values (NaN marks gaps)."""
    values = np.concatenate([np.ravel(s) for s in series])
    values = values[np.isfinite(values)]
    if values.size == 0:
        low, high = -1.0, 1.0
    else:
        low, high = float(values.min()), float(values.max())
        pad = max(0.05 * (high - low), 0.02 * max(abs(low), abs(high)), 0.01)
        low, high = low - pad, high + pad
    x: dict[str, Any] = {"time": False}
    if t is not None and t.size >= 2 and t[-1] > t[0]:
        x.update(auto=False, range=(float(t[0]), float(t[-1])))
    return {"x": x, "y": {"auto": False, "range": (low, high)}}


def _series(*labels_colours: tuple[str, str, bool]) -> tuple[dict[str, Any], ...]:
    series: list[dict[str, Any]] = [{"label": "t"}]
    for label, colour, points_only in labels_colours:
        if points_only:
            series.append(
                {
                    "label": label,
                    "stroke": colour,
                    "width": 0,
                    "points": {"show": True, "size": 9, "fill": colour},
                }
            )
        else:
            series.append({"label": label, "stroke": colour, "width": 2, "points": {"show": False}})
    return tuple(series)


class LivePlots:
    """The plot panel of a :class:`~jointlab.view.server.LiveView`.

    Args:
        server: The ``viser.ViserServer``.
        joint_names: Names for the dropdown.
        linear: Per joint, True for linear joints (units m, m/s, N).
    """

    def __init__(self, server: Any, joint_names: tuple[str, ...], linear: np.ndarray) -> None:
        self._linear = np.asarray(linear, dtype=bool)
        self._names = joint_names
        gui = server.gui
        self._joint = gui.add_dropdown("joint", options=joint_names, initial_value=joint_names[0])
        empty = (np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2))
        self._position = gui.add_uplot(
            empty,
            _series(
                ("actual", _ACTUAL, False), ("desired", _DESIRED, False), ("event", _EVENT, True)
            ),
            title="position",
            axes=_axes("rad"),
            scales=_scales(np.zeros(1)),
            aspect=1.6,
        )
        self._velocity = gui.add_uplot(
            empty[:3],
            _series(("actual", _ACTUAL, False), ("desired", _DESIRED, False)),
            title="velocity",
            axes=_axes("rad/s"),
            scales=_scales(np.zeros(1)),
            aspect=1.6,
        )
        self._torque = gui.add_uplot(
            empty,
            _series(
                ("applied", _ACTUAL, False),
                ("feed-forward", _DESIRED, False),
                ("current (A)", "#2ca02c", False),
            ),
            title="torque and current",
            axes=_axes("N·m, A"),
            scales=_scales(np.zeros(1)),
            aspect=1.6,
        )
        self._events = gui.add_markdown("no refusals or limit events")
        self._shown_events = -1
        self._shown_joint = ""

    def update(self, window: FeedWindow) -> None:
        """Redraw from ``window`` (the feed's recent samples)."""
        if window.time.size < 2:
            return
        joint = self._names.index(self._joint.value)
        if self._joint.value != self._shown_joint:
            self._relabel(joint)
        t = window.time
        actual = window.row("position")[:, joint]
        events = np.full(t.shape, np.nan)
        for event in window.events:
            if t[0] <= event.time <= t[-1]:
                index = min(int(np.searchsorted(t, event.time)), t.size - 1)
                events[index] = actual[index]
        if len(window.events) != self._shown_events:
            self._shown_events = len(window.events)
            recent = window.events[-8:]
            self._events.content = (
                "\n".join(
                    f"- t = {event.time:.3f} s, {event.kind}: {event.text}" for event in recent
                )
                or "no refusals or limit events"
            )
        self._draw(self._position, t, actual, window.row("desired_position")[:, joint], events)
        self._draw(
            self._velocity,
            t,
            window.row("velocity")[:, joint],
            np.nan_to_num(window.row("desired_velocity")[:, joint]),
        )
        self._draw(
            self._torque,
            t,
            window.row("torque")[:, joint],
            window.row("feedforward")[:, joint],
            window.row("current")[:, joint],
        )

    @staticmethod
    def _draw(chart: Any, t: np.ndarray, *series: np.ndarray) -> None:
        chart.scales = _scales(*series, t=t)
        chart.data = (t, *series)

    def _relabel(self, joint: int) -> None:
        self._shown_joint = self._joint.value
        linear = bool(self._linear[joint])
        self._position.axes = _axes("m" if linear else "rad")
        self._velocity.axes = _axes("m/s" if linear else "rad/s")
        self._torque.axes = _axes("N, A" if linear else "N·m, A")
