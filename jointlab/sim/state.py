"""What ``SimRobot.read()`` reports: actuator flags, stall detection, sensors, ``ArrayState``.

Flags per joint (Player's actarray codes): BRAKED on a braked joint; otherwise MOVING when
``|qd| > moving_threshold`` and IDLE when not; STALLED is added when the actuator torque is
saturated (the actuator model changed the command) and the joint has not moved in the
torque's direction faster than ``moving_threshold`` for ``stall_time`` seconds. The stall
detector samples the joints once per ``STALL_CHECK_PERIOD`` of simulated time (or once per
control period when that is longer).
"""

from __future__ import annotations

import numpy as np

from jointlab.interface import ActuatorState, ArrayState
from jointlab.sim.law import DriveLoop
from jointlab.sim.sensors import SensorModel

__all__ = ["StateReporter"]

#: The stall detector looks at the joints once per this many seconds of simulated time.
STALL_CHECK_PERIOD = 0.01
_BRAKED = np.uint8(ActuatorState.BRAKED)
_STALLED = np.uint8(ActuatorState.STALLED)


class StateReporter:
    """Builds ``ArrayState`` values from a :class:`DriveLoop` (one per ``SimRobot``)."""

    def __init__(
        self,
        dof: int,
        dt: float,
        moving_threshold: float,
        stall_time: float | None,
        sensors: SensorModel | None,
    ) -> None:
        self.dt = dt
        self.moving_threshold = float(moving_threshold)
        self.stall_time = stall_time
        self.sensors = None if sensors is None else sensors.bind(dof)
        # Arrays rather than Python scalars: small-array ufuncs with scalars are slower.
        self._inv_dt = np.full(dof, 1.0 / dt)
        self._threshold = np.full(dof, self.moving_threshold)
        self._idle = np.full(dof, ActuatorState.IDLE, dtype=np.uint8)
        self._check_every = max(1, round(STALL_CHECK_PERIOD / dt))
        self.measured: tuple[np.ndarray, np.ndarray] | None = None
        self.reset(0)

    def reset(self, steps: int) -> None:
        """Forget stall timers (the world is at physics step ``steps``)."""
        dof = self._idle.shape[0]
        self._timer = np.zeros(dof)
        self.stalled = np.zeros(dof, dtype=bool)
        self._stall_any = False
        self._checked = steps

    def end_period(self, loop: DriveLoop, steps: int, rng: np.random.Generator) -> None:
        """Update stall timers and draw sensor readings at the end of a control period."""
        if self.stall_time is not None and steps - self._checked >= self._check_every:
            elapsed = (steps - self._checked) * self.dt
            tau = loop.tau
            stuck = (tau != loop.cmd) & (loop.qd * np.sign(tau) <= self.moving_threshold)
            self._timer = np.where(stuck, self._timer + elapsed, 0.0)
            self.stalled = self._timer >= self.stall_time
            self._stall_any = bool(self.stalled.any())
            self._checked = steps
        if self.sensors is not None:
            self.measured = self.sensors.measure(loop.q, loop.qd, rng)

    def build(
        self,
        loop: DriveLoop,
        time: float,
        powered: bool,
        armed: bool,
        braked: np.ndarray,
        brakes_engaged: bool,
    ) -> ArrayState:
        """The state after the loop's last physics step; its arrays are made read-only."""
        qd, tau = loop.qd, loop.tau
        position, velocity = (loop.q, qd) if self.measured is None else self.measured
        # IDLE (1) or MOVING (2) is 1 + (|qd| > threshold).
        flags = np.greater(np.abs(qd), self._threshold).view(np.uint8) + self._idle
        if brakes_engaged:
            flags[braked] = _BRAKED
        if self._stall_any:
            flags[self.stalled] |= _STALLED
        for array in (position, velocity, tau):
            array.flags.writeable = False
        return ArrayState(
            time,
            position,
            velocity,
            (qd - loop.qd_prev) * self._inv_dt,
            tau,
            loop.current(tau),
            flags,
            powered,
            armed,
            brakes_engaged,
        )
