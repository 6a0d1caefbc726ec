"""PyBullet's per-physics-step torque loop: the law of :mod:`jointlab.sim.law`, stepped.

:class:`TorqueLoop` adds PyBullet's stepping to the engine-neutral :class:`DriveLoop` (whose
docstring gives the law), so that one physics step is::

    total = law(q, qd)                      # command, delay, actuator model, friction
    setJointMotorControlArray(TORQUE_CONTROL, total); stepSimulation(); getJointStates()
"""

from __future__ import annotations

import numpy as np
import pybullet

from jointlab.sim.law import FRICTION_STIFFNESS, DriveLoop

__all__ = ["FRICTION_STIFFNESS", "TorqueLoop"]


class TorqueLoop(DriveLoop):
    """Torque computation and stepping for one :class:`~jointlab.sim.body.RobotBody`.

    See :class:`~jointlab.sim.law.DriveLoop` for the attributes (``q``, ``qd``, ``tau``...).
    """

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
