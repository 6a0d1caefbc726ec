"""PyBullet's per-physics-step torque loop: the law of :mod:`jointlab.sim.law`, stepped.

:class:`TorqueLoop` adds PyBullet's stepping to the engine-neutral :class:`DriveLoop` (whose
docstring gives the law), so that one physics step is::

    total = law(q, qd)                      # command, delay, actuator model, friction
    total += lift; lift the rest            # linear armatures' weight: a constant joint
                                            # torque, or one force per link turned above
    setJointMotorControlArray(TORQUE_CONTROL, total); stepSimulation(); getJointStates()

PyBullet has no joint armature: the body realises it in the links (see
:mod:`jointlab.sim.pybullet.body`), and on a linear joint that extra mass must not weigh.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet

from jointlab.sim.law import FRICTION_STIFFNESS, DriveLoop
from jointlab.sim.randomization import EpisodeParameters

__all__ = ["FRICTION_STIFFNESS", "TorqueLoop"]


class TorqueLoop(DriveLoop):
    """Torque computation and stepping for one :class:`~jointlab.sim.pybullet.body.RobotBody`.

    See :class:`~jointlab.sim.law.DriveLoop` for the attributes (``q``, ``qd``, ``tau``...).
    """

    def __init__(self, body: Any, dt: float) -> None:
        super().__init__(body, dt)
        #: PyBullet link indices and world forces (N) that cancel the weight of the linear
        #: joints' armature mass (see :mod:`jointlab.sim.pybullet.body`); empty when there is none.
        self.lift_links: list[int] = []
        self.lift_forces: list[tuple[float, float, float]] = []
        #: Constant joint torque that cancels the rest of that weight, or ``None``.
        self.lift_torque: np.ndarray | None = None

    def set_episode(self, episode: EpisodeParameters) -> None:
        """The law's episode, and the forces that keep the armature mass weightless."""
        gravity = self.body.world.gravity
        self.lift_links = [link for _, link, _ in self.body.weightless]
        self.lift_forces = [
            tuple((-armature * float(episode.mass_scale[k]) * gravity).tolist())
            for k, _, armature in self.body.weightless
        ]
        self.lift_torque = None
        for k, armature, transfer in self.body.weightless_torque:
            torque = transfer @ (-armature * float(episode.mass_scale[k]) * gravity)
            self.lift_torque = torque if self.lift_torque is None else self.lift_torque + torque
        if self.lift_torque is not None and not self.lift_torque.any():
            self.lift_torque = None  # e.g. horizontal axes: the weight loads no joint
        super().set_episode(episode)

    def _build_law(self) -> None:
        """The law, plus the constant torque that lifts the armature mass where there is one."""
        super()._build_law()
        lift_torque = getattr(self, "lift_torque", None)
        if lift_torque is not None:
            law = self.law

            def lifted(q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
                total, tau, cmd = law(q, qd)
                return total + lift_torque, tau, cmd

            self.law = lifted
        self.run = self._bound_run()  # type: ignore[method-assign]

    # ---------------------------------------------------------------- stepping
    def lift(self) -> None:
        """Cancel the weight of the linear joints' armature mass for one physics step.

        An upward force ``armature · |g|`` at the link's centre of mass (where the armature
        mass sits), so the mass adds inertia but no load.
        """
        body = self.body
        cid, body_id = body.client_id, body.body_id
        states = pybullet.getLinkStates(body_id, self.lift_links, physicsClientId=cid)
        for link, force, state in zip(self.lift_links, self.lift_forces, states, strict=True):
            pybullet.applyExternalForce(
                body_id, link, force, state[0], pybullet.WORLD_FRAME, physicsClientId=cid
            )

    def push_forces(self) -> None:
        """Apply the queued external forces for one physics step."""
        body = self.body
        for entry in self.forces:
            index, force, point, _ = entry
            pybullet.applyExternalForce(
                body.body_id,
                index,
                force,
                point or body.centre_of_mass(index),
                pybullet.WORLD_FRAME,
                physicsClientId=body.client_id,
            )
            entry[3] -= 1
        self.forces = [entry for entry in self.forces if entry[3] > 0]

    def before_physics(self) -> None:
        """Send this physics step's torque (the world runs ``stepSimulation``)."""
        if self.lift_links:
            self.lift()
        if self.forces:
            self.push_forces()
        body = self.body
        pybullet.setJointMotorControlArray(
            body.body_id,
            body.indices,
            pybullet.TORQUE_CONTROL,
            forces=self.torque(self.q, self.qd).tolist(),
            physicsClientId=body.client_id,
        )

    def after_physics(self) -> None:
        """Read the state the physics step produced."""
        self.qd_prev = self.qd
        self.q, self.qd = self.body.read()

    def run(self, steps: int) -> None:
        """Run ``steps`` physics steps of a robot alone in its world (the fast path).

        Exactly ``before_physics``; ``stepSimulation``; ``after_physics`` per step. Each
        episode's law replaces this method with :meth:`_bound_run`'s function, which has the
        PyBullet functions, ids and the law bound once (a period of one physics step pays
        for no lookups).
        """
        self._bound_run()(steps)

    def _bound_run(self) -> Any:
        """:meth:`run` with everything that changes only per episode bound to locals."""
        loop = self
        body = self.body
        world = body.world
        body_id, indices, cid = body.body_id, body.indices, body.client_id
        send = pybullet.setJointMotorControlArray
        simulate = pybullet.stepSimulation
        states = pybullet.getJointStates
        mode = pybullet.TORQUE_CONTROL
        array = np.array
        law = self.law
        lift = self.lift if self.lift_links else None

        def run(steps: int) -> None:
            q, qd = loop.q, loop.qd
            qd_prev, tau, cmd = loop.qd_prev, loop.tau, loop.cmd
            for _ in range(steps):
                if lift is not None:
                    lift()
                if loop.forces:
                    loop.push_forces()
                total, tau, cmd = law(q, qd)
                send(body_id, indices, mode, forces=total.tolist(), physicsClientId=cid)
                # positional arguments where PyBullet takes them: a keyword costs a dict
                simulate(cid)
                positions, velocities, _, _ = zip(*states(body_id, indices, cid), strict=True)
                qd_prev = qd
                q = array(positions)
                qd = array(velocities)
            loop.q, loop.qd, loop.qd_prev, loop.tau, loop.cmd = q, qd, qd_prev, tau, cmd
            world.steps += steps

        return run
