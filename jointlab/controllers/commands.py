"""The commands a Commander runs: each writes references for the joints it owns.

A command owns a set of joints; a newer command on some of them takes those joints over
(the older one is *preempted* on them). Every control tick each active command writes into
:class:`Outputs` — per-joint position/velocity references, feed-forward torque and whether
the joint is under PD (and so gets the model feed-forward) — and reports events as
``(kind, status, message, data)`` tuples for the Commander to publish.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from jointlab.controllers.events import CommandEventKind, CommandHandle, CommandStatus
from jointlab.controllers.motion import (
    MotionLimits,
    plan_move,
    plan_stop,
    plan_velocity,
    stopping_distance,
)
from jointlab.controllers.polynomial import PiecewisePolynomial
from jointlab.interface import ArrayState

__all__ = [
    "ActiveCommand",
    "EffortCommand",
    "HoldCommand",
    "MotionCommand",
    "Outputs",
    "Tolerances",
    "plan_velocity_run",
]

Report = tuple[CommandEventKind, "CommandStatus | None", str, dict[str, Any]]


class Motion(Protocol):
    """A planned motion: a polynomial or a trajectory."""

    duration: float

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity, acceleration at ``t`` seconds."""

    def sample_rows(self, t: float) -> np.ndarray:
        """:meth:`sample` as the rows of one array, shape ``(3, n)``."""

    @property
    def end_position(self) -> np.ndarray:
        """Position held after the end."""


@dataclass(frozen=True)
class Tolerances:
    """When a command counts as done."""

    #: ``|q − target|`` below which a target is reached, rad or m (the Commander raises it to
    #: twice the robot's ``position_resolution``, two encoder ticks on a servo arm, and to the
    #: PD's friction deadband ``static_friction / kp`` plus one tick).
    position: float = 5e-4
    #: ``|q̇|`` below which a joint is at rest, rad/s or m/s.
    velocity: float = 0.02
    #: Seconds after the planned end before an unreached target is reported ``stalled``.
    settle_time: float = 1.0


class Outputs:
    """Per-joint references the active commands write (arrays of shape ``(dof,)``).

    ``ref_p``, ``ref_v`` and ``ref_a`` are the rows of one ``(3, dof)`` array, :attr:`refs`,
    so a motion writes all three with one assignment and the feed-forward reads
    ``[ref_v, ref_a]`` as one contiguous vector, :attr:`ref_va`.
    """

    __slots__ = ("pd", "ref_a", "ref_p", "ref_v", "ref_va", "refs", "tau")

    def __init__(self, position: np.ndarray) -> None:
        dof = position.shape[0]
        #: Position, velocity and acceleration references (rad, rad/s, rad/s²), ``(3, dof)``.
        self.refs = np.zeros((3, dof))
        self.refs[0] = position
        self.ref_p, self.ref_v, self.ref_a = self.refs
        #: ``ref_v`` then ``ref_a`` as one vector of shape ``(2 dof,)`` (a view of :attr:`refs`).
        self.ref_va = self.refs[1:].reshape(-1)
        self.tau = np.zeros(dof)
        self.pd = np.ones(dof, dtype=bool)

    def hold(self, joints: Any, position: Any) -> None:
        """PD-hold ``joints`` at ``position`` (the Commander adds gravity compensation)."""
        self.ref_p[joints] = position
        self.ref_v[joints] = 0.0
        self.ref_a[joints] = 0.0
        self.tau[joints] = 0.0
        self.pd[joints] = True

    def start_state(self, joints: np.ndarray, state: ArrayState) -> tuple[np.ndarray, ...]:
        """Where a new motion of ``joints`` starts: the reference if tracked, else measured."""
        tracked = self.pd[joints]
        p = np.where(tracked, self.ref_p[joints], state.position[joints])
        v = np.where(tracked, self.ref_v[joints], state.velocity[joints])
        a = np.where(tracked, self.ref_a[joints], 0.0)
        return p, v, a


