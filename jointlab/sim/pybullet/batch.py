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

import operator
from array import array as doubles
from collections import deque
from collections.abc import Sequence
from itertools import chain as flatten
from itertools import repeat

import numpy as np
import pybullet

from jointlab.errors import ConfigurationError
from jointlab.sim.law import _clip
from jointlab.sim.pybullet.loop import TorqueLoop
from jointlab.sim.robot import SimRobot
from jointlab.sim.state import end_periods, stall_columns

__all__ = ["BatchStepper"]


#: :meth:`BatchStepper._episode`'s result: friction, coefficients, static_bounds, products,
#: bounds, total.
_EpisodeArrays = tuple[bool, np.ndarray, "np.ndarray | None", np.ndarray, np.ndarray, np.ndarray]


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
        #: PyBullet body ids, joint indices and client ids of the robots (fixed for their
        #: lives), gathered on the first batched step.
        self._targets: tuple[list[int], list[list[int]], list[int]] | None = None
        self._torque: np.ndarray | None = None
        self._cmd: np.ndarray | None = None
        loop = first._loop
        self._effort, self._neg_effort = loop.effort, loop.neg_effort
        self._stall, self._neg_stall = loop.stall, loop.neg_stall
        self._slope, self._speed_dependent = loop.slope, loop.speed_dependent
        self._stall_bounds = np.array([self._neg_stall, self._stall])[:, None, :]
        #: The robots' torque loops and worlds (fixed for the robots' lives).
        self._loops = [robot._loop for robot in self.robots]
        self._worlds = [robot._world for robot in self.robots]
        self._reporters = [robot._reporter for robot in self.robots]
        self._stall_columns = stall_columns(self._reporters)
        #: :meth:`_episode`'s cache: the ids of the friction arrays, the arrays, the result.
        self._episode_arrays: tuple[list[int], list[np.ndarray], _EpisodeArrays] | None = None
        #: The last batched period's q and qd (``(N, dof)`` each) and the rows of q the
        #: loops were given, to reuse while they still hold them.
        self._last_joints: tuple[np.ndarray, np.ndarray, list[np.ndarray]] | None = None

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
        self._torque = None
        if not self.batchable():
            for robot in self.robots:
                robot.step()
            return None
        q, qd = self._run(self.steps_per_period)
        robots = self.robots
        if not self._exact:  # each robot draws its sensor noise
            for robot in robots:
                robot._end_period()
            return None
        # no sensor noise to draw: the stall timers of all robots at once
        end_periods(self._reporters, [world.steps for world in self._worlds], self._torque,
                    self._cmd, qd, self._stall_columns)  # fmt: skip
        for robot in robots:
            robot._state = None
        q.setflags(write=False)
        qd.setflags(write=False)
        return q, qd

    @property
    def torque(self) -> np.ndarray | None:
        """The applied torques every robot's ``read()`` now reports, stacked ``(N, dof)``.

        N·m (N for linear joints), read-only; None before the first batched step and after a
        period stepped robot by robot.
        """
        return self._torque

    def _episode(self, loops: list[TorqueLoop]) -> _EpisodeArrays:
        """The law's arrays that change only with the robots' episodes, and its work arrays.

        Returns ``friction`` (some robot's law adds Coulomb friction), ``coefficients`` (the
        rows that multiply ``qd``: kd, written every period, then the motors' torque drop per
        unit speed and friction's braking stiffness where used), friction's ``static_bounds``
        and the work arrays ``products``, ``bounds`` and ``total``, which no loop keeps.
        Kept while every loop holds the same friction arrays (``DriveLoop.set_episode``
        replaces them), so a period builds them only after a robot's episode changed.
        """
        held = [loop.static for loop in loops] + [loop.neg_stiffness for loop in loops]
        key = list(map(id, held))
        cached = self._episode_arrays
        if cached is not None and cached[0] == key:
            return cached[2]
        n = len(loops)
        statics, stiffness = held[:n], held[n:]
        friction = any(loop.friction for loop in loops)
        dof = self._slope.shape[0]
        coefficients = np.empty((1 + self._speed_dependent + friction, n, dof))
        if self._speed_dependent:
            coefficients[1] = self._slope
        static_bounds = None
        if friction:
            coefficients[-1] = stiffness
            static = np.array(statics)
            static_bounds = np.array([-static, static])
        arrays = (friction, coefficients, static_bounds, np.empty(coefficients.shape),
                  np.empty((2, n, dof)), np.empty((n, dof)))  # fmt: skip
        self._episode_arrays = (key, held, arrays)  # held: the ids stay theirs while cached
        return arrays

    def _run(self, steps: int) -> tuple[np.ndarray, np.ndarray]:
        loops = self._loops
        params = [loop.params for loop in loops]
        on = [p[0] for p in params]
        off = None if all(on) else ~np.array(on)[:, None]
        c = np.array([p[1] for p in params])
        kp = np.array([p[2] for p in params])
        speed_dependent = self._speed_dependent
        friction, coefficients, static_bounds, products, bounds, total = self._episode(loops)
        # Every product with qd in one multiplication: kd, then the motors' torque drop per
        # unit speed, then friction's braking stiffness (rows present when used).
        coefficients[0] = [p[3] for p in params]
        n, dof = c.shape
        stall_bounds = self._stall_bounds
        # The law's arrays, written in place (out=) at every physics step: the same
        # operations in the same order as the single robot's law (bit-identical), without a
        # temporary per operation. The loops keep rows of the torques and commands, so those
        # two are new every period; no loop keeps the others.
        kd_qd, friction_torque = products[0], products[-1]
        tau, cmd = np.empty((2, n, dof))
        # The lower and upper bounds of a clip: the motors' (speed-dependent), then friction's
        low, high = bounds
        if not friction:
            total = tau
        targets = self._targets
        if targets is None:
            bodies = [loop.body for loop in loops]
            targets = self._targets = (
                [b.body_id for b in bodies], [b.indices for b in bodies],
                [b.client_id for b in bodies],
            )  # fmt: skip
        body_ids, indices, clients = targets
        last = self._last_joints  # the previous period's q and qd, if every loop holds them
        if last is not None and all(map(operator.is_, [loop.q for loop in loops], last[2])):
            q, qd = last[0], last[1]
        else:
            q = np.array([loop.q for loop in loops])
            qd = np.array([loop.qd for loop in loops])
        qd_prev = qd
        send, simulate = pybullet.setJointMotorControlArray, pybullet.stepSimulation
        states, mode = pybullet.getJointStates, pybullet.TORQUE_CONTROL
        multiply, subtract, add, clip, copyto = np.multiply, np.subtract, np.add, _clip, np.copyto
        effort, neg_effort = self._effort, self._neg_effort
        # PyBullet's arguments by position: its keyword parsing costs more than the zero
        # targets and gains, which torque control ignores (bit-identical results)
        unused = repeat([0.0] * dof)
        modes = repeat(mode)
        frombuffer, shape, chain = np.frombuffer, (2 * n, dof), flatten.from_iterable
        for _ in range(steps):
            multiply(coefficients, qd, out=products)
            multiply(kp, q, out=cmd)
            subtract(c, cmd, out=cmd)  # cmd = c - kp*q - kd*qd
            subtract(cmd, kd_qd, out=cmd)
            if speed_dependent:  # clip(cmd, -stall - drop, stall - drop), drop = slope * qd
                subtract(stall_bounds, products[1], out=bounds)
                clip(cmd, low, high, out=tau)
                clip(tau, neg_effort, effort, out=tau)
            else:
                clip(cmd, neg_effort, effort, out=tau)
            if off is not None:
                copyto(tau, 0.0, where=off)
                copyto(cmd, 0.0, where=off)
            if friction:  # clip(neg_stiffness * qd, tau - static, tau + static)
                add(tau, static_bounds, out=bounds)
                clip(friction_torque, low, high, out=total)
            # Each PyBullet call for every robot through map (no bytecode per robot), the
            # worlds one after the other: separate clients, so the order changes nothing
            deque(map(send, body_ids, indices, modes, unused, unused, total.tolist(), unused,
                      unused, clients), 0)  # fmt: skip
            deque(map(simulate, clients), 0)
            # Every robot's joint states gathered at once, then one conversion of the flat
            # floats through a C double buffer (half the work of np.array over the nested
            # tuples, counted with callgrind)
            positions, velocities, _, _ = zip(*chain(map(states, body_ids, indices, clients)),
                                              strict=False)  # fmt: skip
            qd_prev = qd
            joints = frombuffer(doubles("d", positions + velocities)).reshape(shape)
            q, qd = joints[:n], joints[n:]
        rows = list(q)
        for i, (world, loop) in enumerate(zip(self._worlds, loops, strict=True)):
            loop.q, loop.qd, loop.qd_prev = rows[i], qd[i], qd_prev[i]
            if on[i]:
                loop.tau, loop.cmd = tau[i], cmd[i]
            else:
                loop.tau = loop.cmd = loop.zeros
            world.steps += steps
        self._last_joints = (q, qd, rows)
        tau.setflags(write=False)  # the loops keep its rows; no later period writes it
        cmd.setflags(write=False)
        self._torque, self._cmd = tau, cmd
        return q, qd
