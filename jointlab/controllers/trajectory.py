"""Joint trajectories through waypoints (BB ``follow_trajectory``), validated and repeatable.

A :class:`Waypoint` has a ``position`` and optionally a ``velocity``, an ``acceleration`` and a
``time_from_start`` in **seconds** (the BB seed uses milliseconds: convert with
:func:`from_milliseconds`). Positions are scalars for a one-joint trajectory or arrays with one
value per commanded joint.

Interpolation (scipy): a piece whose two waypoints both give accelerations is a quintic
(:meth:`scipy.interpolate.BPoly.from_derivatives`), otherwise a cubic Hermite spline
(:class:`scipy.interpolate.CubicHermiteSpline`). Velocities not given are 0 at the first and
last waypoint and chosen at the others by the Fritsch–Butland rule (monotone: no overshoot
between waypoints that move the same way). Waypoints given **without** ``time_from_start`` are
timed automatically: the fastest jerk-limited motion through all of them (see
:mod:`jointlab.controllers.timing`). Give times for all waypoints or for none.

Start and repetition: when the trajectory is given a start state (the Commander passes the
joints' current state) and the first waypoint is later than 0 s (or the waypoints are timed
automatically), a lead-in piece goes from the start state to the first waypoint. With
``repeat=n`` (or ``"forever"``) the waypoints are followed ``n`` times; each repetition after
the first starts at the last waypoint and returns to the first one over the first waypoint's
``time_from_start`` (so the period equals the last waypoint's time). A first waypoint at 0 s
needs the last waypoint to equal it when repeating.

Validation refuses (``CommandRefused`` with reason ``"bad_trajectory"``) and names the
waypoint, the joint and the limit: sizes, non-finite values, times not increasing, positions
outside the (soft) position limits, velocities above the velocity limit, and the same limits
checked exactly on the interpolated motion between waypoints.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np

from jointlab.controllers.motion import MotionLimits
from jointlab.controllers.polynomial import PiecewisePolynomial
from jointlab.controllers.timing import estimate_velocities, time_waypoints
from jointlab.controllers.waypoints import (
    Waypoint,
    check_motion,
    check_points,
    from_milliseconds,
    refuse,
    stack_waypoints,
    to_waypoints,
)

__all__ = ["Repeat", "Trajectory", "Waypoint", "from_milliseconds", "to_waypoints"]

#: A repetition count: a positive integer or ``"forever"``.
Repeat = int | Literal["forever"]


def _hermite(
    times: np.ndarray, p: np.ndarray, v: np.ndarray, a: np.ndarray, fixed_first: bool
) -> PiecewisePolynomial:
    free = np.isnan(v)
    if fixed_first:
        free[0] = False
    durations = np.diff(times)
    velocities = np.where(free, estimate_velocities(p, durations, free), v)
    accelerations = a if np.isfinite(a).any() else None
    return PiecewisePolynomial.hermite(times, p, velocities, accelerations)


class Trajectory:
    """A validated, timed joint trajectory, possibly repeated; sample it per control tick.

    Build with :meth:`build`. Time 0 is the start of the trajectory (the command).
    """

    def __init__(
        self,
        first: PiecewisePolynomial,
        cycle: PiecewisePolynomial | None,
        repeat: float,
        waypoint_times: np.ndarray,
    ) -> None:
        self._first = first
        self._cycle = cycle
        self._repeat = repeat
        self._waypoint_times = np.array(waypoint_times)
        self._first_end = first.end
        self._period = cycle.duration if cycle is not None else 0.0
        final = (cycle or first).end_state[0]
        self._hold = (final, np.zeros_like(final), np.zeros_like(final))
        self._hold_rows = np.array(self._hold)
        self._hold_rows.setflags(write=False)
        self._duration = (
            first.end if repeat <= 1 or cycle is None else first.end + (repeat - 1) * self._period
        )

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(
        cls,
        waypoints: Iterable[Any],
        limits: MotionLimits,
        *,
        timing_limits: MotionLimits | None = None,
        start: tuple[Any, Any, Any] | None = None,
        repeat: Repeat = 1,
        start_tolerance: float = 1e-2,
    ) -> Trajectory:
        """Validate and interpolate (or time) ``waypoints``.

        Args:
            waypoints: :class:`Waypoint` objects, mappings with their field names, or positions.
            limits: Position and velocity limits to validate against (soft limits).
            timing_limits: Limits for automatic timing and lead-in pieces (default ``limits``;
                the Commander passes the configured speeds and accelerations).
            start: Optional start state (position, velocity, acceleration), each ``(n,)``.
            repeat: How many times to follow the waypoints, or ``"forever"``.
            start_tolerance: Largest distance allowed between ``start`` and a first waypoint
                at 0 s, and between the first and last waypoints of a repeated trajectory
                whose first waypoint is at 0 s (rad or m).

        Raises:
            CommandRefused: reason ``"bad_trajectory"``, naming every problem found.
        """
        timing_limits = timing_limits or limits
        if repeat == "forever":
            count = math.inf
        elif isinstance(repeat, (int, np.integer)) and not isinstance(repeat, bool) and repeat >= 1:
            count = int(repeat)
        else:
            raise refuse(f"repeat must be a positive integer or 'forever', got {repeat!r}")
        points = to_waypoints(waypoints)
        if not points:
            raise refuse("no waypoints given")
        n = limits.n
        p, v, a, times = stack_waypoints(points, n)
        check_points(limits, p, v, a)
        if start is not None:
            start = tuple(np.asarray(x, dtype=np.float64).reshape(n) for x in start)
        last_v = np.nan_to_num(v[-1])
        last_a = np.nan_to_num(a[-1])
        closed = bool(np.all(np.abs(p[-1] - p[0]) <= start_tolerance))
        if times is None:
            first, wp_times = cls._auto_first(timing_limits, p, v, a, start)
            cycle = None
            if count > 1:
                if closed and len(points) > 1:
                    cycle, _ = time_waypoints(
                        timing_limits,
                        np.vstack([p[-1], p[1:]]),
                        np.vstack([last_v, v[1:]]),
                        np.vstack([last_a, a[1:]]),
                    )
                else:
                    cycle, _ = time_waypoints(
                        timing_limits,
                        np.vstack([p[-1], p]),
                        np.vstack([last_v, v]),
                        np.vstack([last_a, a]),
                    )
        else:
            first, cycle = cls._timed(limits, p, v, a, times, start, count, closed, start_tolerance)
            wp_times = times
        check_motion(limits, first, "motion")
        if cycle is not None:
            check_motion(limits, cycle, "repeated motion")
        return cls(first, cycle, count, wp_times)

    @staticmethod
    def _auto_first(
        limits: MotionLimits,
        p: np.ndarray,
        v: np.ndarray,
        a: np.ndarray,
        start: tuple[np.ndarray, ...] | None,
    ) -> tuple[PiecewisePolynomial, np.ndarray]:
        if start is None:
            return time_waypoints(limits, p, v, a)
        motion, times = time_waypoints(
            limits, np.vstack([start[0], p]), np.vstack([start[1], v]), np.vstack([start[2], a])
        )
        return motion, times[1:]

    @staticmethod
    def _timed(
        limits: MotionLimits,
        p: np.ndarray,
        v: np.ndarray,
        a: np.ndarray,
        times: np.ndarray,
        start: tuple[np.ndarray, ...] | None,
        count: float,
        closed: bool,
        tolerance: float,
    ) -> tuple[PiecewisePolynomial, PiecewisePolynomial | None]:
        lead = times[0] > 0
        if start is not None and not lead:
            far = np.abs(p[0] - start[0]) > tolerance
            if far.any():
                j = int(np.flatnonzero(far)[0])
                raise refuse(
                    f"waypoint 0 at 0 s puts joint {limits.names[j]!r} at {p[0, j]:.6g}, "
                    f"{abs(p[0, j] - start[0][j]):.3g} away from its current position "
                    f"{start[0][j]:.6g} (tolerance {tolerance}); start later than 0 s"
                )
        if count > 1 and not lead and not closed:
            raise refuse(
                "a repeated trajectory whose first waypoint is at 0 s must end where it starts: "
                f"last waypoint {p[-1].tolist()} != first {p[0].tolist()}"
            )
        if len(times) == 1 and not (lead and start is not None):
            first = PiecewisePolynomial.constant(p[0], 1e-9)
        elif lead and start is not None:
            first = _hermite(
                np.concatenate([[0.0], times]),
                np.vstack([start[0], p]),
                np.vstack([start[1], v]),
                np.vstack([start[2], a]) if np.isfinite(a).any() else np.vstack([a[:1], a]),
                fixed_first=True,
            )
        elif len(times) == 1:
            first = PiecewisePolynomial.constant(p[0], 1e-9).shifted(times[0])
        else:
            first = _hermite(times, p, v, a, fixed_first=False)
        cycle = None
        if count > 1:
            if lead:
                last = (p[-1], np.nan_to_num(v[-1]), a[-1])
                cycle = _hermite(
                    np.concatenate([[0.0], times]),
                    np.vstack([last[0], p]),
                    np.vstack([last[1], v]),
                    np.vstack([last[2], a]),
                    fixed_first=True,
                )
            else:
                cycle = first
        return first, cycle

    # ------------------------------------------------------------------ queries
    @property
    def dof(self) -> int:
        """Number of joints of the trajectory."""
        return self._first.dof

    @property
    def repeat(self) -> float:
        """Number of passes (``math.inf`` for ``"forever"``)."""
        return self._repeat

    @property
    def period(self) -> float:
        """Duration of one repetition after the first, seconds (0 without repetition)."""
        return self._period

    @property
    def duration(self) -> float:
        """Total duration in seconds (``math.inf`` for ``"forever"``)."""
        return self._duration

    @property
    def waypoint_times(self) -> np.ndarray:
        """Time of each waypoint in the first pass, seconds, shape ``(n_waypoints,)``."""
        return self._waypoint_times.copy()

    @property
    def end_position(self) -> np.ndarray:
        """Position held after the end, shape ``(n,)``."""
        return self._hold[0]

    @property
    def first_pass(self) -> PiecewisePolynomial:
        """The first pass (with its lead-in) as a polynomial."""
        return self._first

    def done(self, t: float) -> bool:
        """True once ``t`` (seconds from the start) is past the end."""
        return t >= self._duration

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity, acceleration at ``t`` seconds from the start, each ``(n,)``.

        After the end the final position is held with zero velocity.
        """
        if t < self._first_end or self._cycle is None:
            return self._first.sample(t)
        if t >= self._duration:
            return self._hold
        offset = (t - self._first_end) % self._period
        return self._cycle.sample(offset)

    def sample_rows(self, t: float) -> np.ndarray:
        """:meth:`sample` as the rows of one array, shape ``(3, n)`` (the control tick's path)."""
        if t < self._first_end or self._cycle is None:
            return self._first.sample_rows(t)
        if t >= self._duration:
            return self._hold_rows
        return self._cycle.sample_rows((t - self._first_end) % self._period)

    def sample_many(self, times: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Vectorised :meth:`sample`: ``times`` shape ``(k,)`` -> three arrays ``(k, n)``."""
        times = np.asarray(times, dtype=np.float64).reshape(-1)
        p, v, a = self._first.sample_many(times)
        if self._cycle is None:
            return p, v, a
        later = times >= self._first_end
        if later.any():
            offset = np.mod(times[later] - self._first_end, self._period)
            cp, cv, ca = self._cycle.sample_many(offset)
            p[later], v[later], a[later] = cp, cv, ca
        after = times >= self._duration
        p[after], v[after], a[after] = self._hold
        return p, v, a
