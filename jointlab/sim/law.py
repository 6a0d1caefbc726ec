"""The NJointAction law of a simulated robot, engine-neutral: what each physics step computes.

:class:`DriveLoop` holds everything the law needs, derived once per action, per power or
brake change and per episode, so that one physics step is::

    cmd = c - kp*q - kd*qd                  # c = torque + kp*position + kd*velocity
    cmd = delay.push(cmd)                   # only if some actuator has latency
    tau = clip(cmd, lo(qd), hi(qd))         # actuator model (jointlab.sim.actuators)
    total = friction(tau, qd) + coupling    # only where the engine has no native model

where ``c``, ``kp`` and ``kd`` are zero on joints that are unpowered, braked, disarmed or
dependent. With the drive off (unpowered, disarmed or a zero action) ``tau`` is exactly 0.

Each engine subclasses it with its stepping: PyBullet's
:class:`jointlab.sim.pybullet.loop.TorqueLoop`
evaluates ``law`` every physics step; the MuJoCo loop (:mod:`jointlab.sim.mujoco.loop`) hands
the same arrays to MuJoCo's own actuators when no delay line is needed. The body a loop
drives offers ``description``, ``read()``, ``set_mass_scale``, ``set_damping``, ``tune`` and
``soft_coupling`` (see :class:`jointlab.sim.pybullet.body.RobotBody`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jointlab.interface import NJointAction
from jointlab.sim.actuators import ActuatorArray, DelayLine
from jointlab.sim.randomization import EpisodeParameters

try:  # the clip ufunc itself: np.clip adds a Python wrapper that costs ~1 µs per call
    from numpy._core.umath import clip as _clip
except ImportError:  # numpy < 2
    from numpy.core.umath import clip as _clip  # type: ignore[no-redef]

__all__ = ["FRICTION_STIFFNESS", "DriveLoop"]

#: Coulomb friction's braking stiffness, as a fraction of (joint inertia / dt).
FRICTION_STIFFNESS = 0.5


class DriveLoop:
    """The law's configuration and the law itself (see the module docstring).

    Attributes ``q``, ``qd`` (state after the last physics step), ``qd_prev`` (before it),
    ``tau`` (actuator torque of the last step, after clamps) and ``cmd`` (the command the
    actuator model received) are fresh arrays every step and never modified in place.
    """

    #: True when the law adds Coulomb friction as a torque (an engine without a native model).
    explicit_friction = True

    def __init__(self, body: Any, dt: float) -> None:
        self.body = body
        self.dt = dt
        description = body.description
        dof = description.dof
        self.zeros = np.zeros(dof)
        self.zeros.setflags(write=False)
        self.actuators = ActuatorArray.from_description(description)
        self.effort = self.actuators.effort
        self.neg_effort = -self.effort
        self.stall = self.actuators.stall
        self.neg_stall = -self.stall
        self.slope = self.actuators.slope
        self.speed_dependent = self.actuators.speed_dependent
        self.current_clip = bool(
            np.any(self.effort * self.actuators.amps_per_torque > self.actuators.max_current)
        )
        self.independent = ~description.dependent
        self.default_kp = np.array(description.default_kp)
        self.default_kd = np.array(description.default_kd)
        self.static = np.zeros(dof)
        self.neg_stiffness = np.zeros(dof)
        self.friction = False
        self.delay: DelayLine | None = None
        self.forces: list[list] = []
        self.q, self.qd = body.read()
        self.qd_prev = self.qd
        self.tau = self.cmd = self.zeros
        self.drive_on = False
        self.c = self.kp = self.kd = self.zeros
        #: ``[drive_on, c, kp, kd]``: what the law reads at every step (set per action).
        self.params: list[Any] = [False, self.zeros, self.zeros, self.zeros]
        self._action: NJointAction | None = None
        self._active = np.zeros(dof, dtype=bool)
        self._mask = self._active
        self._mask_any = self._mask_all = False

    # ---------------------------------------------------------------- configuration
    def set_episode(self, episode: EpisodeParameters) -> None:
        """Apply one episode's masses, damping, friction, latency and default gains."""
        description = self.body.description
        self.body.set_mass_scale(episode.mass_scale)
        self.body.set_damping(np.asarray(description.damping) * episode.damping_scale)
        inertia = self.body.tune(self.dt)
        self.static = np.asarray(description.static_friction) * episode.friction_scale
        self.neg_stiffness = -FRICTION_STIFFNESS * inertia / self.dt
        self.friction = self._friction_in_law(self.static)
        delay = self.actuators.delay + episode.latency
        self.delay = DelayLine(delay) if np.any(delay > 0) else None
        self.default_kp = np.asarray(description.default_kp) * episode.kp_scale
        self.default_kd = np.asarray(description.default_kd) * episode.kd_scale
        if self._action is not None:
            self.set_action(self._action, self._active)
        self._build_law()

    def _friction_in_law(self, static: np.ndarray) -> bool:
        """Whether the law adds Coulomb friction ``static`` (N·m or N, ``(dof,)``)."""
        return bool(np.any(static > 0))

    def set_action(self, action: NJointAction, active: np.ndarray) -> None:
        """Derive the loop's arrays from ``action`` on the ``active`` joints (once per action).

        ``active`` marks joints whose motor may produce torque (powered, armed, unbraked);
        dependent joints are never driven. The caller replaces ``active`` rather than
        modifying it (the mask derived from it is kept while it is the same array). A plain
        ``NJointAction.Position(q)`` on a fully driven robot costs one multiplication; the
        law itself is not rebuilt (it reads :attr:`params`).
        """
        self._action = action
        if active is not self._active:
            self._active = active
            self._mask = mask = active & self.independent
            self._mask_any, self._mask_all = bool(mask.any()), bool(mask.all())
        drive_on = self._mask_any and not action.is_zero
        if not drive_on:
            c = kp = kd = self.zeros
        elif action._plain and self._mask_all:
            kp, kd = self.default_kp, self.default_kd
            c = kp * action.position
        else:
            # NJointAction.resolve's rules, fused with the drive mask: default gains where
            # NaN, no PD where the position is NaN, a NaN velocity is 0.
            mask = self._mask
            on = mask & action.pd_mask
            isnan, where = np.isnan, np.where
            kp = where(
                on, where(isnan(action.position_kp), self.default_kp, action.position_kp), 0.0
            )
            kd = where(
                on, where(isnan(action.position_kd), self.default_kd, action.position_kd), 0.0
            )
            position = where(on, action.position, 0.0)
            velocity = where(on & ~isnan(action.velocity), action.velocity, 0.0)
            c = where(mask, action.torque, 0.0) + kp * position + kd * velocity
        self.drive_on, self.c, self.kp, self.kd = drive_on, c, kp, kd
        self.params[:] = drive_on, c, kp, kd

    def sync(self) -> None:
        """Re-read the state from the engine (after a reset) and forget queued commands."""
        self.q, self.qd = self.body.read()
        self.qd_prev = self.qd
        self.tau = self.cmd = self.zeros
        self.forces = []
        if self.delay is not None:
            self.delay.clear()

    # ---------------------------------------------------------------- the law
    def _build_law(self) -> None:
        """Bind the current configuration into ``self.law`` (per episode, not per action)."""
        params = self.params
        push = None if self.delay is None else self.delay.push
        speed_dependent, slope = self.speed_dependent, self.slope
        stall, neg_stall, effort, neg_effort = (
            self.stall,
            self.neg_stall,
            self.effort,
            self.neg_effort,
        )
        friction, static, neg_stiffness = self.friction, self.static, self.neg_stiffness
        soft = self.body.soft_coupling
        zeros = self.zeros
        clip = _clip

        def law(q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            drive_on, c, kp, kd = params
            if drive_on:
                cmd = c - kp * q - kd * qd
                if push is not None:
                    cmd = push(cmd)
                if speed_dependent:
                    drop = slope * qd
                    tau = clip(clip(cmd, neg_stall - drop, stall - drop), neg_effort, effort)
                else:
                    tau = clip(cmd, neg_effort, effort)
            else:
                cmd = tau = zeros
                if push is not None:
                    push(zeros)
            total = tau
            if friction:
                total = clip(neg_stiffness * qd, tau - static, tau + static)
            if soft is not None:
                total = total + soft.torque(q, qd)
            return total, tau, cmd

        self.law = law

    def torque(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Total joint torque to send for state ``q``, ``qd``; sets ``tau`` and ``cmd``."""
        total, self.tau, self.cmd = self.law(q, qd)
        return total

    def current(self, tau: np.ndarray) -> np.ndarray:
        """Motor currents in A for actuator torque ``tau``."""
        current = tau * self.actuators.amps_per_torque
        if self.current_clip:
            limit = self.actuators.max_current
            current = _clip(current, -limit, limit)
        return current
