"""Per-joint setpoint generators of the device firmware: Player POS, SPEED and CURRENT moves.

A device executes NJOINT as sent. The Player commands (docs/protocol.md section 9) need a
setpoint per joint instead, generated tick by tick:

* **move** (POS, MULTI_POS, HOME): a trapezoidal velocity profile to the target at the
  configured speed and acceleration, then a hold at the target;
* **run** (SPEED, MULTI_SPEED, STOP DECELERATE): ramp to a constant velocity at the
  configured acceleration, stopping at the joint limits;
* **torque** (CURRENT, MULTI_CURRENT): a constant feed-forward torque, PD off.

The setpoint ``(p, v)`` is tracked with the description's default PD gains through an
ordinary :class:`~jointlab.interface.NJointAction`, so the drive law is the same as for
NJOINT. Joints without a setpoint keep the last NJOINT's values. Everything is vectorised
over the joints.
"""

from __future__ import annotations

import numpy as np

from jointlab.interface import NJointAction
from jointlab.robots.description import RobotDescription

__all__ = ["Setpoints"]

BASE, MOVE, RUN, TORQUE = 0, 1, 2, 3


class Setpoints:
    """Setpoint state of every joint (see the module docstring).

    Args:
        description: The robot (limits, dof).
        dt: Tick in seconds.
    """

    def __init__(self, description: RobotDescription, dt: float) -> None:
        dof = description.dof
        self.dt = float(dt)
        self.lower = np.array(description.lower)
        self.upper = np.array(description.upper)
        #: BASE, MOVE, RUN or TORQUE per joint, shape ``(dof,)``.
        self.mode = np.zeros(dof, dtype=np.int8)
        #: Setpoint position (rad or m) and velocity (rad/s or m/s), shape ``(dof,)``.
        self.p = np.zeros(dof)
        self.v = np.zeros(dof)
        #: Target position (MOVE) or velocity (RUN), shape ``(dof,)``.
        self.target = np.zeros(dof)
        #: Speed and acceleration bounds of the profile, shape ``(dof,)``.
        self.speed = np.ones(dof)
        self.accel = np.ones(dof)
        #: Feed-forward torque of TORQUE joints, N·m or N, shape ``(dof,)``.
        self.effort = np.zeros(dof)
        self.active = False

    def clear(self) -> None:
        """Every joint back to the base action (an NJOINT replaced everything)."""
        self.mode[:] = BASE
        self.active = False

    def _start(self, mask: np.ndarray, q: np.ndarray, qd: np.ndarray) -> None:
        fresh = mask & ~np.isin(self.mode, (MOVE, RUN))
        self.p = np.where(fresh, q, self.p)
        self.v = np.where(fresh, qd, self.v)
        self.active = True

    def move(
        self,
        mask: np.ndarray,
        target: np.ndarray,
        q: np.ndarray,
        qd: np.ndarray,
        speed: np.ndarray,
        accel: np.ndarray,
    ) -> None:
        """Start moves of the ``mask`` joints to ``target`` (rad or m) at ``speed``/``accel``."""
        self._start(mask, q, qd)
        self.mode[mask] = MOVE
        self.target = np.where(mask, target, self.target)
        self.speed = np.where(mask, speed, self.speed)
        self.accel = np.where(mask, accel, self.accel)

    def run(
        self, mask: np.ndarray, speeds: np.ndarray, q: np.ndarray, qd: np.ndarray, accel: np.ndarray
    ) -> None:
        """Ramp the ``mask`` joints to constant ``speeds`` (rad/s or m/s) at ``accel``."""
        self._start(mask, q, qd)
        self.mode[mask] = RUN
        self.target = np.where(mask, speeds, self.target)
        self.accel = np.where(mask, accel, self.accel)

    def torque(self, mask: np.ndarray, effort: np.ndarray, q: np.ndarray, qd: np.ndarray) -> None:
        """Drive the ``mask`` joints with a constant ``effort`` (N·m or N), PD off."""
        self.p = np.where(mask, q, self.p)
        self.v = np.where(mask, qd, self.v)
        self.mode[mask] = TORQUE
        self.effort = np.where(mask, effort, self.effort)
        self.active = True

    def advance(self) -> None:
        """Move the setpoints of MOVE and RUN joints on by one tick."""
        dt, mode = self.dt, self.mode
        moving, running = mode == MOVE, mode == RUN
        p, v, accel = self.p, self.v, self.accel
        distance = self.target - p
        reach = np.minimum(self.speed, np.sqrt(2.0 * accel * np.abs(distance)))
        wanted = np.where(moving, np.sign(distance) * reach, np.where(running, self.target, v))
        step = accel * dt
        v_new = v + np.clip(wanted - v, -step, step)
        p_new = p + v_new * dt
        arrived = moving & ((np.sign(self.target - p_new) != np.sign(distance)) | (distance == 0))
        p_new = np.where(arrived, self.target, p_new)
        v_new = np.where(arrived, 0.0, v_new)
        at_limit = running & ((p_new <= self.lower) | (p_new >= self.upper))
        p_new = np.where(at_limit, np.clip(p_new, self.lower, self.upper), p_new)
        v_new = np.where(at_limit, 0.0, v_new)
        profiled = moving | running
        self.p = np.where(profiled, p_new, p)
        self.v = np.where(profiled, v_new, v)

    def action(self, base: NJointAction, q: np.ndarray, qd: np.ndarray) -> NJointAction:
        """Advance one tick and return the action: ``base`` where no setpoint runs."""
        self.advance()
        mode = self.mode
        keep = mode == BASE
        profiled = (mode == MOVE) | (mode == RUN)
        nan = np.nan
        return NJointAction(
            np.where(keep, base.torque, np.where(mode == TORQUE, self.effort, 0.0)),
            np.where(keep, base.position, np.where(profiled, self.p, nan)),
            np.where(keep, base.position_kp, nan),
            np.where(keep, base.position_kd, nan),
            np.where(keep, base.velocity, np.where(profiled, self.v, nan)),
        )
