"""Gravity compensation as a controller (the model: ``robots.dynamics.rigid_body_model``).

* :class:`GravityCompensation` — a controller returning ``Torque(gravity compensation)``,
  composable with any other controller (see :func:`jointlab.controllers.base.with_feedforward`).

:class:`DynamicsModel` and :data:`GRAVITY` are re-exported here for existing imports.
"""

from __future__ import annotations

from typing import Any

from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.description import RobotDescription
from jointlab.robots.dynamics import GRAVITY, DynamicsModel, rigid_body_model

__all__ = ["GRAVITY", "DynamicsModel", "GravityCompensation"]


class GravityCompensation:
    """Controller: torque that cancels gravity at the measured position (PD disabled).

    Add it to another controller's torque with
    :func:`jointlab.controllers.base.with_feedforward` or :class:`~jointlab.controllers.base.Sum`.

    Args:
        description: The robot.
        gravity: Gravity in the world frame, m/s².
        scale: Factor on the compensation (1 = full), e.g. to test robustness to mass errors.
    """

    def __init__(
        self, description: RobotDescription, gravity: Any = GRAVITY, scale: float = 1.0
    ) -> None:
        self.model = rigid_body_model(description, gravity)
        self.scale = float(scale)

    def reset(self, state: ArrayState) -> None:
        """Nothing to prepare: the compensation depends on the measured position only."""

    def compute(self, state: ArrayState) -> NJointAction:
        """``Torque(scale * gravity_torque(state.position))``."""
        return NJointAction.Torque(self.scale * self.model.gravity_torque(state.position))
