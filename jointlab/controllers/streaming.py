"""Streamed set-points: a command whose targets are replaced by every new message.

A teleoperation device, a ROS 2 ``ros2_control`` hardware interface or any outside loop sends
targets at its own rate; each message replaces the targets of the running
:class:`StreamCommand` (:meth:`~jointlab.controllers.commander.Commander.stream`), which
writes them into the Commander's references every tick, so streamed set-points take the
Commander's path (model feed-forward, then the safety layer) like every other command.

Modes, chosen from the fields a message gives (:func:`stream_mode`):

* ``position``: PD to the target (rad or m), with the velocity (default 0) and effort
  (default 0) as feed-forward; a NaN target leaves the joint out of the command.
* ``velocity``: the position reference integrates the velocity tick by tick from where the
  joint's reference is, and stops on the soft limit (one ``clamped`` report per entry); a
  NaN velocity leaves the joint out.
* ``effort``: torque (N·m or N) with the PD off; NaN is refused.

A velocity or effort stream that is not updated for ``stale_after`` seconds of robot time
ends ``stalled`` (reason ``no_update``) and its joints hold where they are: a client that
dies does not leave a joint running. A position stream holds its last target.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from jointlab.controllers.commands import ActiveCommand, Outputs, Report, Tolerances
from jointlab.controllers.events import CommandEventKind, CommandHandle, CommandStatus
from jointlab.interface import ArrayState

__all__ = ["MODES", "StreamCommand", "StreamTargets", "stream_mode"]

#: Stream modes, in the order a message's fields choose them.
MODES = ("position", "velocity", "effort")


def stream_mode(
    position: np.ndarray | None, velocity: np.ndarray | None, effort: np.ndarray | None
) -> str | None:
    """The mode of a message: the first of position, velocity, effort it gives; or None."""
    for mode, values in zip(MODES, (position, velocity, effort), strict=True):
        if values is not None and values.size and (mode == "effort" or not np.isnan(values).all()):
            return mode
    return None


@dataclass(frozen=True, eq=False)
class StreamTargets:
    """One message's targets for the joints it commands; arrays have shape ``(n,)``."""

    #: ``"position"``, ``"velocity"`` or ``"effort"``.
    mode: str
    #: Robot joint indices, ``(n,)`` int.
    joints: np.ndarray
    #: Position targets, rad or m (NaN outside position mode).
    position: np.ndarray
    #: Velocity targets or feed-forward, rad/s or m/s (0 where not given).
    velocity: np.ndarray
    #: Effort targets or feed-forward, N·m or N (0 where not given).
    effort: np.ndarray


class StreamCommand(ActiveCommand):
    """Follow streamed targets until replaced (see the module docstring)."""

    moves = False

    def __init__(
        self,
        handle: CommandHandle,
        start: float,
        targets: StreamTargets,
        lower: np.ndarray,
        upper: np.ndarray,
        stale_after: float | None,
    ) -> None:
        super().__init__(handle, targets.joints, start)
        self.targets = targets
        self._lower = lower[targets.joints]
        self._upper = upper[targets.joints]
        self.stale_after = math.inf if stale_after is None else float(stale_after)
        self._updated = start
        self._last_tick: float | None = None
        self._at_limit = np.zeros(targets.joints.shape[0], dtype=bool)

    @property
    def mode(self) -> str:
        """The stream's mode."""
        return self.targets.mode

    def update(self, targets: StreamTargets, time: float) -> None:
        """Replace the targets (same joints and mode) from robot time ``time`` on."""
        self.targets = targets
        self._updated = time

    def _tick(
        self, t: float, state: ArrayState, out: Outputs, tol: Tolerances, reports: list[Report]
    ) -> None:
        joints, own = self._index()
        now = self.start + t
        mode = self.targets.mode
        if mode != "position" and now - self._updated > self.stale_after:
            out.hold(joints, state.position[joints])
            reports.append(
                (
                    CommandEventKind.STALLED,
                    CommandStatus.STALLED,
                    f"no new {mode} target for {now - self._updated:.3g} s (more than "
                    f"{self.stale_after:g} s): holding",
                    {"reason": "no_update"},
                )
            )
            return
        targets = self.targets
        if mode == "effort":
            out.pd[joints] = False
            out.ref_p[joints] = state.position[joints]  # a later motion starts from here
            out.ref_v[joints] = 0.0
            out.ref_a[joints] = 0.0
            out.tau[joints] = targets.effort[own]
        elif mode == "position":
            out.pd[joints] = True
            out.ref_p[joints] = targets.position[own]
            out.ref_v[joints] = targets.velocity[own]
            out.ref_a[joints] = 0.0
            out.tau[joints] = targets.effort[own]
        else:
            self._integrate(now, state, out, reports, joints, own)
        self._last_tick = now

    def _integrate(
        self,
        now: float,
        state: ArrayState,
        out: Outputs,
        reports: list[Report],
        joints: Any,
        own: Any,
    ) -> None:
        """Velocity mode: advance the position reference, stopping on the soft limits."""
        velocity = self.targets.velocity[own]
        if self._last_tick is None:  # start from the reference if tracked, else measured
            position = out.start_state(np.arange(out.ref_p.shape[0])[joints], state)[0]
            dt = 0.0
        else:
            position = out.ref_p[joints]
            dt = now - self._last_tick
        lower, upper = self._lower[own], self._upper[own]
        position = position + velocity * dt
        at_limit = ((position <= lower) & (velocity <= 0)) | ((position >= upper) & (velocity >= 0))
        at_limit &= velocity != 0
        position = np.clip(position, lower, upper)
        entered = at_limit & ~self._at_limit[own]
        if entered.any():
            names = self.joints[own][entered].tolist()
            reports.append(
                (
                    CommandEventKind.CLAMPED,
                    None,
                    f"joints {names} stop at their soft position limits",
                    {"quantity": "position", "reason": "soft_limit", "joints": names},
                )
            )
        self._at_limit[own] = at_limit
        out.pd[joints] = True
        out.ref_p[joints] = position
        out.ref_v[joints] = np.where(at_limit, 0.0, velocity)
        out.ref_a[joints] = 0.0
        out.tau[joints] = self.targets.effort[own]
