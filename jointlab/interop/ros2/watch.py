"""What the bridge reports from the robot's states: soft-limit entries, stalls and faults.

:class:`StateWatch` compares each state with the previous one and returns the events of what
*began* in it (edges, so a joint resting beyond a limit is reported once, not every tick):

* ``soft_limit``: a joint's measured position left its soft range ``[soft min, soft max]``;
* ``stalled``: the robot newly flags a joint STALLED;
* ``fault``: a servo newly reports hardware-error bits (``state.extras["hardware_error"]``)
  or the device watchdog fired; the bridge then holds and disarms;
* ``disarmed``: the robot stopped accepting motion without a disarm request (a device
  protection, power loss).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jointlab.interface import ArrayState
from jointlab.robots.description import RobotDescription

__all__ = ["StateEvent", "StateWatch"]


@dataclass(frozen=True)
class StateEvent:
    """One thing that began in a state."""

    #: ``"soft_limit"``, ``"stalled"``, ``"fault"`` or ``"disarmed"``.
    kind: str
    #: Robot time, seconds.
    time: float
    #: Names of the joints concerned.
    joints: tuple[str, ...]
    #: What happened, in words.
    message: str
    #: Values (positions and limits, error bits).
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def is_fault(self) -> bool:
        """True for the events after which the bridge holds and disarms."""
        return self.kind == "fault"


class StateWatch:
    """Edges of soft-limit entries, stalls, faults and unrequested disarms (module docstring)."""

    def __init__(self, description: RobotDescription) -> None:
        self._names = np.array(description.joint_names, dtype=object)
        self._lower = description.soft_lower
        self._upper = description.soft_upper
        dof = description.dof
        self._beyond = np.zeros(dof, dtype=bool)
        self._no_joint = np.zeros(dof, dtype=bool)
        self._stalled = self._no_joint
        self._errors = np.zeros(dof, dtype=np.int64)
        self._watchdog = False
        self._armed: bool | None = None
        #: Set by the bridge before it disarms on request, so that is not reported.
        self.disarm_requested = False

    def check(self, state: ArrayState) -> list[StateEvent]:
        """The events that began in ``state``."""
        events: list[StateEvent] = []
        t = float(state.time)
        q = state.position
        below, above = q < self._lower, q > self._upper
        beyond = below | above
        new = beyond & ~self._beyond
        if np.count_nonzero(new):
            j = np.flatnonzero(new)
            limit = np.where(below, self._lower, self._upper)[j]
            events.append(
                StateEvent(
                    "soft_limit",
                    t,
                    tuple(self._names[j]),
                    "; ".join(
                        f"{self._names[k]} at {q[k]:.6g} is beyond its soft "
                        f"{'min' if below[k] else 'max'} {lim:.6g}"
                        for k, lim in zip(j, limit, strict=True)
                    ),
                    {"position": q[j], "limit": limit},
                )
            )
        self._beyond = beyond
        stalled = state.stalled()  # None when no joint is (no flags built)
        if stalled is not None and np.count_nonzero(new := stalled & ~self._stalled):
            j = np.flatnonzero(new)
            events.append(
                StateEvent(
                    "stalled",
                    t,
                    tuple(self._names[j]),
                    f"the robot flags {list(self._names[j])} stalled",
                )
            )
        self._stalled = self._no_joint if stalled is None else stalled
        if state.extras is not None and "hardware_error" in state.extras:
            self._check_errors(state.extras["hardware_error"], t, events)
        if state.watchdog and not self._watchdog:
            events.append(
                StateEvent(
                    "fault",
                    t,
                    (),
                    "the device watchdog fired (no commands in time): it holds or brakes",
                    {"reason": "watchdog"},
                )
            )
        self._watchdog = bool(state.watchdog)
        if self._armed and not state.armed and not self.disarm_requested:
            events.append(
                StateEvent(
                    "disarmed",
                    t,
                    (),
                    "the robot disarmed itself "
                    f"(motor power {'on' if state.motor_power else 'off'})",
                )
            )
        if state.armed:
            self.disarm_requested = False
        self._armed = bool(state.armed)
        return events

    def _check_errors(self, bits: np.ndarray, t: float, events: list[StateEvent]) -> None:
        """A ``fault`` for servos whose hardware-error bits became non-zero or changed."""
        errors = np.nan_to_num(np.asarray(bits, dtype=np.float64)).astype(np.int64)
        if np.count_nonzero(new := (errors != 0) & (errors != self._errors)):
            j = np.flatnonzero(new)
            events.append(
                StateEvent(
                    "fault",
                    t,
                    tuple(self._names[j]),
                    "hardware error "
                    + ", ".join(f"{self._names[k]}: bits {int(errors[k]):#04x}" for k in j),
                    {"hardware_error": errors[j]},
                )
            )
        self._errors = errors
