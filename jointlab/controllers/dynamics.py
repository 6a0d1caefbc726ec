"""Gravity compensation as a controller (the model: an argument, numpy's by default).

* :class:`GravityCompensation` — a controller returning ``Torque(gravity compensation)``,
  composable with any other controller (see :func:`jointlab.controllers.base.with_feedforward`).

:class:`DynamicsModel` and :data:`GRAVITY` are re-exported here for existing imports.
"""

from __future__ import annotations

from typing import Any

from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.description import RobotDescription
from jointlab.robots.dynamics import GRAVITY, DynamicsModel

__all__ = ["GRAVITY", "DynamicsModel", "GravityCompensation"]


class GravityCompensation:
    """Controller: torque that cancels gravity at the measured position (PD disabled).

    Add it to another controller's torque with
    :func:`jointlab.controllers.base.with_feedforward` or :class:`~jointlab.controllers.base.Sum`.

    Args:
        description: The robot.
        gravity: Gravity in the world frame, m/s².
        scale: Factor on the compensation (1 = full), e.g. to test robustness to mass errors.
        model: The rigid-body model (methods of :class:`DynamicsModel`); None: the numpy
            :class:`DynamicsModel` of ``description`` under ``gravity``. Pass
            ``robot.dynamics_model()`` for the backend's fastest (Bullet's on PyBullet).
    """

    def __init__(
        self,
        description: RobotDescription,
        gravity: Any = GRAVITY,
        scale: float = 1.0,
        model: Any = None,
    ) -> None:
        self.model = DynamicsModel(description, gravity) if model is None else model
        self.scale = float(scale)

    def reset(self, state: ArrayState) -> None:
        """Nothing to prepare: the compensation depends on the measured position only."""

    def compute(self, state: ArrayState) -> NJointAction:
        """``Torque(scale * gravity_torque(state.position))``."""
        return NJointAction.Torque(self.scale * self.model.gravity_torque(state.position))
