"""Controllers and the command API: portable between simulation and hardware.

This package imports only :mod:`jointlab.robots`, :mod:`jointlab.interface` and
:mod:`jointlab.errors` (plus numpy, scipy and ruckig) — never ``jointlab.sim`` or
``jointlab.hardware`` — so the same controller runs on a ``SimRobot`` and a ``SerialRobot``.

* :func:`run` — the one control loop; :class:`RunSummary`.
* :class:`Commander` — Player/BB commands (set_position, set_velocity, follow_trajectory,
  home, hold, stop...), command ids and feedback events.
* :class:`Trajectory`, :class:`Waypoint`, :func:`from_milliseconds` — waypoint trajectories.
* :class:`MotionLimits`, :func:`plan_move`, :func:`plan_stop` — jerk-limited ruckig motion.
* :func:`enforce`, :class:`SafetyLayer`, :class:`DynamicLimitsCheckMode` — the safety layer.
* :class:`JointPD`, :class:`JointImpedance`, :class:`GravityCompensation`,
  :class:`CartesianTarget`, :func:`solve_ik` — controllers; :class:`Sum`,
  :func:`with_feedforward` — composition.
"""

from jointlab.controllers.base import (
    Controller,
    FunctionController,
    SafeController,
    Sum,
    add_actions,
    with_feedforward,
)
from jointlab.controllers.commander import Commander
from jointlab.controllers.commands import Tolerances
from jointlab.controllers.dynamics import GRAVITY, DynamicsModel, GravityCompensation
from jointlab.controllers.events import (
    CommandEvent,
    CommandEventKind,
    CommandHandle,
    CommandStatus,
)
from jointlab.controllers.ik import CartesianTarget, IKResult, solve_ik
from jointlab.controllers.loop import RunSummary, run
from jointlab.controllers.motion import (
    MotionLimits,
    plan_move,
    plan_stop,
    plan_velocity,
    ruckig_segment,
    stopping_distance,
)
from jointlab.controllers.pd import JointImpedance, JointPD
from jointlab.controllers.polynomial import PiecewisePolynomial
from jointlab.controllers.safety import (
    DynamicLimitsCheckMode,
    SafetyEvent,
    SafetyLayer,
    SafetyLimits,
    SafetyMemory,
    SafetyPolicy,
    SafetyResult,
    enforce,
)
from jointlab.controllers.timing import time_waypoints
from jointlab.controllers.trajectory import Trajectory, Waypoint, from_milliseconds

__all__ = [
    "GRAVITY",
    "CartesianTarget",
    "CommandEvent",
    "CommandEventKind",
    "CommandHandle",
    "CommandStatus",
    "Commander",
    "Controller",
    "DynamicLimitsCheckMode",
    "DynamicsModel",
    "FunctionController",
    "GravityCompensation",
    "IKResult",
    "JointImpedance",
    "JointPD",
    "MotionLimits",
    "PiecewisePolynomial",
    "RunSummary",
    "SafeController",
    "SafetyEvent",
    "SafetyLayer",
    "SafetyLimits",
    "SafetyMemory",
    "SafetyPolicy",
    "SafetyResult",
    "Sum",
    "Tolerances",
    "Trajectory",
    "Waypoint",
    "add_actions",
    "enforce",
    "from_milliseconds",
    "plan_move",
    "plan_stop",
    "plan_velocity",
    "ruckig_segment",
    "run",
    "solve_ik",
    "stopping_distance",
    "time_waypoints",
    "with_feedforward",
]
