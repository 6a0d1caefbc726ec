"""MuJoCo's batched step: B robots, each alone in its own world, advanced by one call.

:class:`MujocoBatch` is what ``MujocoWorld.batch`` returns (:class:`jointlab.sim.batch.
BatchStepper` drives it). With the law running as MuJoCo's own actuators (no delay line),
a control period of every robot is two ``map`` calls over ``mj_step`` (``k - 1`` steps,
then the last one, whose start velocity the acceleration needs), with no Python bytecode
per robot, and the state of every robot is gathered into ``(B, dof)`` arrays by ``map``
over the worlds' arrays. Each robot is stepped in its own ``MjData`` exactly as
``MujocoLoop.run`` steps it alone, so the results are bit-identical.

``mujoco.rollout`` (MuJoCo's thread pool over many models) is not used: it rolls out from
a state vector into its own scratch data and does not hand back the solver's warm start,
so every robot would need its full state written back and would drift from a robot stepped
alone. On one core the two cost the same C work; threads would add wall-clock speed, not
throughput per core.
"""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Sequence
from itertools import repeat

import numpy as np

from jointlab.sim.mujoco.loop import MujocoLoop

__all__ = ["MujocoBatch"]

_take = operator.getitem


class MujocoBatch:
    """The batched step of B MuJoCo loops of one description (module docstring).

    Args:
        loops: The robots' loops, each alone in its own world.
    """

    @classmethod
    def of(cls, loops: Sequence[object]) -> MujocoBatch | None:
        """A batch of ``loops``, or None when one of them is not a MuJoCo loop."""
        if not loops or not all(isinstance(loop, MujocoLoop) for loop in loops):
            return None
        return cls(loops)  # type: ignore[arg-type]

    def __init__(self, loops: Sequence[MujocoLoop]) -> None:
        self._loops = list(loops)
        self._step = self._loops[0]._step

    def ready(self) -> bool:
        """True when every loop runs natively, with no pushes and no viewer open."""
        return all(
            loop.native and not (loop.forces or loop._pushing) and loop.body.world._viewer is None
            for loop in self._loops
        )

    def step(self, steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``steps`` physics steps of every robot; ``q``, ``qd``, ``tau``, ``cmd`` ``(B, dof)``.

        Every loop then holds its rows (``q``, ``qd``, ``qd_prev``, ``tau``, ``cmd``) and
        every world's ``steps`` has advanced, exactly as after ``loop.run(steps)``.
        """
        loops = self._loops
        bodies = [loop.body for loop in loops]  # a recompile replaces model and data
        models = [body.model for body in bodies]
        datas = [body.data for body in bodies]
        dofs = [body.dofs for body in bodies]
        step = self._step
        if steps > 1:
            deque(map(step, models, datas, repeat(steps - 1)), 0)
        qd_prev = np.array(list(map(_take, [d.qvel for d in datas], dofs)))
        deque(map(step, models, datas), 0)
        q = np.array(list(map(_take, [d.qpos for d in datas], [b.qpos for b in bodies])))
        qd = np.array(list(map(_take, [d.qvel for d in datas], dofs)))
        tau = np.array(list(map(_take, [d.qfrc_actuator for d in datas], dofs)))
        cmd = np.array(
            list(map(_take, [d.actuator_force for d in datas], [b.drive for b in bodies]))
        )
        rows = zip(q, qd, qd_prev, tau, cmd, strict=True)
        for loop, body, (q_i, qd_i, prev_i, tau_i, cmd_i) in zip(loops, bodies, rows, strict=True):
            loop.q, loop.qd, loop.qd_prev, loop.tau, loop.cmd = q_i, qd_i, prev_i, tau_i, cmd_i
            body.world.steps += steps
        tau.setflags(write=False)  # the loops keep its rows
        cmd.setflags(write=False)
        return q, qd, tau, cmd
