"""The NJointAction law on MuJoCo: native actuators where possible, Python where not.

:class:`MujocoLoop` derives the law's arrays exactly as PyBullet's loop does
(:class:`jointlab.sim.law.DriveLoop`) and then runs them in one of two ways:

* **native** (no delay line): the law is MuJoCo's own actuators (:mod:`.mjcf`). Once per
  action it sets, per joint, ``ctrl = c`` and ``biasprm = (0, -kp, -kd)`` on the drive
  actuator (``force = ctrl + b1*q + b2*qd = c - kp*q - kd*qd``) and the matching values on
  the ``dc_high``/``dc_low`` actuators of DC motors; the effort clamp is the joint's
  ``actuatorfrcrange``, Coulomb friction ``frictionloss``, damping ``damping``. A control
  period is then ``mj_step(model, data, k)`` in C. ``tau`` is ``qfrc_actuator`` (computed
  from the state at the start of the last physics step, after the clamps) and ``cmd`` the
  drive actuator's force.
* **Python** (some ``motor.delay`` or randomised latency > 0): MuJoCo cannot delay a
  state-dependent command, so every physics step evaluates the law in Python
  (``DriveLoop.law``: command, delay line, actuator model) and sends the torque as the drive
  actuator's ``ctrl`` with zero bias; friction and damping stay native.

External forces (``apply_external_force``) are ``xfrc_applied`` on the link's body, set
every physics step while they last (the period is then stepped one physics step at a time).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from jointlab.interface import NJointAction
from jointlab.sim.law import DriveLoop
from jointlab.sim.randomization import EpisodeParameters

if TYPE_CHECKING:
    from jointlab.sim.mujoco.body import MujocoBody

__all__ = ["MujocoLoop"]

#: ``law(q, qd) -> (total, tau, cmd)``, see :class:`jointlab.sim.law.DriveLoop`.
Law = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


class MujocoLoop(DriveLoop):
    """The law of one :class:`~jointlab.sim.mujoco.body.MujocoBody` (module docstring)."""

    explicit_friction = False

    def __init__(self, body: MujocoBody, dt: float) -> None:
        self._law: Law | None = None
        super().__init__(body, dt)
        self.body: MujocoBody = body
        self._step = body._mujoco.mj_step
        #: True while the law runs as MuJoCo actuators (no delay line).
        self.native = True
        self._pushing = False
        #: The ``(kp, kd)`` arrays last written into the actuators' bias (None: rewrite).
        self._bias_gains: tuple[np.ndarray, np.ndarray] | None = None
        self._dc_constants()
        self._push()

    # ---------------------------------------------------------------- configuration
    def _friction_in_law(self, static: np.ndarray) -> bool:
        self.body.set_friction(static)
        return False

    def set_episode(self, episode: EpisodeParameters) -> None:
        """Apply one episode's parameters (see ``DriveLoop``) and choose native or Python."""
        super().set_episode(episode)
        self._push()

    def set_action(self, action: NJointAction, active: np.ndarray) -> None:
        """Derive the law's arrays (``DriveLoop``) and hand them to MuJoCo's actuators."""
        super().set_action(action, active)
        self._push()

    def rebind(self) -> None:
        """Hand the law to the recompiled model again (its parameters were reset)."""
        self._bias_gains = None
        self._dc_constants()
        self._push()

    def _dc_constants(self) -> None:
        """Matrices from the law's joint arrays to the actuator block (drives, highs, lows).

        ``ctrl = c @ to_ctrl + ctrl_offset``, ``b1 = kp @ to_bias``, ``b2 = kd @ to_bias +
        b2_offset``: the drive gets ``(c, -kp, -kd)``; a DC motor's ``dc_high`` gets
        ``(S - c, kp, kd - s)`` and its ``dc_low`` ``(-S - c, kp, kd - s)`` (module docstring
        of :mod:`.mjcf`). Three small matrix products instead of a dozen array operations.
        """
        body = self.body
        joints, dof = body.dc, self.zeros.size
        select = np.zeros((dof, joints.size))
        select[joints, np.arange(joints.size)] = 1.0
        identity = np.eye(dof)
        self._to_ctrl = np.hstack((identity, -select, -select))
        self._to_bias = np.hstack((-identity, select, select))
        stall, slope = self.stall[joints], self.slope[joints]
        self._ctrl_offset = np.concatenate((np.zeros(dof), stall, -stall))
        self._b2_offset = np.concatenate((np.zeros(dof), -slope, -slope))
        self._block_zeros = np.zeros(dof + 2 * joints.size)
        #: The actuators' ``ctrl`` entries (a view of MuJoCo's array; rebuilt by ``rebind``).
        self._ctrl = body.data.ctrl[body.actuator_block]

    def _push(self) -> None:
        """Write the law's arrays into the robot's actuators (``ctrl`` and ``biasprm``)."""
        body = self.body
        block = body.actuator_block
        self.native = self.delay is None
        if not (self.native and self.drive_on):
            self._ctrl[:] = self._block_zeros
            body.model.actuator_biasprm[block, 1:3] = 0.0
            self._bias_gains = None
            return
        np.add(self.c.dot(self._to_ctrl), self._ctrl_offset, out=self._ctrl)
        gains = self._bias_gains
        if gains is None or gains[0] is not self.kp or gains[1] is not self.kd:
            # New gain arrays (the loop replaces them, never writes into them): a plain
            # Position action after another keeps the default gains and skips this.
            to_bias = self._to_bias
            bias = body.model.actuator_biasprm
            bias[block, 1] = self.kp @ to_bias
            bias[block, 2] = self.kd @ to_bias + self._b2_offset
            self._bias_gains = (self.kp, self.kd)

    # ---------------------------------------------------------------- the Python law
    @property
    def law(self) -> Law:  # type: ignore[override]
        """The Python law (built on first use: the native path never evaluates it)."""
        if self._law is None:
            DriveLoop._build_law(self)
        return self._law

    @law.setter
    def law(self, value: Law | None) -> None:
        self._law = value

    def _build_law(self) -> None:
        self._law = None

    # ---------------------------------------------------------------- stepping
    def before_physics(self) -> None:
        """Prepare this physics step (the world runs ``mj_step``)."""
        if self.forces or self._pushing:
            self._apply_forces()
        if not self.native:
            self.body.data.ctrl[self.body.drive] = self.torque(self.q, self.qd)

    def _apply_forces(self) -> None:
        """This step's external forces; zero after the last one ran out."""
        if self.forces:
            self._push_forces()
        else:
            self.body.data.xfrc_applied[self.body.link_bodies] = 0.0
            self._pushing = False

    def _push_forces(self) -> None:
        """Set ``xfrc_applied`` for this physics step from the queued external forces."""
        body = self.body
        data = body.data
        xfrc = data.xfrc_applied
        xfrc[body.link_bodies] = 0.0
        posed = False
        for entry in self.forces:
            ref, force, point, _ = entry
            force_v = np.asarray(force, dtype=np.float64)
            xfrc[ref.body, :3] += force_v
            if point is not None or ref.site is not None:
                if not posed:  # mj_step leaves the poses of the last step's start
                    body._mujoco.mj_kinematics(body.model, data)
                    posed = True
                at = np.asarray(point) if point is not None else data.site_xpos[ref.site]
                xfrc[ref.body, 3:] += np.cross(at - data.xipos[ref.body], force_v)
            entry[3] -= 1
        self.forces = [entry for entry in self.forces if entry[3] > 0]
        self._pushing = True  # zero xfrc_applied before the next step, forces or not

    def after_physics(self) -> None:
        """Read the state (and, natively, the torques) the physics step produced."""
        body = self.body
        data = body.data
        self.qd_prev = self.qd
        self.q, self.qd = data.qpos[body.qpos], data.qvel[body.dofs]
        if self.native:
            self.tau = data.qfrc_actuator[body.dofs]
            self.cmd = data.actuator_force[body.drive]

    def sync(self) -> None:
        """Re-read the state after a reset; forget queued commands and forces."""
        super().sync()
        self._pushing = False

    def run(self, steps: int) -> None:
        """Run ``steps`` physics steps of a robot alone in its world.

        Natively and without pushes: two ``mj_step`` calls (``steps - 1``, then one, to keep
        the velocity before the last step for the acceleration). Otherwise one physics step
        at a time.
        """
        body = self.body
        world = body.world
        if self.native and not (self.forces or self._pushing) and world._viewer is None:
            model, data = body.model, body.data
            if steps > 1:
                self._step(model, data, steps - 1)
            dofs = body.dofs
            qd_prev = data.qvel[dofs]
            self._step(model, data)
            self.q, self.qd, self.qd_prev = data.qpos[body.qpos], data.qvel[dofs], qd_prev
            self.tau = data.qfrc_actuator[dofs]
            self.cmd = data.actuator_force[body.drive]
            world.steps += steps
            return
        for _ in range(steps):
            self.before_physics()
            self._step(body.model, body.data)
            world.steps += 1
            self.after_physics()
            world._sync_viewer()
