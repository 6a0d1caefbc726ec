"""PyBullet's batched step: several robots' torque laws in numpy, PyBullet called per world.

A batched environment holds N robots of one description, each alone in its own world. One
world holding all N robots saves nothing: measured with 8 arm6 (2-core machine, 2026-12-01,
CPU time per robot and physics step, send + step + read), 8 worlds 16.2-17.8 µs; one world
with the robots' collisions filtered apart 21.7-25.2 µs (bit-identical to 8 worlds); one
world with the robots 5 m apart 16.7-17.2 µs (results differ). PyBullet's step costs the
same per body either way, and separate worlds keep every robot bit-identical to a robot
stepped alone. PyBullet has no batched step, so :class:`PybulletBatch` is the documented
loop: per physics step the law of :mod:`jointlab.sim.law` runs once on ``(N, dof)`` arrays
instead of N times on ``(dof,)`` ones, each PyBullet function is called for every world
through one ``map`` (no Python bytecode per robot), and the state of every robot is read
into one array. It is what ``PybulletWorld.batch`` returns
(:class:`jointlab.sim.batch.BatchStepper` drives it).

Loops it cannot batch (a delay line, soft couplings, linear armature lifting, queued
external forces) make :meth:`PybulletBatch.ready` false: the robots are then stepped one by
one, with the same result.
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

from jointlab.sim.law import _clip
from jointlab.sim.pybullet.loop import TorqueLoop

__all__ = ["PybulletBatch"]


#: :meth:`PybulletBatch._episode`'s result: friction, coefficients, static_bounds, products,
#: bounds, total.
_EpisodeArrays = tuple[bool, np.ndarray, "np.ndarray | None", np.ndarray, np.ndarray, np.ndarray]


class PybulletBatch:
    """The batched step of N PyBullet torque loops of one description (module docstring).

    Args:
        loops: The robots' loops, each alone in its own world.
    """

    @classmethod
    def of(cls, loops: Sequence[object]) -> PybulletBatch | None:
        """A batch of ``loops``, or None when one of them is not a PyBullet torque loop."""
        if not loops or not all(isinstance(loop, TorqueLoop) for loop in loops):
            return None
        return cls(loops)  # type: ignore[arg-type]

    def __init__(self, loops: Sequence[TorqueLoop]) -> None:
        #: The robots' torque loops and worlds (fixed for the robots' lives).
        self._loops = list(loops)
        self._worlds = [loop.body.world for loop in self._loops]
        #: PyBullet body ids, joint indices and client ids of the robots (fixed for their
        #: lives), gathered on the first batched step.
        self._targets: tuple[list[int], list[list[int]], list[int]] | None = None
        loop = self._loops[0]
        self._effort, self._neg_effort = loop.effort, loop.neg_effort
        self._stall, self._neg_stall = loop.stall, loop.neg_stall
        self._slope, self._speed_dependent = loop.slope, loop.speed_dependent
        self._stall_bounds = np.array([self._neg_stall, self._stall])[:, None, :]
        #: :meth:`_episode`'s cache: the ids of the friction arrays, the arrays, the result.
        self._episode_arrays: tuple[list[int], list[np.ndarray], _EpisodeArrays] | None = None
        #: The last batched period's q and qd (``(N, dof)`` each) and the rows of q the
        #: loops were given, to reuse while they still hold them.
        self._last_joints: tuple[np.ndarray, np.ndarray, list[np.ndarray]] | None = None

    def ready(self) -> bool:
        """True when every loop can be stepped by the batched law now (module docstring)."""
        for loop in self._loops:
            if (
                loop.delay is not None
                or loop.body.soft_coupling is not None
                or loop.lift_links
                or loop.lift_torque is not None
                or loop.forces
            ):
                return False
        return True

    def step(self, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``steps`` physics steps of every robot; ``q``, ``qd``, ``tau``, ``cmd`` ``(N, dof)``.

        Every loop then holds its rows (``q``, ``qd``, ``qd_prev``, ``tau``, ``cmd``) and
        every world's ``steps`` has advanced, exactly as after ``loop.run(steps)``.
        """
        return self._run(steps)

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
        arrays = (
            friction,
            coefficients,
            static_bounds,
            np.empty(coefficients.shape),
            np.empty((2, n, dof)),
            np.empty((n, dof)),
        )
        self._episode_arrays = (key, held, arrays)  # held: the ids stay theirs while cached
        return arrays

    def _run(self, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
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
                [b.body_id for b in bodies],
                [b.indices for b in bodies],
                [b.client_id for b in bodies],
            )
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
            deque(
                map(
                    send,
                    body_ids,
                    indices,
                    modes,
                    unused,
                    unused,
                    total.tolist(),
                    unused,
                    unused,
                    clients,
                ),
                0,
            )
            deque(map(simulate, clients), 0)
            # Every robot's joint states gathered at once, then one conversion of the flat
            # floats through a C double buffer (half the work of np.array over the nested
            # tuples, counted with callgrind)
            positions, velocities, _, _ = zip(
                *chain(map(states, body_ids, indices, clients)), strict=False
            )
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
        return q, qd, tau, cmd
