"""Joint-space PD and impedance controllers.

* :class:`JointPD` hands the PD to the backend: it returns ``Position(target, kp, kd,
  velocity)`` and the backend evaluates ``kp*(target - q) + kd*(velocity - qd)`` at its own
  rate (every physics step in sim, every firmware tick on a device). Gains default to the
  description's (NaN in the action).
* :class:`JointImpedance` computes the spring-damper torque itself, once per control tick,
  and returns a pure torque: use it for gains that change every tick or that the backend must
  not see.

Add gravity compensation with :func:`jointlab.controllers.base.with_feedforward`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jointlab.errors import ActionError
from jointlab.interface import ArrayState, NJointAction

__all__ = ["JointImpedance", "JointPD"]


def _optional(value: Any, dof: int, what: str) -> np.ndarray | None:
    if value is None:
        return None
    array = np.array(value, dtype=np.float64).reshape(-1)
    if array.shape[0] == 1 and dof != 1:
        array = np.full(dof, array[0])
    if array.shape[0] != dof:
        raise ActionError(f"{what} has {array.shape[0]} values, expected {dof}")
    return array


class JointPD:
    """Backend PD to a joint target.

    Args:
        target: Target positions, rad or m, shape ``(dof,)``; NaN leaves a joint free.
        kp: P gains (N·m/rad), scalar or ``(dof,)``; ``None`` for the description's defaults.
        kd: D gains (N·m·s/rad), likewise.
        velocity: Target velocities (rad/s), ``(dof,)``; ``None`` for 0.
        torque: Feed-forward torques (N·m), ``(dof,)``; ``None`` for 0.
    """

    def __init__(
        self,
        target: Any,
        kp: Any = None,
        kd: Any = None,
        velocity: Any = None,
        torque: Any = None,
    ) -> None:
        self.target = np.array(target, dtype=np.float64).reshape(-1)
        dof = self.target.shape[0]
        self.kp = _optional(kp, dof, "kp")
        self.kd = _optional(kd, dof, "kd")
        self.velocity = _optional(velocity, dof, "velocity")
        self.torque = np.zeros(dof) if torque is None else _optional(torque, dof, "torque")
        self._action = self._build()

    def _build(self) -> NJointAction:
        return NJointAction(self.torque, self.target, self.kp, self.kd, self.velocity)

    def set_target(self, target: Any, velocity: Any = None) -> None:
        """Change the target (rad or m, shape ``(dof,)``) and optional target velocity."""
        self.target = np.array(target, dtype=np.float64).reshape(-1)
        self.velocity = _optional(velocity, self.target.shape[0], "velocity")
        self._action = self._build()

    def reset(self, state: ArrayState) -> None:
        """Nothing to prepare (the target is fixed until :meth:`set_target`)."""

    def compute(self, state: ArrayState) -> NJointAction:
        """The PD action (built once per target, not per tick)."""
        return self._action


class JointImpedance:
    """Spring-damper torque computed at the control rate (the backend PD stays off).

    ``torque = stiffness * (target - q) + damping * (velocity - qd) + feedforward``

    Args:
        target: Equilibrium positions, rad or m, shape ``(dof,)``; ``None``: the position at
            :meth:`reset`.
        stiffness: N·m/rad (N/m), scalar or ``(dof,)``.
        damping: N·m·s/rad (N·s/m), scalar or ``(dof,)``.
        velocity: Target velocities, rad/s, ``(dof,)``; ``None`` for 0.
        feedforward: Extra torque, N·m, ``(dof,)``; ``None`` for 0.
    """

    def __init__(
        self,
        target: Any = None,
        stiffness: Any = 10.0,
        damping: Any = 1.0,
        velocity: Any = None,
        feedforward: Any = None,
    ) -> None:
        self.target = None if target is None else np.array(target, dtype=np.float64).reshape(-1)
        self._stiffness = stiffness
        self._damping = damping
        self._velocity = velocity
        self._feedforward = feedforward
        self._ready = False
        if self.target is not None:
            self._prepare(self.target.shape[0])

    def _prepare(self, dof: int) -> None:
        self.stiffness = _optional(self._stiffness, dof, "stiffness")
        self.damping = _optional(self._damping, dof, "damping")
        if np.any(self.stiffness < 0) or np.any(self.damping < 0):
            raise ActionError("impedance stiffness and damping must be >= 0")
        self.velocity = (
            np.zeros(dof) if self._velocity is None else _optional(self._velocity, dof, "velocity")
        )
        self.feedforward = (
            np.zeros(dof)
            if self._feedforward is None
            else _optional(self._feedforward, dof, "feedforward")
        )
        self._ready = True

    def reset(self, state: ArrayState) -> None:
        """Take the current position as the target when none was given."""
        if self.target is None:
            self.target = state.position.copy()
        if not self._ready:
            self._prepare(state.dof)

    def compute(self, state: ArrayState) -> NJointAction:
        """The impedance torque at ``state``."""
        if not self._ready or self.target is None:
            self.reset(state)
        torque = (
            self.stiffness * (self.target - state.position)
            + self.damping * (self.velocity - state.velocity)
            + self.feedforward
        )
        return NJointAction.Torque(torque)
