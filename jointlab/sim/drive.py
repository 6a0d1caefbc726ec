"""The per-physics-step torque loop of a simulated robot.

:class:`TorqueLoop` holds everything the loop needs, derived once per action, per power or
brake change and per episode, so that one physics step is::

    cmd = c - kp*q - kd*qd                  # c = torque + kp*position + kd*velocity
    cmd = delay.push(cmd)                   # only if some actuator has latency
    tau = clip(cmd, lo(qd), hi(qd))         # actuator model (jointlab.sim.actuators)
    total = friction(tau, qd) + coupling    # only if present
    setJointMotorControlArray(TORQUE_CONTROL, total); stepSimulation(); getJointStates()

where ``c``, ``kp`` and ``kd`` are zero on joints that are unpowered, braked, disarmed or
dependent. With the drive off (unpowered, disarmed or a zero action) ``tau`` is exactly 0.
"""

from __future__ import annotations

import numpy as np
import pybullet

from jointlab.interface import NJointAction
from jointlab.sim.actuators import ActuatorArray, DelayLine
from jointlab.sim.body import RobotBody
from jointlab.sim.randomization import EpisodeParameters

try:  # the clip ufunc itself: np.clip adds a Python wrapper that costs ~1 µs per call
    from numpy._core.umath import clip as _clip
except ImportError:  # numpy < 2
    from numpy.core.umath import clip as _clip  # type: ignore[no-redef]

__all__ = ["TorqueLoop"]

#: Coulomb friction's braking stiffness, as a fraction of (joint inertia / dt).
FRICTION_STIFFNESS = 0.5


class TorqueLoop:
    """Torque computation and stepping for one :class:`RobotBody` (see the module docstring).

    Attributes ``q``, ``qd`` (state after the last physics step), ``qd_prev`` (before it),
    ``tau`` (actuator torque of the last step, after clamps) and ``cmd`` (the command the
    actuator model received) are fresh arrays every step and never modified in place.
    """

    def __init__(self, body: RobotBody, dt: float) -> None:
        self.body = body
        self.dt = dt
        description = body.description
        dof = description.dof
        self.zeros = np.zeros(dof)
        self.zeros.flags.writeable = False
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
        self._action: NJointAction | None = None
        self._active = np.zeros(dof, dtype=bool)

    # ---------------------------------------------------------------- configuration
    def set_episode(self, episode: EpisodeParameters) -> None:
        """Apply one episode's masses, damping, friction, latency and default gains."""
        description = self.body.description
        self.body.set_mass_scale(episode.mass_scale)
        self.body.set_damping(np.asarray(description.damping) * episode.damping_scale)
        inertia = self.body.tune(self.dt)
        self.static = np.asarray(description.static_friction) * episode.friction_scale
        self.neg_stiffness = -FRICTION_STIFFNESS * inertia / self.dt
        self.friction = bool(np.any(self.static > 0))
        delay = self.actuators.delay + episode.latency
        self.delay = DelayLine(delay) if np.any(delay > 0) else None
        self.default_kp = np.asarray(description.default_kp) * episode.kp_scale
        self.default_kd = np.asarray(description.default_kd) * episode.kd_scale
        if self._action is not None:
            self.set_action(self._action, self._active)
        self._build_law()

    def set_action(self, action: NJointAction, active: np.ndarray) -> None:
        """Derive the loop's arrays from ``action`` on the ``active`` joints (once per action).

        ``active`` marks joints whose motor may produce torque (powered, armed, unbraked);
        dependent joints are never driven.
        """
        self._action = action
        self._active = active
        mask = active & self.independent
        self.drive_on = bool(mask.any()) and not action.is_zero
        if not self.drive_on:
            self.c = self.kp = self.kd = self.zeros
            self._build_law()
            return
        resolved = action.resolve(self.default_kp, self.default_kd)
        self.kp = np.where(mask, resolved.kp, 0.0)
        self.kd = np.where(mask, resolved.kd, 0.0)
        torque = resolved.torque + resolved.kp * resolved.position + resolved.kd * resolved.velocity
        self.c = np.where(mask, torque, 0.0)
        self._build_law()

    def sync(self) -> None:
        """Re-read the state from PyBullet (after a reset) and forget queued commands."""
        self.q, self.qd = self.body.read()
        self.qd_prev = self.qd
        self.tau = self.cmd = self.zeros
        self.forces = []
        if self.delay is not None:
            self.delay.clear()

    # ---------------------------------------------------------------- the law
    def _build_law(self) -> None:
        """Bind the arrays of the current configuration into ``self.law`` (no lookups per step)."""
        drive_on, c, kp, kd = self.drive_on, self.c, self.kp, self.kd
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

    # ---------------------------------------------------------------- stepping
    def push_forces(self) -> None:
        """Apply the queued external forces for one physics step."""
        body = self.body
        for entry in self.forces:
            index, force, point, _ = entry
            pybullet.applyExternalForce(
                body.body_id, index, force, point or body.centre_of_mass(index),
                pybullet.WORLD_FRAME, physicsClientId=body.client_id,
            )  # fmt: skip
            entry[3] -= 1
        self.forces = [entry for entry in self.forces if entry[3] > 0]

    def before_physics(self) -> None:
        """Send this physics step's torque (the world runs ``stepSimulation``)."""
        if self.forces:
            self.push_forces()
        body = self.body
        pybullet.setJointMotorControlArray(
            body.body_id, body.indices, pybullet.TORQUE_CONTROL,
            forces=self.torque(self.q, self.qd).tolist(), physicsClientId=body.client_id,
        )  # fmt: skip

    def after_physics(self) -> None:
        """Read the state the physics step produced."""
        self.qd_prev = self.qd
        self.q, self.qd = self.body.read()

    def run(self, steps: int) -> None:
        """Run ``steps`` physics steps of a robot alone in its world (the fast path).

        Exactly ``before_physics``; ``stepSimulation``; ``after_physics`` per step, with the
        PyBullet functions and arrays bound to locals.
        """
        body = self.body
        body_id, indices, cid = body.body_id, body.indices, body.client_id
        send = pybullet.setJointMotorControlArray
        simulate = pybullet.stepSimulation
        states = pybullet.getJointStates
        mode = pybullet.TORQUE_CONTROL
        array = np.array
        law = self.law
        q, qd = self.q, self.qd
        qd_prev, tau, cmd = self.qd_prev, self.tau, self.cmd
        for _ in range(steps):
            if self.forces:
                self.push_forces()
            total, tau, cmd = law(q, qd)
            send(body_id, indices, mode, forces=total.tolist(), physicsClientId=cid)
            simulate(physicsClientId=cid)
            positions, velocities, _, _ = zip(
                *states(body_id, indices, physicsClientId=cid), strict=True
            )
            qd_prev = qd
            q = array(positions)
            qd = array(velocities)
        self.q, self.qd, self.qd_prev, self.tau, self.cmd = q, qd, qd_prev, tau, cmd
        body.world.steps += steps
