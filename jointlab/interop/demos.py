"""Expert demonstrations as LeRobot datasets: what ACT or diffusion learn from.

:func:`record_expert` runs a scripted expert in :class:`~jointlab.interop.lerobot_gym.
LeRobotTaskEnv` (the environment ``lerobot-eval`` runs) for N seeded episodes and writes
each step as a dataset frame: ``observation.state`` (the env's ``agent_pos``),
``observation.environment_state``, ``action`` (the expert's joint targets), and optional
camera images: the features ``lerobot-train`` learns and ``lerobot-eval`` then feeds back.

Experts (:data:`EXPERTS`): ``Reach``: :class:`ReachExpert`, damped-least-squares IK to the
goal at reset, then a smooth joint-space move there and a hold; ``Lift``, ``PickPlace``,
``Push``: :class:`ManipulationExpert`, the manipulation tasks' scripted expert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.interop.lerobot_gym import LeRobotTaskEnv, lerobot_task

__all__ = [
    "EXPERTS",
    "DemoSummary",
    "Expert",
    "ManipulationExpert",
    "ReachExpert",
    "expert_for",
    "expert_successes",
    "record_expert",
]


class Expert(Protocol):
    """A scripted policy of :class:`LeRobotTaskEnv`: joint targets in radians."""

    def begin(self, env: LeRobotTaskEnv) -> None:
        """A new episode starts (``env`` was just reset)."""

    def target(self, env: LeRobotTaskEnv) -> np.ndarray:
        """The joint position targets for the next step, ``(dof,)``, rad."""


class ReachExpert:
    """Reach: IK to the goal at reset, a smoothstep move over ``move`` seconds, then hold.

    Args:
        move: Duration of the joint-space move, s.
    """

    def __init__(self, move: float = 0.8) -> None:
        self.move = float(move)
        self._start = self._end = np.zeros(0)
        self._step = 0
        self._steps = 1

    def begin(self, env: LeRobotTaskEnv) -> None:
        """Solve the IK for the episode's goal (from home)."""
        from jointlab.controllers.ik import solve_ik

        description = env.description
        task = env.task
        solution = solve_ik(description, task.goal, tool=task.tool_name, q0=description.home)
        self._start = np.array(env.state.position, dtype=np.float64)
        self._end = solution.q
        self._step = 0
        self._steps = max(1, round(self.move * env.fps))

    def target(self, env: LeRobotTaskEnv) -> np.ndarray:
        """The next point of the move (then the IK solution)."""
        self._step += 1
        s = min(1.0, self._step / self._steps)
        s = s * s * (3.0 - 2.0 * s)
        return self._start + s * (self._end - self._start)


class ManipulationExpert:
    """The manipulation tasks' scripted expert, as absolute joint targets.

    :func:`jointlab.envs.manipulation.expert_policy`'s ``"joint"`` actions, turned into the
    servo targets they reach.
    """

    def __init__(self) -> None:
        self._expert: Any = None

    def begin(self, env: LeRobotTaskEnv) -> None:
        """A new episode: the expert of the environment's simulation, reset."""
        from jointlab.envs.manipulation import expert_policy

        self._expert = expert_policy(env.sim.env)
        self._expert.reset()

    def target(self, env: LeRobotTaskEnv) -> np.ndarray:
        """The servo targets the expert's next ``"joint"`` action moves to, rad."""
        sim = env.sim.env
        action = np.clip(np.asarray(self._expert(env.sim.observation), np.float64), -1.0, 1.0)
        d = sim.description
        return np.clip(sim.q_target + action * sim.joint_step, d.soft_lower, d.soft_upper)


#: Task name -> expert class.
EXPERTS: dict[str, type] = {
    "Reach": ReachExpert,
    "Lift": ManipulationExpert,
    "PickPlace": ManipulationExpert,
    "Push": ManipulationExpert,
}


def expert_for(task: str) -> Expert:
    """A new expert of ``task``.

    Raises:
        ConfigurationError: no expert for ``task``.
    """
    lerobot_task(task)
    if task not in EXPERTS:
        raise ConfigurationError(f"no scripted expert for task {task!r}; experts: {list(EXPERTS)}")
    return EXPERTS[task]()


@dataclass(frozen=True)
class DemoSummary:
    """What :func:`record_expert` wrote.

    Attributes:
        root: The dataset folder.
        episodes: Episodes written.
        frames: Frames per episode.
        successes: Per episode, whether the expert succeeded (at its last step).
    """

    root: Path
    episodes: int
    frames: int
    successes: tuple[bool, ...]

    @property
    def success_rate(self) -> float:
        """Fraction of successful episodes."""
        return float(np.mean(self.successes)) if self.successes else 0.0


