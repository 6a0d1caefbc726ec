"""The controller protocol and composition.

A controller is any plain object with two methods::

    reset(state: ArrayState) -> None          # once, before the first compute of a run
    compute(state: ArrayState) -> NJointAction  # once per control tick

It has no hidden I/O: it sees only the state it is given, so the same object runs in
simulation and on hardware. A controller may expose ``last_desired`` (the action it wanted
before a safety layer changed it); :func:`jointlab.controllers.run` logs that as the desired
action when present.

Composition adds actions: :class:`Sum` adds the torques of several controllers and takes each
joint's PD target from the one controller that sets it, so gravity compensation (a pure
torque) adds to any controller. :func:`with_feedforward` is the common case.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from jointlab.controllers.safety import SafetyEvent, SafetyLayer
from jointlab.errors import ActionError
from jointlab.interface import ArrayState, NJointAction

__all__ = [
    "Controller",
    "FunctionController",
    "SafeController",
    "Sum",
    "add_actions",
    "with_feedforward",
]


@runtime_checkable
class Controller(Protocol):
    """What :func:`jointlab.controllers.run` drives."""

    def reset(self, state: ArrayState) -> None:
        """Prepare for a run starting at ``state``."""

    def compute(self, state: ArrayState) -> NJointAction:
        """The action to apply for the control period starting at ``state``."""


def add_actions(first: NJointAction, second: NJointAction) -> NJointAction:
    """Sum two actions: torques add; each joint's PD comes from the action that sets it.

    Raises:
        ActionError: lengths differ, or both actions set a PD target on the same joint.
    """
    if first.dof != second.dof:
        raise ActionError(f"cannot add actions of {first.dof} and {second.dof} joints")
    a, b = first.pd_mask, second.pd_mask
    both = a & b
    if both.any():
        raise ActionError(
            f"both actions set a PD position target on joints {np.flatnonzero(both).tolist()}; "
            "at most one controller may drive a joint's PD"
        )
    if not b.any():
        if not a.any() and not second.torque.any():
            return first
        return NJointAction(
            first.torque + second.torque,
            first.position,
            first.position_kp,
            first.position_kd,
            first.velocity,
        )
    if not a.any():
        return NJointAction(
            first.torque + second.torque,
            second.position,
            second.position_kp,
            second.position_kd,
            second.velocity,
        )
    return NJointAction(
        first.torque + second.torque,
        np.where(b, second.position, first.position),
        np.where(b, second.position_kp, first.position_kp),
        np.where(b, second.position_kd, first.position_kd),
        np.where(b, second.velocity, first.velocity),
    )


class FunctionController:
    """A controller from a function of the state.

    Args:
        function: ``state -> NJointAction``, or ``state -> torque array`` (shape ``(dof,)``,
            N·m), which becomes a pure-torque action.
    """

    def __init__(self, function: Callable[[ArrayState], Any]) -> None:
        self.function = function

    def reset(self, state: ArrayState) -> None:
        """Nothing to prepare."""

    def compute(self, state: ArrayState) -> NJointAction:
        """Call the function; wrap a torque array in :meth:`NJointAction.Torque`."""
        result = self.function(state)
        if isinstance(result, NJointAction):
            return result
        return NJointAction.Torque(result)


def _as_controller(value: Any) -> Controller:
    if hasattr(value, "compute") and hasattr(value, "reset"):
        return value
    if callable(value):
        return FunctionController(value)
    raise ActionError(f"{value!r} is neither a controller (reset/compute) nor a function")


class Sum:
    """Controller whose action is the sum (:func:`add_actions`) of its parts' actions.

    Args:
        *controllers: Controllers, or functions of the state (see :class:`FunctionController`).
    """

    def __init__(self, *controllers: Any) -> None:
        if not controllers:
            raise ActionError("Sum needs at least one controller")
        self.controllers = tuple(_as_controller(c) for c in controllers)

    def reset(self, state: ArrayState) -> None:
        """Reset every part."""
        for controller in self.controllers:
            controller.reset(state)

    def compute(self, state: ArrayState) -> NJointAction:
        """Sum of the parts' actions."""
        action = self.controllers[0].compute(state)
        for controller in self.controllers[1:]:
            action = add_actions(action, controller.compute(state))
        return action


def with_feedforward(controller: Any, *feedforward: Any) -> Sum:
    """``controller`` plus feed-forward torques (e.g. :class:`GravityCompensation`).

    Example::

        control = with_feedforward(JointPD(target), GravityCompensation(description))
    """
    return Sum(controller, *feedforward)


class SafeController:
    """Wrap a controller in a :class:`SafetyLayer`; keeps the desired action and every event.

    Args:
        controller: The controller to protect.
        layer: The safety layer (limits, policy, check mode).
        on_event: Optional callback called with each :class:`SafetyEvent`.
        max_events: Length of the :attr:`events` queue (oldest dropped first).
    """

    def __init__(
        self,
        controller: Any,
        layer: SafetyLayer,
        on_event: Callable[[SafetyEvent], None] | None = None,
        max_events: int = 10_000,
    ) -> None:
        self.controller = _as_controller(controller)
        self.layer = layer
        self.on_event = on_event
        #: Recent safety events, oldest first.
        self.events: deque[SafetyEvent] = deque(maxlen=max_events)
        #: The last action the wrapped controller asked for.
        self.last_desired: NJointAction | None = None

    def reset(self, state: ArrayState) -> None:
        """Reset the controller and the layer's memory."""
        self.layer.reset()
        self.controller.reset(state)

    def compute(self, state: ArrayState) -> NJointAction:
        """The wrapped controller's action after the safety layer."""
        desired = self.controller.compute(state)
        result = self.layer.filter(desired, state)
        self.last_desired = desired
        for event in result.events:
            self.events.append(event)
            if self.on_event is not None:
                self.on_event(event)
        return result.applied

    def drain(self) -> Iterable[SafetyEvent]:
        """Remove and return the queued events."""
        out = list(self.events)
        self.events.clear()
        return out