class ActiveCommand:
    """Base of running commands: ownership, begin-motion and completion bookkeeping."""

    #: Emit ``begin_motion`` on the first tick.
    moves = True

    def __init__(self, handle: CommandHandle, joints: np.ndarray, start: float) -> None:
        self.handle = handle
        self.joints = np.asarray(joints, dtype=int)
        self.owned = np.ones(self.joints.shape[0], dtype=bool)
        # (joints, own) of _index(): a slice while the command owns every joint it was given
        # in order 0..n-1 (the common whole-robot command), index arrays otherwise.
        every = bool(np.array_equal(self.joints, np.arange(self.joints.shape[0])))
        self._where: tuple[Any, Any] = (
            (slice(0, self.joints.shape[0]) if every else self.joints),
            slice(None),
        )
        self.start = start
        #: Seconds after ``start`` when an unfinished command ends ``stalled`` (BB timeout).
        self.timeout: float | None = None
        self._begun = False
        self._configured = False

    def release(self, joints: set[int]) -> tuple[int, ...]:
        """Give up ``joints`` (taken by a newer command); return the ones it had."""
        lost = tuple(
            int(j)
            for j, own in zip(self.joints, self.owned, strict=True)
            if own and int(j) in joints
        )
        if lost:
            self.owned &= ~np.isin(self.joints, lost)
            self._where = (self.joints[self.owned], self.owned)
        return lost

    @property
    def empty(self) -> bool:
        """True when every joint was taken over."""
        return not self.owned.any()

    def _index(self) -> tuple[Any, Any]:
        """The joints this command still owns, and which of its own joints those are.

        The first indexes the robot's joints, the second the command's references.
        """
        return self._where

    def begin_data(self) -> dict[str, Any]:
        """Data of the ``begin_motion`` event."""
        return {}

    def tick(self, t: float, state: ArrayState, out: Outputs, tol: Tolerances) -> list[Report]:
        """Write this tick's references; return events."""
        reports: list[Report] = []
        if not self._begun:
            self._begun = True
            if self.moves:
                reports.append((CommandEventKind.BEGIN_MOTION, None, "", self.begin_data()))
        if self.timeout is not None and t - self.start >= self.timeout:
            joints, _ = self._index()
            out.hold(joints, state.position[joints])
            reports.append(
                (
                    CommandEventKind.STALLED,
                    CommandStatus.STALLED,
                    f"not finished within its timeout of {self.timeout} s",
                    {"reason": "timeout"},
                )
            )
            return reports
        self._tick(t - self.start, state, out, tol, reports)
        return reports

    def _tick(
        self, t: float, state: ArrayState, out: Outputs, tol: Tolerances, reports: list[Report]
    ) -> None:
        raise NotImplementedError


class MotionCommand(ActiveCommand):
    """Follow a planned motion (move, home, trajectory, velocity run, decelerating stop)."""

    def __init__(
        self,
        handle: CommandHandle,
        joints: np.ndarray,
        start: float,
        motion: Motion,
        start_position: np.ndarray,
    ) -> None:
        super().__init__(handle, joints, start)
        self.motion = motion
        self.duration = motion.duration
        self.target = np.array(motion.end_position)
        self.start_position = np.array(start_position)

    def begin_data(self) -> dict[str, Any]:
        """BB BeginMotion: initial and target positions, peak speed and acceleration, duration.

        ``peak_velocity`` (rad/s or m/s) and ``acceleration`` (the peak ``|acceleration|``,
        rad/s² or m/s²) are per joint over the planned motion (one pass of a repeated
        trajectory); ``duration`` is ``None`` for a motion without an end.
        """
        motion = getattr(self.motion, "first_pass", self.motion)
        peak_velocity, peak_acceleration = motion.peaks()
        return {
            "initial_position": self.start_position.tolist(),
            "target_position": self.target.tolist(),
            "peak_velocity": peak_velocity.tolist(),
            "acceleration": peak_acceleration.tolist(),
            "duration": self.duration if math.isfinite(self.duration) else None,
        }

    def _tick(
        self, t: float, state: ArrayState, out: Outputs, tol: Tolerances, reports: list[Report]
    ) -> None:
        joints, own = self._index()
        if not self._configured:
            out.tau[joints] = 0.0
            out.pd[joints] = True
            self._configured = True
        out.refs[:, joints] = self.motion.sample_rows(t)[:, own]
        stalled = state.stalled()  # None when no joint is: no flags built (simulation)
        if stalled is not None and np.count_nonzero(stalled := stalled[joints]):
            bad = self.joints[own][stalled].tolist()
            out.hold(joints, state.position[joints])
            reports.append(
                (
                    CommandEventKind.STALLED,
                    CommandStatus.STALLED,
                    f"the robot reports joints {bad} stalled",
                    {"reason": "stalled"},
                )
            )
            return
        if t < self.duration:
            return
        error = np.abs(state.position[joints] - self.target[own])
        moving = np.abs(state.velocity[joints])
        if np.all(error <= tol.position) and np.all(moving <= tol.velocity):
            reports.append(
                (
                    CommandEventKind.END_MOTION,
                    CommandStatus.SUCCEEDED,
                    "",
                    {"position_error": float(error.max())},
                )
            )
        elif t >= self.duration + tol.settle_time:
            worst = int(np.argmax(error))
            reports.append(
                (
                    CommandEventKind.STALLED,
                    CommandStatus.STALLED,
                    f"joint {int(self.joints[own][worst])} is {error[worst]:.3g} from its target "
                    f"{tol.settle_time} s after the planned end",
                    {"reason": "not_reached", "position_error": float(error.max())},
                )
            )