def record_expert(
    root: str | Path,
    task: str = "Reach",
    robot: str = "so101",
    episodes: int = 50,
    *,
    seed: int = 0,
    fps: int = 25,
    engine: str | None = None,
    cameras: Sequence[str] = (),
    camera_size: tuple[int, int] = (96, 96),
    videos: bool = False,
    environment_state: bool = True,
    expert: Expert | None = None,
) -> DemoSummary:
    """Record ``episodes`` expert episodes (seeds ``seed``, ``seed + 1``, ...) at ``root``.

    Args:
        root: The new dataset folder (must not exist).
        task: A task name of :data:`~jointlab.interop.lerobot_gym.LEROBOT_TASKS`.
        robot: The robot.
        episodes: Episodes to record.
        seed: The first episode's seed.
        fps: Steps (frames) per second.
        engine: Physics engine (default PyBullet).
        cameras: Camera names (``observation.images.<name>``).
        camera_size: (width, height) of the images, pixels.
        videos: Cameras as MP4 videos (LeRobot decodes them with torchcodec and the
            system's FFmpeg); default PNG images in the parquet files (no decoder needed).
        environment_state: With ``observation.environment_state``. A policy for the device
            path (``lerobot-record``, which cannot feed that feature) is trained without it,
            on cameras.
        expert: The expert (default :func:`expert_for` ``(task)``).

    Returns:
        A :class:`DemoSummary`.
    """
    from jointlab.interop.dataset import DatasetWriter, check_new_folder

    root = Path(root).expanduser()
    check_new_folder(root)
    if episodes < 1:
        raise ConfigurationError(f"episodes must be >= 1, got {episodes}")
    spec = lerobot_task(task)
    expert = expert if expert is not None else expert_for(task)
    env = LeRobotTaskEnv(
        task,
        robot,
        fps=fps,
        engine=engine,
        cameras=cameras,
        camera_size=camera_size,
        render_mode=None,
    )
    successes: list[bool] = []
    try:
        width, height = env.camera_size
        sizes = {name: (height, width) for name in env.cameras}
        url = f"sim://{robot}" + (f"?engine={engine}" if engine else "")
        names = spec.environment if environment_state else ()
        with DatasetWriter(
            root,
            env.description,
            fps,
            sizes,
            url=url,
            environment=names,
            videos=videos,
            dynamics=False,
        ) as writer:
            for episode in range(episodes):
                observation, info = env.reset(seed=seed + episode)
                expert.begin(env)
                success = False
                for _ in range(spec.episode_steps):
                    target = expert.target(env)
                    values = env.environment_state() if environment_state else None
                    writer.add_frame(
                        env.state, target, spec.description, _images(observation), values
                    )
                    observation, _, terminated, _, info = env.step(env.units.to_lerobot(target))
                    success = bool(info.get("is_success", False))
                    if terminated:
                        break
                writer.save_episode()
                successes.append(success)
    finally:
        env.close()
    return DemoSummary(root, episodes, spec.episode_steps, tuple(successes))


def _images(observation: dict[str, Any]) -> dict[str, np.ndarray]:
    return dict(observation.get("pixels", {}))


def expert_successes(
    task: str = "Reach",
    robot: str = "so101",
    seeds: Sequence[int] = range(1000, 1100),
    *,
    fps: int = 25,
    engine: str | None = None,
) -> list[bool]:
    """The expert's success on each seeded episode, as ``lerobot-eval`` judges a policy's.

    The same environment, episode length and seeds as ``lerobot-eval --seed S`` with
    ``--eval.batch_size=1`` (episode ``i`` has seed ``S + i``); success at the last step.
    """
    spec = lerobot_task(task)
    expert = expert_for(task)
    env = LeRobotTaskEnv(task, robot, fps=fps, engine=engine, render_mode=None)
    outcomes = []
    try:
        for seed in seeds:
            env.reset(seed=int(seed))
            expert.begin(env)
            info: dict[str, Any] = {}
            for _ in range(spec.episode_steps):
                _, _, terminated, _, info = env.step(env.units.to_lerobot(expert.target(env)))
                if terminated:
                    break
            outcomes.append(bool(info.get("is_success", False)))
    finally:
        env.close()
    return outcomes
