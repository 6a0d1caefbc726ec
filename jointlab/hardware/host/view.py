"""What ``SerialRobot.read()`` shows: the state the last ``step()`` took, plus the ACKs since.

:class:`StateView` keeps the DATA STATE the last ``step()`` returned on, the device time
``time`` counts from, and the flags acknowledged since that state
(:class:`~jointlab.hardware.host.flags.DeviceFlags`), laid over it until a newer state is
taken. Times are whole device ticks times the tick, exactly as a simulator counts its
physics steps, so both backends report the same ``time`` for the same tick.
"""

from __future__ import annotations

import numpy as np

from jointlab.hardware.host.flags import DeviceFlags
from jointlab.hardware.protocol import BrakesRequest, Message, StateData
from jointlab.interface import ArrayState

__all__ = ["StateView"]


class StateView:
    """The state ``read()`` returns (see the module docstring).

    Args:
        first: The first DATA STATE of the session (time counts from it).
        rate_hz: The device's tick rate.
        has_brakes: Which joints have brakes, shape ``(dof,)``.
    """

    def __init__(self, first: StateData, rate_hz: int, has_brakes: np.ndarray) -> None:
        self.rate_hz = int(rate_hz)
        self.tick_dt = 1.0 / self.rate_hz
        self.has_brakes = np.array(has_brakes, dtype=bool)
        self._brakes_requested = False
        self.take(first)
        self.rebase()

    def take(self, state: StateData) -> None:
        """Make ``state`` (newer than every ACK so far) the one ``read()`` returns."""
        self.current = state
        self._state: ArrayState | None = None
        self._flags: DeviceFlags | None = None
        if state.motor_power and (state.brakes or self.has_brakes.any()):
            self._brakes_requested = state.brakes  # a braked robot shows its request

    def rebase(self) -> None:
        """Restart ``time`` at 0 on the current state (a reset)."""
        self._t0_us = self.current.time_us
        self._state = None

    def acknowledged(self, request: Message) -> None:
        """The device acknowledged ``request``: show the flags it changed from now on."""
        if self._flags is None:
            known = DeviceFlags.from_state(self.current.to_state(0.0), self._brakes_requested)
        else:
            known = self._flags
        self._flags = known.after(request)
        self._state = None
        if isinstance(request, BrakesRequest):
            self._brakes_requested = request.on

    @property
    def ticks(self) -> int:
        """Device ticks from the time origin to the current state."""
        return round((self.current.time_us - self._t0_us) * self.rate_hz / 1e6)

    def read(self) -> ArrayState:
        """The current state as an :class:`ArrayState`, with the acknowledged flags."""
        state = self._state
        if state is None:
            state = self.current.to_state(self.ticks * self.tick_dt)
            if self._flags is not None:
                state = self._flags.overlay(state, self.has_brakes)
            self._state = state
        return state
