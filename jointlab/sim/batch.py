"""Step several simulated robots together: one engine call for the batch, not one per robot.

A batched environment holds B :class:`~jointlab.sim.SimRobot` of one description, each alone
in its own world. :class:`BatchStepper` advances all of them by one control period through
their engine's batched step (``Engine.batch``, :mod:`jointlab.sim.engine`): the law runs on
``(B, dof)`` arrays and the engine steps every world in one call (MuJoCo: one ``rollout``
over the worlds on its thread pool; PyBullet, which has no batched step: one ``map`` per
PyBullet function over the worlds, see :mod:`jointlab.sim.pybullet.batch`). Each robot then
ends its period through the same methods :meth:`SimRobot.step` ends it with (its reporter's
period end, or all reporters' at once where none has a sensor model, then
``Robot._stepped``, which tells the robot's listeners), so ``read()``, listeners (the live
view, recorders) and everything else see the same, bit for bit (tests/sim/test_sim_batch.py).

Robots the engine cannot batch (a delay line, soft couplings, queued external forces, an
engine without a batched step, a world shared with other robots) are stepped one by one
with ``step()``: the same result, without the saving.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.sim.engine import BatchStep
from jointlab.sim.robot import SimRobot
from jointlab.sim.state import end_periods, stall_columns

__all__ = ["BatchStepper"]


class BatchStepper:
    """Advance B robots of one description by one control period together.

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
        self.steps_per_period = first.steps_per_period
        #: Whether ``read()`` reports the simulated joints as they are (no sensor model).
        self._exact = all(robot._reporter.sensors is None for robot in self.robots)
        self._torque: np.ndarray | None = None
        self._loops = [robot._loop for robot in self.robots]
        self._worlds = [robot.world for robot in self.robots]
        self._reporters = [robot._reporter for robot in self.robots]
        self._stall_columns = stall_columns(self._reporters)
        same_engine = len({type(world) for world in self._worlds}) == 1
        #: The engine's batched step of the loops (None: the engine has none for them).
        self._batch: BatchStep | None = first.world.batch(self._loops) if same_engine else None

    def batchable(self) -> bool:
        """True when every robot can be stepped by the engine's batched step now."""
        batch = self._batch
        if batch is None or not batch.ready():
            return False
        return all(not robot._closed and robot.world.robot_count == 1 for robot in self.robots)

    def step(self) -> tuple[np.ndarray, np.ndarray] | None:
        """One control period of every robot (``control_dt / dt`` physics steps).

        Returns:
            The joint positions and velocities every robot's ``read()`` now reports, stacked
            (two ``(B, dof)`` arrays, rad or m and rad/s or m/s; read-only) when the robots
            were stepped together and have no sensor model; otherwise ``None``.
        """
        self._torque = None
        if not self.batchable():
            for robot in self.robots:
                robot.step()
            return None
        assert self._batch is not None
        q, qd, tau, cmd = self._batch.step(self.steps_per_period)
        self._torque = tau
        robots = self.robots
        if not self._exact:  # each robot draws its sensor noise
            for robot in robots:
                robot._end_period()
                robot._stepped()
            return None
        # no sensor noise to draw: the stall timers of all robots at once
        end_periods(
            self._reporters,
            [world.steps for world in self._worlds],
            tau,
            cmd,
            qd,
            self._stall_columns,
        )
        for robot in robots:
            robot._state = None
            robot._stepped()
        q.setflags(write=False)
        qd.setflags(write=False)
        return q, qd

    @property
    def torque(self) -> np.ndarray | None:
        """The applied torques every robot's ``read()`` now reports, stacked ``(B, dof)``.

        N·m (N for linear joints), read-only; None before the first batched step and after a
        period stepped robot by robot.
        """
        return self._torque
