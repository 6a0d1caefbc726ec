"""The hold action every backend puts in force when it is armed: arming never moves a joint.

``hold_action(description, q)`` is ``NJointAction.TorqueAndPosition(g(q), q)``: the present
position as the PD target (the description's default gains, zero target velocity) plus the
gravity torque at that position as feed-forward, clamped to the effort limits. A backend makes
it the action in force *before* torque is enabled (``Robot.arm``), so a robot under gravity
neither falls nor jumps when it is armed, whichever caller arms it and in whatever order.
The gravity model is the description's own rigid-body model
(:class:`jointlab.robots.dynamics.DynamicsModel`), built once per description.
"""

from __future__ import annotations

import numpy as np

from jointlab.interface import NJointAction
from jointlab.robots.description import RobotDescription
from jointlab.robots.dynamics import DynamicsModel

__all__ = ["hold_action"]

#: id(description) -> (description, its model); the description is kept so the id stays its.
_MODELS: dict[int, tuple[RobotDescription, DynamicsModel]] = {}
_MAX_MODELS = 64


def _model(description: RobotDescription) -> DynamicsModel:
    entry = _MODELS.get(id(description))
    if entry is None or entry[0] is not description:
        if len(_MODELS) >= _MAX_MODELS:
            _MODELS.clear()
        entry = (description, DynamicsModel(description))
        _MODELS[id(description)] = entry
    return entry[1]


def hold_action(description: RobotDescription, position: np.ndarray) -> NJointAction:
    """The action that holds ``description``'s joints at ``position`` against gravity.

    Args:
        description: The robot.
        position: Present joint positions, rad or m, shape ``(dof,)``.

    Returns:
        ``TorqueAndPosition(clip(g(position), ±effort), position)`` with the default gains.
    """
    q = np.array(position, dtype=np.float64, copy=True)
    effort = description.effort_limit
    gravity = np.clip(_model(description).gravity_torque(q), -effort, effort)
    return NJointAction.TorqueAndPosition(gravity, q)
