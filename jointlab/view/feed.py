"""A :class:`ViewFeed`: what the live view shows, copied from the control loop in O(1).

The control loop (through :meth:`ViewFeed.on_step`, a
:class:`~jointlab.contract.RobotListener`) copies the state and the action in force into
preallocated ring buffers under a short lock; the view's own thread reads them at its own
rate. Nothing here draws, so a slow browser never slows the loop.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["FeedEvent", "FeedWindow", "ViewFeed"]

#: Rows of the ring buffer, per joint: time is separate.
_ROWS = ("position", "velocity", "torque", "current", "desired_position", "desired_velocity",
         "feedforward")  # fmt: skip


@dataclass(frozen=True)
class FeedEvent:
    """A refusal or a limit event, at robot time ``time`` in s."""

    time: float
    #: ``"refused"`` or ``"limit"``.
    kind: str
    #: What happened, e.g. ``"apply refused: disarmed"`` or ``"joint 2 at its soft upper limit"``.
    text: str


@dataclass(frozen=True)
class FeedWindow:
    """The last ``n`` samples in time order: ``time`` ``(n,)`` s and ``rows`` ``(7, n, dof)``.

    Rows in :data:`_ROWS` order: position (rad or m), velocity (rad/s or m/s), torque (N·m
    or N), current (A), desired position, desired velocity, feed-forward torque (NaN where
    the action has none).
    """

    time: np.ndarray
    rows: np.ndarray
    #: Every event so far (the view shows the recent ones).
    events: tuple[FeedEvent, ...]
    #: Samples pushed since the feed was made (a counter that only grows).
    count: int
    #: The latest contact points of a simulated robot (m, world frame, shape ``(n, 3)``),
    #: or None when the feed does not collect them.
    contacts: np.ndarray | None = None

    def row(self, name: str) -> np.ndarray:
        """One row by name, shape ``(n, dof)``."""
        return self.rows[_ROWS.index(name)]

    @property
    def latest_position(self) -> np.ndarray | None:
        """The newest joint positions, or None before the first sample."""
        return None if self.time.size == 0 else self.rows[0, -1]


class ViewFeed:
    """Ring buffers of the last ``capacity`` control periods of one robot.

    Args:
        dof: Number of joints.
        capacity: Samples kept (the plots' window).
        lower, upper: Soft position limits (rad or m) for limit events, or None.
        contacts_every: Collect a simulated robot's contact points every this many steps
            (0: never; robots without a world have none).
    """

    def __init__(self, dof: int, capacity: int = 600, lower: np.ndarray | None = None,
                 upper: np.ndarray | None = None, contacts_every: int = 0) -> None:  # fmt: skip
        self.dof = int(dof)
        self.capacity = int(capacity)
        self._time = np.full(self.capacity, np.nan)
        self._rows = np.full((len(_ROWS), self.capacity, self.dof), np.nan)
        self._count = 0
        self._events: list[FeedEvent] = []
        self._lock = threading.Lock()
        self._lower = None if lower is None else np.asarray(lower, dtype=np.float64)
        self._upper = None if upper is None else np.asarray(upper, dtype=np.float64)
        self._at_limit = np.zeros(self.dof, dtype=bool)
        self.contacts_every = int(contacts_every)
        self._contacts: np.ndarray | None = np.empty((0, 3)) if self.contacts_every else None

    # ---------------------------------------------------------------- producer side
    def on_step(self, robot: Any) -> None:
        """:class:`~jointlab.contract.RobotListener` hook: copy the new state and action."""
        action = robot.last_action
        self.push(robot.read(), action.position, action.velocity, action.torque)
        if self.contacts_every and self._count % self.contacts_every == 0:
            world = getattr(robot, "world", None)
            if world is not None:  # a simulated robot: read on the loop's thread (engines
                points = [c.position for c in world.contacts(robot.body_id)]  # are not shared)
                with self._lock:
                    self._contacts = np.array(points).reshape(-1, 3)

    def on_refusal(self, robot: Any, verb: str, reason: str) -> None:
        """:class:`~jointlab.contract.RobotListener` hook: keep the refusal as an event."""
        self.event(float(robot.time), "refused", f"{verb} refused: {reason}")

    def push(self, state: Any, desired_position: np.ndarray, desired_velocity: np.ndarray,
             feedforward: np.ndarray) -> None:  # fmt: skip
        """Add one sample: an :class:`~jointlab.interface.ArrayState` and the action in force."""
        block = state.arrays()
        with self._lock:
            slot = self._count % self.capacity
            self._time[slot] = state.time
            rows = self._rows[:, slot]
            rows[0] = block[0]
            rows[1] = block[1]
            rows[2] = block[3]
            rows[3] = block[4]
            rows[4] = desired_position
            rows[5] = desired_velocity
            rows[6] = feedforward
            self._count += 1
        if self._lower is not None:
            self._limit_events(float(state.time), block[0])

    def event(self, time: float, kind: str, text: str) -> None:
        """Add a :class:`FeedEvent`."""
        with self._lock:
            self._events.append(FeedEvent(time, kind, text))

    def _limit_events(self, time: float, q: np.ndarray) -> None:
        low, high = q <= self._lower, q >= self._upper
        at_limit = low | high
        entered = at_limit & ~self._at_limit
        self._at_limit = at_limit
        if entered.any():
            for joint in np.flatnonzero(entered):  # rare: only on entering a limit
                side = "lower" if low[joint] else "upper"
                self.event(time, "limit", f"joint {joint} at its soft {side} limit")

    # ---------------------------------------------------------------- consumer side
    def window(self, n: int | None = None) -> FeedWindow:
        """A copy of the last ``n`` (default: all kept) samples, oldest first."""
        with self._lock:
            count = self._count
            kept = min(count, self.capacity if n is None else min(n, self.capacity))
            index = (np.arange(count - kept, count) % self.capacity) if kept else np.arange(0)
            time = self._time[index]
            rows = self._rows[:, index]
            events = tuple(self._events)
            contacts = self._contacts
        return FeedWindow(time=time, rows=rows, events=events, count=count, contacts=contacts)
