"""Step several simulated robots together, the torque law evaluated across them in numpy.

A batched environment holds N :class:`~jointlab.sim.SimRobot` of one description, each alone
in its own world. One world holding all N robots saves nothing: measured with 8 arm6 (2-core
machine, 2026-12-01, CPU time per robot and physics step, send + step + read), 8 worlds
16.2-17.8 µs; one world with the robots' collisions filtered apart 21.7-25.2 µs (bit-identical
to 8 worlds); one world with the robots 5 m apart 16.7-17.2 µs (results differ). PyBullet's
step costs the same per body either way, and separate worlds keep every robot bit-identical
to a robot stepped alone.
:class:`BatchStepper` advances all of them by one control period: per physics step the law
of :mod:`jointlab.sim.law` runs once on ``(N, dof)`` arrays instead of N times on ``(dof,)``
ones, the state of every robot is read into one array, and PyBullet is called only for what
it must do per body (send torques, step, read joints). Each robot's loop and reporter are
then updated as :meth:`SimRobot.step` would, so ``read()`` and everything else behave the
same.

Robots it cannot batch (MuJoCo, a delay line, soft couplings, linear armature lifting,
queued external forces, a world shared with other robots) are stepped one by one with
``step()``: the same result, without the saving.
"""

from __future__ import annotations

from array import array as doubles
from collections.abc import Sequence

import numpy as np
import pybullet

from jointlab.errors import ConfigurationError
from jointlab.sim.drive import TorqueLoop
from jointlab.sim.law import _clip
from jointlab.sim.robot import SimRobot

__all__ = ["BatchStepper"]


