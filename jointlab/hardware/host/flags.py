"""The device's power, arming and brakes as the host knows them, in effect when acknowledged.

A state change (ARM, DISARM, POWER, BRAKES, HELLO) is in effect on the device when its ACK
comes back, but the DATA STATE the host last took still shows the old flags, and the next
one comes only with the next ``step()``. :class:`DeviceFlags` is what the ACKs say; the
host lays it over the state ``read()`` returns until a state sent after the ACK arrives, so
``read()`` right after ``arm()`` shows ``armed``, on a device as in simulation.

The overlay mirrors what a simulated robot reports for the same change: the ``brakes``
flag and the BRAKED bit of each braked joint (``has_brakes`` and (brakes requested or power
off)), IDLE/MOVING re-derived for joints that stop being braked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from jointlab.hardware.protocol import (
    ArmRequest,
    BrakesRequest,
    DisarmRequest,
    HelloRequest,
    Message,
    PowerRequest,
)
from jointlab.interface import ActuatorState, ArrayState

__all__ = ["MOVING_THRESHOLD", "DeviceFlags"]

#: Speed above which a joint reports MOVING, rad/s or m/s, as the emulator's plant reports it.
MOVING_THRESHOLD = 1e-3
_BRAKED = np.uint8(ActuatorState.BRAKED)
_STALLED = np.uint8(ActuatorState.STALLED)


@dataclass(frozen=True)
class DeviceFlags:
    """Power, arming, brakes and watchdog of a device, per its ACKs and states."""

    #: Motor power is on.
    powered: bool
    #: The device accepts motion commands.
    armed: bool
    #: The host asked for the brakes (they engage only on joints that have them).
    brakes_requested: bool
    #: The watchdog holds or brakes the array.
    watchdog: bool = False

    @classmethod
    def from_state(cls, state: ArrayState, brakes_requested: bool) -> DeviceFlags:
        """The flags a DATA STATE shows (the host keeps its own brake request)."""
        if state.motor_power:  # powered: the brakes flag is the request (on braked robots)
            brakes_requested = brakes_requested or state.brakes
        return cls(state.motor_power, state.armed, brakes_requested, state.watchdog)

    def after(self, request: Message) -> DeviceFlags:
        """The flags once the device acknowledged ``request`` (unchanged for most)."""
        if isinstance(request, ArmRequest):
            return replace(self, armed=True)
        if isinstance(request, (DisarmRequest, HelloRequest)):
            return replace(self, armed=False, watchdog=False)
        if isinstance(request, PowerRequest):
            if request.on:
                return replace(self, powered=True)
            return replace(self, powered=False, armed=False, watchdog=False)
        if isinstance(request, BrakesRequest):
            return replace(self, brakes_requested=request.on)
        return self

    def overlay(self, state: ArrayState, has_brakes: np.ndarray) -> ArrayState:
        """``state`` with these flags (and per-joint BRAKED bits), as a simulated robot reports.

        Args:
            state: The last state taken from the device.
            has_brakes: Which joints have brakes, shape ``(dof,)``.
        """
        braked = has_brakes & (self.brakes_requested or not self.powered)
        flags = state.actuator_state
        changed = braked != ((flags & _BRAKED) != 0)
        if changed.any():
            moving = (1 + (np.abs(state.velocity) > MOVING_THRESHOLD)).astype(np.uint8)
            fresh = np.where(braked, _BRAKED, moving) | (flags & _STALLED)
            flags = np.where(changed, fresh, flags).astype(np.uint8)
        return replace(
            state,
            motor_power=self.powered,
            armed=self.armed,
            brakes=bool(braked.any()),
            watchdog=self.watchdog,
            actuator_state=flags,
        )