class EffortCommand(ActiveCommand):
    """Apply a torque (effort or motor current) for a duration or until replaced."""

    def __init__(
        self,
        handle: CommandHandle,
        joints: np.ndarray,
        start: float,
        torque: np.ndarray,
        duration: float | None,
    ) -> None:
        super().__init__(handle, joints, start)
        self.torque = np.asarray(torque, dtype=np.float64)
        self.duration = math.inf if duration is None else float(duration)

    def begin_data(self) -> dict[str, Any]:
        """The torque applied."""
        return {"effort": self.torque.tolist()}

    def _tick(
        self, t: float, state: ArrayState, out: Outputs, tol: Tolerances, reports: list[Report]
    ) -> None:
        joints, own = self._index()
        if t >= self.duration:
            out.hold(joints, state.position[joints])
            reports.append((CommandEventKind.END_MOTION, CommandStatus.SUCCEEDED, "", {}))
            return
        if not self._configured:
            out.pd[joints] = False
            out.ref_v[joints] = 0.0
            out.ref_a[joints] = 0.0
            self._configured = True
        out.tau[joints] = self.torque[own]
        out.ref_p[joints] = state.position[joints]  # so a later motion starts from here


class HoldCommand(ActiveCommand):
    """Hold a fixed position (``hold``), or stop at once and end when still (``stop``)."""

    moves = False

    def __init__(
        self,
        handle: CommandHandle,
        joints: np.ndarray,
        start: float,
        position: np.ndarray,
        end_when_still: bool,
    ) -> None:
        super().__init__(handle, joints, start)
        self.position = np.asarray(position, dtype=np.float64)
        self.end_when_still = end_when_still

    def _tick(
        self, t: float, state: ArrayState, out: Outputs, tol: Tolerances, reports: list[Report]
    ) -> None:
        joints, own = self._index()
        if not self._configured:
            out.hold(joints, self.position[own])
            self._configured = True
        if not self.end_when_still:
            return
        if np.all(np.abs(state.velocity[joints]) <= tol.velocity):
            reports.append((CommandEventKind.END_MOTION, CommandStatus.SUCCEEDED, "", {}))
        elif t >= tol.settle_time:
            reports.append(
                (
                    CommandEventKind.STALLED,
                    CommandStatus.STALLED,
                    "joints still moving after the settle time",
                    {"reason": "not_still"},
                )
            )


def _shift(pieces: list[tuple[float, ...]], offset: float) -> list[tuple[float, ...]]:
    return [(t + offset, *rest) for (t, *rest) in pieces]


def plan_velocity_run(
    limits: MotionLimits,
    start: tuple[np.ndarray, np.ndarray, np.ndarray],
    velocity: np.ndarray,
    duration: float | None,
) -> tuple[PiecewisePolynomial, list[str]]:
    """Ramp to ``velocity``, cruise, then stop: after ``duration`` seconds or at a soft limit.

    Each joint ramps to its velocity (jerk-limited, ruckig velocity interface), cruises, and
    starts a jerk-limited stop either ``duration`` seconds after the command or at the last
    moment that lets it stop exactly on its soft position limit, whichever is first.

    Args:
        limits: Limits of the ``n`` joints (soft position limits, acceleration, jerk).
        start: Start position, velocity, acceleration, each ``(n,)``.
        velocity: Commanded velocities, rad/s or m/s, ``(n,)``.
        duration: Seconds from the command to the start of the stop; ``None``: until a limit.

    Returns:
        The motion and one note per joint stopped by a soft limit.
    """
    p0, v0, a0 = start
    ramp = plan_velocity(limits, p0, v0, a0, velocity)
    ramp_end = ramp.duration
    p_ramp = ramp.end_state[0]
    d_stop = stopping_distance(limits, velocity)
    horizon = math.inf if duration is None else float(duration)
    all_pieces = []
    notes = []
    end = ramp_end
    for j in range(limits.n):
        v = float(velocity[j])
        one = limits.select([j])
        t_limit = math.inf
        limit = math.nan
        if v != 0.0:
            limit = float(limits.upper[j] if v > 0 else limits.lower[j])
            t_limit = ramp_end + (limit - p_ramp[j] - d_stop[j]) / v
        t_stop = min(horizon, t_limit)
        if t_limit <= horizon:
            notes.append(f"joint {limits.names[j]!r} stops at its soft limit {limit:.6g}")
        if t_stop < 0 or (t_limit <= horizon and t_limit < ramp_end):
            # too close to the limit for ramp + stop: move onto the limit directly
            move = plan_move(
                one.with_velocity([abs(v)]),
                [p0[j]],
                [limit],
                start_velocity=[v0[j]],
                start_acceleration=[a0[j]],
            )
            pieces = move.pieces(0)
            end = max(end, move.duration)
        elif math.isinf(t_stop):
            pieces = ramp.pieces(j)
        elif t_stop < ramp_end:
            p, vel, acc = (x[j] for x in ramp.sample(t_stop))
            stop = plan_stop(one, [p], [vel], [acc])
            pieces = [pc for pc in ramp.pieces(j) if pc[0] < t_stop]
            pieces += _shift(stop.pieces(0), t_stop)
            end = max(end, t_stop + stop.duration)
        else:
            stop = plan_stop(one, [p_ramp[j] + v * (t_stop - ramp_end)], [v], [0.0])
            pieces = [*ramp.pieces(j), (ramp_end, p_ramp[j], v, 0.0, 0.0)]
            pieces += _shift(stop.pieces(0), t_stop)
            end = max(end, t_stop + stop.duration)
        all_pieces.append(pieces)
    return PiecewisePolynomial.from_pieces(all_pieces, end), notes
