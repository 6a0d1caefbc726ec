"""A :class:`ViewFeed`: what the live view shows, taken from the control loop in O(1).

The control loop (through :meth:`ViewFeed.on_step`, a
:class:`~jointlab.contract.RobotListener`) puts a copy of the new state's four vectors and
references to the action's (immutable) vectors into a ring of slots; the view's own thread
moves the slots that arrived since its last look into numpy arrays, and finds soft-limit
entries, at its own rate. Nothing here draws, so a slow browser never slows the loop.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["FeedEvent", "FeedWindow", "ViewFeed"]

#: Rows of a window, per joint.
_ROWS = (
    "position",
    "velocity",
    "torque",
    "current",
    "desired_position",
    "desired_velocity",
    "feedforward",
)


@dataclass(frozen=True)
class FeedEvent:
    """A refusal, a limit event or a device fault, at robot time ``time`` in s."""

    time: float
    #: ``"refused"``, ``"limit"`` or ``"fault"``.
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
    """A ring of the last ``capacity`` control periods of one robot.

    Args:
        dof: Number of joints.
        capacity: Samples kept (the plots' window).
        lower, upper: Soft position limits (rad or m) for limit events, or None.
        contacts_every: Collect a simulated robot's contact points every this many steps
            (0: never; robots without a world have none).
    """

    def __init__(
        self,
        dof: int,
        capacity: int = 600,
        lower: np.ndarray | None = None,
        upper: np.ndarray | None = None,
        contacts_every: int = 0,
    ) -> None:
        self.dof = int(dof)
        self.capacity = int(capacity)
        #: Per slot: (time s, the state's four vectors, the action's three vectors).
        self._slots: list[Any] = [None] * self.capacity
        self._count = 0
        #: The consumer's arrays, a ring like the slots, filled up to ``_converted``.
        self._time = np.full(self.capacity, np.nan)
        self._rows = np.full((len(_ROWS), self.capacity, self.dof), np.nan)
        self._converted = 0
        self._events: list[FeedEvent] = []
        self._lock = threading.Lock()
        self._lower = None if lower is None else np.asarray(lower, dtype=np.float64)
        self._upper = None if upper is None else np.asarray(upper, dtype=np.float64)
        self._at_limit = np.zeros(self.dof, dtype=bool)
        self.contacts_every = int(contacts_every)
        self._contacts: np.ndarray | None = np.empty((0, 3)) if self.contacts_every else None

    # ---------------------------------------------------------------- producer side
    def on_step(self, robot: Any) -> None:
        """:class:`~jointlab.contract.RobotListener` hook: keep the new state and action."""
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

    def on_fault(self, robot: Any, error: Exception) -> None:
        """:class:`~jointlab.contract.RobotListener` hook: a device fault on the timeline."""
        reasons = ", ".join(getattr(error, "reasons", ())) or type(error).__name__
        joint = getattr(error, "joint", None)
        self.event(float(robot.time), "fault", f"fault: {joint or 'robot'}: {reasons}")

    def push(
        self,
        state: Any,
        desired_position: np.ndarray,
        desired_velocity: np.ndarray,
        feedforward: np.ndarray,
    ) -> None:
        """Add one sample: an :class:`~jointlab.interface.ArrayState` and the action in force.

        The state's vectors are copied (a backend may reuse its arrays); an action's vectors
        are immutable and kept by reference.
        """
        sample = (
            state.time,
            state.position.copy(),
            state.velocity.copy(),
            state.torque.copy(),
            state.current.copy(),
            desired_position,
            desired_velocity,
            feedforward,
        )
        with self._lock:
            self._slots[self._count % self.capacity] = sample
            self._count += 1

    @property
    def latest_time(self) -> float | None:
        """Robot time (s) of the newest sample, or None before the first (any thread)."""
        with self._lock:
            if not self._count:
                return None
            return float(self._slots[(self._count - 1) % self.capacity][0])

    def event(self, time: float, kind: str, text: str) -> None:
        """Add a :class:`FeedEvent`."""
        with self._lock:
            self._events.append(FeedEvent(time, kind, text))

    # ---------------------------------------------------------------- consumer side
    def window(self, n: int | None = None) -> FeedWindow:
        """The last ``n`` (default: all kept) samples as arrays, oldest first.

        Called from the view's thread; it also records soft-limit entries of the samples
        that arrived since the last call (the oldest ones may have left the ring).
        """
        with self._lock:
            count = self._count
            start = max(self._converted, count - self.capacity)
            fresh = [(k, self._slots[k % self.capacity]) for k in range(start, count)]
            contacts = self._contacts
        if fresh:
            slots = np.fromiter(
                (k % self.capacity for k, _ in fresh), dtype=np.intp, count=len(fresh)
            )
            self._time[slots] = [sample[0] for _, sample in fresh]
            self._rows[:, slots] = np.array(
                [sample[1:] for _, sample in fresh], dtype=np.float64
            ).transpose(1, 0, 2)
            self._converted = count
            if self._lower is not None:
                self._limit_events(self._time[slots], self._rows[0, slots])
        kept = min(count, self.capacity if n is None else min(n, self.capacity))
        index = np.arange(count - kept, count) % self.capacity
        time, rows = self._time[index], self._rows[:, index]
        with self._lock:
            events = tuple(self._events)
        return FeedWindow(time=time, rows=rows, events=events, count=count, contacts=contacts)

    def _limit_events(self, time: np.ndarray, q: np.ndarray) -> None:
        """An event per joint entering its soft range's edge, over samples ``(n, dof)``."""
        low, high = q <= self._lower, q >= self._upper
        at_limit = low | high
        before = np.vstack([self._at_limit[None, :], at_limit[:-1]])
        entered = at_limit & ~before
        self._at_limit = at_limit[-1]
        for sample, joint in zip(*np.nonzero(entered), strict=True):  # rare: entries only
            side = "lower" if low[sample, joint] else "upper"
            self.event(float(time[sample]), "limit", f"joint {joint} at its soft {side} limit")
