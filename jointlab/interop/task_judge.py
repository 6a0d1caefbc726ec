"""A JointLab task judging a robot LeRobot drives: the device path of the imitation loop.

``lerobot-record --policy.path=CKPT --robot.type=jointlab --robot.url=emulated://so101
--robot.task=Reach --robot.task_seed=1000`` runs a checkpoint on the emulated servo arm;
:class:`TaskJudge` gives that episode the scene of ``lerobot-eval``'s episode with the same
seed (the same goal: the same random draws as :class:`~jointlab.interop.lerobot_gym.
LeRobotTaskEnv`'s ``reset(seed=...)``), draws it in the plugin's simulated cameras, and
judges the measured joint positions by the task's own success rule, as the environment
judges its last step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.interface import ArrayState, NJointAction
from jointlab.interop.lerobot_tasks import JointLabSim, lerobot_task
from jointlab.robots import RobotDescription

__all__ = ["TaskJudge"]


class TaskJudge:
    """The task of ``lerobot-eval``'s seed ``seed`` on a robot of ``description``.

    Args:
        task: A name of :data:`~jointlab.interop.lerobot_gym.LEROBOT_TASKS`.
        description: The robot.
        seed: The episode's seed (``lerobot-eval --seed S``: episode ``i`` has ``S + i``).

    Raises:
        ConfigurationError: an unknown task, or one with objects (before anything connects).
    """

    def __init__(self, task: str, description: RobotDescription, seed: int) -> None:
        import gymnasium

        from jointlab.envs.tasks import task_class
        from jointlab.sim import SimRobot

        self.spec = self.check(task)
        self.seed = int(seed)
        self._twin = SimRobot(description)  # the task's kinematics; never stepped
        self.task = task_class(self.spec.task)(**self.spec.kwargs)
        self.task.bind(self._twin)
        rng, _ = gymnasium.utils.seeding.np_random(self.seed)
        rng.integers(2**31 - 1)  # the robot seed JointLabEnv.reset draws before the task
        self.task.reset(rng, None)
        self.success: bool | None = None

    @staticmethod
    def check(task: str) -> Any:
        """The task's :class:`~jointlab.interop.lerobot_tasks.LeRobotTask`, if judgeable.

        Raises:
            ConfigurationError: an unknown task, or one with objects.
        """
        spec = lerobot_task(task)
        if spec.make is not JointLabSim:
            raise ConfigurationError(
                f"--robot.task={task}: the emulated arm's plant holds no objects, so only "
                f"tasks on the arm alone can be judged on it (Reach), not {task}"
            )
        return spec

    def environment_state(self) -> np.ndarray:
        """The episode's ``environment_state`` values (Reach: the goal, m)."""
        return np.array(self.task.goal, dtype=np.float64)

    def markers(self) -> list[Any]:
        """What the cameras draw (Reach: the goal)."""
        return self.task.markers()

    def judge(self, state: ArrayState) -> bool:
        """The task's success at the measured ``state`` (kept as :attr:`success`)."""
        hold = NJointAction.Position(state.position)
        self.success = bool(self.task.evaluate(state, hold).info["is_success"])
        return self.success

    def report(self, path: str | Path | None, url: str) -> dict[str, Any]:
        """The verdict as a dict; appended to ``path`` as one JSON line when given."""
        verdict = {
            "task": self.spec.name,
            "seed": self.seed,
            "url": url,
            "success": self.success,
            "environment_state": self.environment_state().tolist(),
        }
        if path is not None:
            with Path(path).expanduser().open("a") as file:
                file.write(json.dumps(verdict) + "\n")
        return verdict

    def close(self) -> None:
        """Release the twin."""
        self._twin.close()
