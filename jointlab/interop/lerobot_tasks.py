"""The tasks of JointLab's LeRobot environment, and the simulations behind them.

:data:`LEROBOT_TASKS` names what ``--env.task`` accepts: ``Reach`` (a
:class:`~jointlab.envs.env.JointLabEnv` task: bring the gripper to a goal) and the
manipulation tasks ``Lift``, ``PickPlace`` and ``Push`` (a
:class:`~jointlab.envs.manipulation.ManipulationEnv`: a table with a cube). Each task's
simulation is behind one small adapter (:class:`JointLabSim`, :class:`ManipulationSim`) that
takes absolute joint targets (rad), as LeRobot's actions are, and names its
``environment_state``:

* Reach: the goal position (``goal.x``, ``goal.y``, ``goal.z``, m);
* manipulation: per cube its position (m) and ``sin``/``cos`` of four times its yaw (a cube
  looks the same every quarter turn), then the goal position(s) (m).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError

__all__ = [
    "LEROBOT_TASKS",
    "JointLabSim",
    "LeRobotTask",
    "ManipulationSim",
    "lerobot_task",
]


@dataclass(frozen=True)
class LeRobotTask:
    """One JointLab task as a LeRobot environment.

    Attributes:
        name: LeRobot's ``--env.task`` value (``"Reach"``).
        task: The JointLab task name.
        description: The task in words (the dataset's and ``lerobot-eval``'s task text).
        episode_steps: Steps per episode at 25 fps.
        environment: Names of the ``environment_state`` values.
        make: Builds the simulation: ``make(spec, robot, fps, engine, render_size)``.
        kwargs: The JointLab task's keywords.
    """

    name: str
    task: str
    description: str
    episode_steps: int
    environment: tuple[str, ...]
    make: Callable[..., Any]
    kwargs: dict[str, Any] = field(default_factory=dict)


class JointLabSim:
    """A :class:`~jointlab.envs.env.JointLabEnv` task (Reach) behind absolute joint targets."""

    def __init__(
        self,
        spec: LeRobotTask,
        robot: str,
        fps: int,
        engine: str | None,
        render_size: tuple[int, int],
    ) -> None:
        from jointlab.envs.env import JointLabEnv

        self.env = JointLabEnv(
            spec.task,
            robot,
            action_mode="position",
            engine=engine,
            control_dt=1.0 / fps,
            render_mode="rgb_array",
            render_size=render_size,
            **spec.kwargs,
        )
        self.description = self.env.description
        self.state: Any = None

    @property
    def task(self) -> Any:
        """The bound JointLab task."""
        return self.env.task

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> None:
        """Start an episode."""
        self.state = self.env.reset(seed=seed, options=options)[1]["state"]

    def step(self, target: np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        """Hold ``target`` (rad) for one period; reward, terminated, info."""
        from jointlab.envs.actions import normalize

        d = self.description
        _, reward, terminated, _, info = self.env.step(
            normalize(target, d.soft_lower, d.soft_upper)
        )
        self.state = info["state"]
        return float(reward), bool(terminated), info

    def environment_state(self) -> np.ndarray:
        """The goal, m (a copy)."""
        return np.array(self.env.task.goal, dtype=np.float64)

    def render(self, size: tuple[int, int]) -> np.ndarray:
        """An RGB image of ``size`` (width, height) with the goal drawn."""
        env = self.env
        kept, env.render_size = env.render_size, size
        try:
            return np.ascontiguousarray(env.render())
        finally:
            env.render_size = kept

    def close(self) -> None:
        """Release the simulation."""
        self.env.close()


class ManipulationSim:
    """A :class:`~jointlab.envs.manipulation.ManipulationEnv` behind absolute joint targets.

    A target moves the environment's servo targets by at most ``config_speed * control_dt``
    per joint and step (its ``"joint"`` action space; LeRobot's ``max_relative_target``).
    """

    def __init__(
        self,
        spec: LeRobotTask,
        robot: str,
        fps: int,
        engine: str | None,
        render_size: tuple[int, int],
    ) -> None:
        from jointlab.envs.manipulation import ManipulationEnv

        self.env = ManipulationEnv(
            spec.task,
            robot,
            engine=engine,
            action_space="joint",
            control_dt=1.0 / fps,
            render_mode="rgb_array",
            **spec.kwargs,
        )
        self.description = self.env.description
        self.observation: dict[str, np.ndarray] = {}
        self.render_size = render_size

    @property
    def task(self) -> Any:
        """The goal task."""
        return self.env.task

    @property
    def state(self) -> Any:
        """The robot's latest state."""
        return self.env.state

    def reset(self, seed: int | None, options: dict[str, Any] | None) -> None:
        """Start an episode."""
        self.observation = self.env.reset(seed=seed, options=options)[0]

    def action_of(self, target: np.ndarray) -> np.ndarray:
        """The ``"joint"`` action that moves the servo targets towards ``target`` (rad)."""
        env = self.env
        return np.clip((np.asarray(target) - env.q_target) / env.joint_step, -1.0, 1.0)

    def step(self, target: np.ndarray) -> tuple[float, bool, dict[str, Any]]:
        """Move towards ``target`` (rad) for one period; reward, terminated, info."""
        self.observation, reward, terminated, _, info = self.env.step(self.action_of(target))
        return float(reward), bool(terminated), info

    def environment_state(self) -> np.ndarray:
        """Cube positions and ``sin``/``cos(4 yaw)``, then the goal (module docstring)."""
        values = []
        for position, rpy in self.env.cube_poses():
            yaw4 = 4.0 * rpy[2]
            values += [position, [np.sin(yaw4), np.cos(yaw4)]]
        values.append(self.env.goal)
        return np.concatenate(values).astype(np.float64)

    def render(self, size: tuple[int, int]) -> np.ndarray:
        """An RGB image of ``size`` (width, height) with the goal drawn."""
        from jointlab.envs.rendering import default_camera, draw_markers
        from jointlab.envs.tasks.base import GOAL_RGBA, Marker

        env = self.env
        markers = [
            Marker(f"goal {i}", p, radius=env.scene.goal_radius, rgba=GOAL_RGBA)
            for i, p in enumerate(env.goal.reshape(-1, 3))
        ]
        draw_markers(env.world, markers)
        width, height = size
        return np.ascontiguousarray(
            env.world.render(width, height, camera=default_camera(env.description))
        )

    def close(self) -> None:
        """Release the simulation."""
        self.env.close()


def _manipulation(
    name: str, task: str, words: str, steps: int, cubes: int, goals: int
) -> LeRobotTask:
    names: list[str] = []
    for i in range(cubes):
        names += [f"cube{i}.{a}" for a in ("x", "y", "z", "sin4yaw", "cos4yaw")]
    for i in range(goals):
        names += [f"goal{i}.{a}" for a in ("x", "y", "z")]
    return LeRobotTask(name, task, words, steps, tuple(names), ManipulationSim)


#: The tasks ``--env.type=jointlab --env.task=NAME`` accepts.
LEROBOT_TASKS: dict[str, LeRobotTask] = {
    "Reach": LeRobotTask(
        name="Reach",
        task="reach",
        description="reach the goal with the gripper",
        episode_steps=50,
        environment=("goal.x", "goal.y", "goal.z"),
        make=JointLabSim,
        kwargs={"success_threshold": 0.05},
    ),
    "Lift": _manipulation("Lift", "lift", "lift the cube", 50, 1, 1),
    "PickPlace": _manipulation("PickPlace", "pick_place", "put the cube on the goal", 80, 1, 1),
    "Push": _manipulation("Push", "push", "push the cube to the goal", 80, 1, 1),
}


def lerobot_task(name: str) -> LeRobotTask:
    """The task called ``name`` in :data:`LEROBOT_TASKS`.

    Raises:
        ConfigurationError: an unknown name (with the known ones and a suggestion).
    """
    if name in LEROBOT_TASKS:
        return LEROBOT_TASKS[name]
    hint = difflib.get_close_matches(str(name), LEROBOT_TASKS, n=1)
    suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
    raise ConfigurationError(
        f"unknown JointLab task {name!r} (--env.task); expected one of "
        f"{list(LEROBOT_TASKS)}{suggestion}"
    )