class BatchStepper:
    """Advance N robots of one description by one control period together.

    Args:
        robots: The robots, same description, ``dt`` and ``control_dt``.
    """

    def __init__(self, robots: Sequence[SimRobot]) -> None:
        self.robots = list(robots)
        if not self.robots:
            raise ConfigurationError("BatchStepper needs at least one robot")
        first = self.robots[0]
        for robot in self.robots[1:]:
            if robot.description is not first.description and (
                robot.description != first.description
            ):
                raise ConfigurationError("BatchStepper robots must share one description")
            if robot.control_dt != first.control_dt or robot.dt != first.dt:
                raise ConfigurationError("BatchStepper robots must share dt and control_dt")
        self.steps_per_period = first._k
        #: Whether ``read()`` reports the simulated joints as they are (no sensor model).
        self._exact = all(robot._reporter.sensors is None for robot in self.robots)
        #: PyBullet body id, joint indices and client id of every robot (fixed for its life),
        #: gathered on the first batched step.
        self._targets: list[tuple[int, list[int], int]] | None = None
        loop = first._loop
        self._effort, self._neg_effort = loop.effort, loop.neg_effort
        self._stall, self._neg_stall = loop.stall, loop.neg_stall
        self._slope, self._speed_dependent = loop.slope, loop.speed_dependent

    def batchable(self) -> bool:
        """True when every robot can be stepped by the batched law (see the module doc)."""
        for robot in self.robots:
            loop = robot._loop
            if (
                robot._closed
                or not isinstance(loop, TorqueLoop)
                or len(robot._world._robots) != 1
                or loop.delay is not None
                or loop.body.soft_coupling is not None
                or loop.lift_links
                or loop.lift_torque is not None
                or loop.forces
            ):
                return False
        return True

    def step(self) -> tuple[np.ndarray, np.ndarray] | None:
        """One control period of every robot (``control_dt / dt`` physics steps).

        Returns:
            The joint positions and velocities every robot's ``read()`` now reports, stacked
            (two ``(N, dof)`` arrays, rad or m and rad/s or m/s; read-only) when the robots
            were stepped together and have no sensor model; otherwise ``None``.
        """
        if not self.batchable():
            for robot in self.robots:
                robot.step()
            return None
        q, qd = self._run(self.steps_per_period)
        for robot in self.robots:
            robot._end_period()
        if not self._exact:
            return None
        q.flags.writeable = qd.flags.writeable = False
        return q, qd

    def _run(self, steps: int) -> tuple[np.ndarray, np.ndarray]:
        robots = self.robots
        loops = [robot._loop for robot in robots]
        params = [loop.params for loop in loops]
        on = np.array([p[0] for p in params])
        c = np.array([p[1] for p in params])
        kp = np.array([p[2] for p in params])
        kd = np.array([p[3] for p in params])
        off = None if on.all() else ~on[:, None]
        n = len(loops)
        speed_dependent, friction = self._speed_dependent, any(loop.friction for loop in loops)
        # Every product with qd in one multiplication: kd, then the motors' torque drop per
        # unit speed, then friction's braking stiffness (rows present when used).
        coefficients = [kd]
        if speed_dependent:
            coefficients.append(np.broadcast_to(self._slope, kd.shape))
            stall_bounds = np.array([self._neg_stall, self._stall])[:, None, :]
        if friction:
            coefficients.append(np.array([loop.neg_stiffness for loop in loops]))
            static = np.array([loop.static for loop in loops])
            static_bounds = np.array([-static, static])
        coefficients = np.array(coefficients)
        targets = self._targets
        if targets is None:
            bodies = [loop.body for loop in loops]
            targets = self._targets = [(b.body_id, b.indices, b.client_id) for b in bodies]
        q = np.array([loop.q for loop in loops])
        qd = np.array([loop.qd for loop in loops])
        qd_prev = tau = cmd = qd
        send, simulate = pybullet.setJointMotorControlArray, pybullet.stepSimulation
        states, mode = pybullet.getJointStates, pybullet.TORQUE_CONTROL
        clip = _clip
        effort, neg_effort = self._effort, self._neg_effort
        unused = [0.0] * kd.shape[1]
        frombuffer, shape = np.frombuffer, (2 * n, kd.shape[1])
        for _ in range(steps):
            products = coefficients * qd
            cmd = c - kp * q - products[0]
            if speed_dependent:  # clip(cmd, -stall - drop, stall - drop), drop = slope * qd
                bounds = stall_bounds - products[1]
                tau = clip(clip(cmd, bounds[0], bounds[1]), neg_effort, effort)
            else:
                tau = clip(cmd, neg_effort, effort)
            if off is not None:
                tau = np.where(off, 0.0, tau)
                cmd = np.where(off, 0.0, cmd)
            if friction:  # clip(neg_stiffness * qd, tau - static, tau + static)
                limits = tau + static_bounds
                total = clip(products[-1], limits[0], limits[1])
            else:
                total = tau
            positions, velocities = [], []
            # strict=False: the lengths are right by construction, and this is the hot loop
            # PyBullet's arguments by position: its keyword parsing costs more than the
            # zero targets and gains, which torque control ignores (bit-identical results)
            for (body_id, indices, cid), row in zip(targets, total.tolist(), strict=False):
                send(body_id, indices, mode, unused, unused, row, unused, unused, cid)
                simulate(cid)
                joint_positions, joint_velocities, _, _ = zip(
                    *states(body_id, indices, cid), strict=False
                )
                positions.extend(joint_positions)
                velocities.extend(joint_velocities)
            qd_prev = qd
            # One conversion of flat floats through a C double buffer: half the work of
            # np.array over the nested tuples (counted with callgrind)
            joints = frombuffer(doubles("d", positions + velocities)).reshape(shape)
            q, qd = joints[:n], joints[n:]
        for i, (robot, loop) in enumerate(zip(robots, loops, strict=True)):
            loop.q, loop.qd, loop.qd_prev = q[i], qd[i], qd_prev[i]
            if on[i]:
                loop.tau, loop.cmd = tau[i], cmd[i]
            else:
                loop.tau = loop.cmd = loop.zeros
            robot._world.steps += steps
        return q, qd
