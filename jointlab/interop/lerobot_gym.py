"""JointLab's tasks as LeRobot sees a simulation environment (``lerobot-eval``, no LeRobot here).

:class:`LeRobotTaskEnv` wraps a :class:`~jointlab.envs.env.JointLabEnv` so that its
observations, actions and features are those of a LeRobot dataset recorded on the real arm
(and of ``--robot.type=jointlab``):

* observation ``agent_pos`` (LeRobot's ``observation.state``): joint positions in LeRobot's
  units, degrees and a gripper 0-100 (:class:`~jointlab.interop.units.LeRobotUnits`);
* observation ``environment_state`` (``observation.environment_state``): the task's scene
  state (Reach: the goal position, m; manipulation: the cube's pose and the goal;
  :mod:`jointlab.interop.lerobot_tasks`);
* observation ``pixels`` (``observation.images.<camera>``), when cameras are asked for:
  one ``(height, width, 3)`` uint8 render per camera (the task's markers drawn);
* action (``action``): joint position targets in the same units as ``agent_pos``;
* ``info["is_success"]`` on every step, so a vector env's ``info["final_info"]["is_success"]``
  holds each finished episode's success (what ``lerobot-eval`` counts).

One control period per step: ``1 / fps`` seconds (25 fps: 40 simulated ms), the rate of the
dataset and of ``lerobot-record``'s loop on the device.

:data:`LEROBOT_TASKS` names the tasks (``Reach``, ``Lift``, ``PickPlace``, ``Push``),
:func:`register_lerobot_env` registers a
task's Gymnasium id on demand (the plugin ``lerobot_env_jointlab`` calls it when LeRobot
asks for the id; nothing is registered by importing this module).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from jointlab.errors import ConfigurationError
from jointlab.interop.lerobot_tasks import LEROBOT_TASKS, LeRobotTask, lerobot_task
from jointlab.interop.units import LeRobotUnits

__all__ = [
    "LEROBOT_KEYS",
    "LEROBOT_TASKS",
    "LeRobotTask",
    "LeRobotTaskEnv",
    "check_policy",
    "lerobot_features",
    "lerobot_key",
    "lerobot_task",
    "register_lerobot_env",
]


def lerobot_features(
    task: str, robot: str = "so101", cameras: Sequence[str] = (), size: tuple[int, int] = (96, 96)
) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The environment's features: gym key -> (kind, shape) with kind state/env/visual/action.

    Keys are ``action``, ``agent_pos``, ``environment_state`` and ``pixels/<camera>``; the
    plugin maps them to LeRobot's ``action``, ``observation.state``,
    ``observation.environment_state`` and ``observation.images.<camera>``.
    """
    from jointlab.robots import load_robot

    spec = lerobot_task(task)
    dof = load_robot(robot).dof
    width, height = size
    features: dict[str, tuple[str, tuple[int, ...]]] = {
        "action": ("action", (dof,)),
        "agent_pos": ("state", (dof,)),
        "environment_state": ("env", (len(spec.environment),)),
    }
    for camera in cameras:
        features[f"pixels/{camera}"] = ("visual", (int(height), int(width), 3))
    return features


class LeRobotTaskEnv(gymnasium.Env):
    """A JointLab task with LeRobot's observations and actions (see the module docstring).

    Args:
        task: A name of :data:`LEROBOT_TASKS`.
        robot: The robot (built-in name or file); simulated.
        fps: Steps per second; ``1 / fps`` must be a whole number of milliseconds.
        engine: ``"pybullet"`` (default) or ``"mujoco"``.
        cameras: Camera names; each observation holds one render per camera.
        camera_size: (width, height) of those renders, pixels.
        render_size: (width, height) of :meth:`render` (``lerobot-eval``'s videos), pixels.
        render_mode: ``"rgb_array"`` (LeRobot records videos of some episodes) or None.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 25}  # noqa: RUF012

    def __init__(
        self,
        task: str = "Reach",
        robot: str = "so101",
        *,
        fps: int = 25,
        engine: str | None = None,
        cameras: Sequence[str] = (),
        camera_size: tuple[int, int] = (96, 96),
        render_size: tuple[int, int] = (160, 120),
        render_mode: str | None = "rgb_array",
    ) -> None:
        self.spec_task = lerobot_task(task)
        if not (isinstance(fps, int) and fps > 0 and 1000 % fps == 0):
            raise ConfigurationError(
                f"--env.fps {fps!r}: one step must be a whole number of 1 ms physics steps "
                "(fps dividing 1000: 10, 20, 25, 40, 50)"
            )
        self.fps = fps
        self.metadata = {**self.metadata, "render_fps": fps}
        self.cameras = list(cameras)
        self.camera_size = (int(camera_size[0]), int(camera_size[1]))
        self.render_size = (int(render_size[0]), int(render_size[1]))
        self.render_mode = render_mode
        self.sim = self.spec_task.make(self.spec_task, robot, fps, engine, self.render_size)
        description = self.sim.description
        self.description = description
        self.units = LeRobotUnits.of(description)
        low = self.units.to_lerobot(description.soft_lower).astype(np.float32)
        high = self.units.to_lerobot(description.soft_upper).astype(np.float32)
        self.action_space = spaces.Box(low, high, dtype=np.float32)
        parts: dict[str, spaces.Space] = {
            "agent_pos": spaces.Box(-np.inf, np.inf, (description.dof,), np.float64),
            "environment_state": spaces.Box(
                -np.inf, np.inf, (len(self.spec_task.environment),), np.float64
            ),
        }
        if self.cameras:
            width, height = self.camera_size
            parts["pixels"] = spaces.Dict(
                {name: spaces.Box(0, 255, (height, width, 3), np.uint8) for name in self.cameras}
            )
        self.observation_space = spaces.Dict(parts)

    @property
    def task(self) -> Any:
        """The bound JointLab task (goal, objects)."""
        return self.sim.task

    @property
    def state(self) -> Any:
        """The robot's latest :class:`~jointlab.interface.ArrayState`."""
        return self.sim.state

    def task_description(self) -> str:
        """The task in words (LeRobot passes it to language-conditioned policies)."""
        return self.spec_task.description

    def environment_state(self) -> np.ndarray:
        """The task's ``environment_state`` values now, ``(k,)``."""
        return self.sim.environment_state()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode (``seed`` reproduces it exactly)."""
        super().reset(seed=seed)
        self.sim.reset(seed, options)
        return self._observation(), {"is_success": False}

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Apply joint targets (LeRobot units, ``(dof,)``) for one period."""
        values = np.asarray(action, dtype=np.float64).reshape(-1)
        if values.shape != (self.description.dof,):
            raise ConfigurationError(
                f"action of shape {np.shape(action)}; {self.description.name!r} takes "
                f"{self.description.dof} joint targets {list(self.units.keys)}"
            )
        reward, terminated, info = self.sim.step(self.units.from_lerobot(values))
        return self._observation(), reward, terminated, False, info

    def render(self) -> np.ndarray | None:
        """An RGB image of the scene (markers drawn), or None without ``rgb_array``."""
        return self.sim.render(self.render_size) if self.render_mode == "rgb_array" else None

    def close(self) -> None:
        """Release the simulation; safe twice."""
        self.sim.close()

    def _observation(self) -> dict[str, Any]:
        observation: dict[str, Any] = {
            "agent_pos": self.units.to_lerobot(self.state.position),
            "environment_state": self.environment_state(),
        }
        if self.cameras:
            observation["pixels"] = {
                name: self.sim.render(self.camera_size) for name in self.cameras
            }
        return observation


def register_lerobot_env(task: str) -> str:
    """Register ``task``'s Gymnasium id (idempotent); the id: ``jointlab/LeRobot-<task>-v0``.

    Its episodes last :attr:`LeRobotTask.episode_steps` steps unless ``gym.make`` is given
    ``max_episode_steps``.
    """
    spec = lerobot_task(task)
    env_id = f"jointlab/LeRobot-{spec.name}-v0"
    if env_id not in gymnasium.registry:
        gymnasium.register(
            id=env_id,
            entry_point=f"{__name__}:LeRobotTaskEnv",
            kwargs={"task": spec.name},
            max_episode_steps=spec.episode_steps,
        )
    return env_id


#: LeRobot's feature names of the gym keys (``features_map`` of the plugin's config).
LEROBOT_KEYS = {
    "action": "action",
    "agent_pos": "observation.state",
    "environment_state": "observation.environment_state",
}


def lerobot_key(gym_key: str) -> str:
    """LeRobot's feature name of a gym key (``pixels/front``: ``observation.images.front``)."""
    if gym_key.startswith("pixels/"):
        return "observation.images." + gym_key.removeprefix("pixels/")
    return LEROBOT_KEYS[gym_key]


def check_policy(
    policy_dir: str | Path,
    task: str,
    robot: str = "so101",
    cameras: Sequence[str] = (),
    size: tuple[int, int] = (96, 96),
) -> None:
    """Check a LeRobot checkpoint against this environment before anything runs.

    Compares the policy's ``config.json`` features (names, shapes) with the environment's,
    and, where the checkpoint's ``train_config.json`` names a local dataset, that dataset's
    joint names and JointLab units with the robot's.

    Raises:
        ConfigurationError: the first mismatch, naming the feature and the fix.
    """
    import json

    folder = Path(policy_dir).expanduser()
    try:
        config = json.loads((folder / "config.json").read_text())
    except FileNotFoundError:
        return  # a hub id or another layout: LeRobot reports what it cannot load
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"{folder / 'config.json'}: cannot read it: {exc}") from None
    features = lerobot_features(task, robot, cameras, size)
    mine = {lerobot_key(key): (kind, shape) for key, (kind, shape) in features.items()}
    theirs = {**config.get("input_features", {}), **config.get("output_features", {})}
    fix = (
        f"evaluate it with the env it was trained for (--env.task, --env.robot, "
        f"--env.cameras), or retrain on a dataset recorded from --env.task={task} "
        f"--env.robot={robot} (jointlab record {robot} expert --env {task})"
    )
    for name, feature in theirs.items():
        if name not in mine:
            raise ConfigurationError(
                f"policy {folder}: feature {name!r} (shape {feature.get('shape')}) is not an "
                f"output of JointLab's {task} env on {robot!r}, which has {sorted(mine)}: {fix}"
            )
        shape = tuple(feature.get("shape") or ())
        expected = mine[name][1]
        if mine[name][0] == "visual":
            expected = (expected[2], expected[0], expected[1])  # LeRobot's channel-first
        if shape != expected:
            raise ConfigurationError(
                f"policy {folder}: feature {name!r} has shape {shape}; JointLab's {task} env on "
                f"{robot!r} gives {expected}: {fix}"
            )
    _check_dataset_names(folder, task, robot, fix)


def _check_dataset_names(folder: Path, task: str, robot: str, fix: str) -> None:
    """The trained-on dataset's joint names and units against the env's (when it is local)."""
    import json

    from jointlab.robots import load_robot

    try:
        train = json.loads((folder / "train_config.json").read_text())
        root = Path(train["dataset"]["root"])
        info = json.loads((root / "meta" / "info.json").read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return
    units = LeRobotUnits.of(load_robot(robot))
    spec = lerobot_task(task)
    expected = {
        "observation.state": list(units.keys),
        "action": list(units.keys),
        "observation.environment_state": list(spec.environment),
    }
    for name, wanted in expected.items():
        names = (info.get("features", {}).get(name) or {}).get("names")
        if names is not None and list(names) != wanted:
            raise ConfigurationError(
                f"policy {folder} was trained on {root}, whose {name!r} is {list(names)}; "
                f"JointLab's {task} env on {robot!r} has {wanted}: {fix}"
            )
    try:
        meta = json.loads((root / "meta" / "jointlab.json").read_text())
    except (OSError, ValueError):
        return
    joints = meta.get("units", {}).get("joints")
    wanted_units = dict(zip(units.keys, units.units, strict=True))
    if joints is None and "gripper.pos" in wanted_units:
        joints = dict.fromkeys(units.keys, "deg")  # written before grippers were 0-100
    if joints is not None and joints != wanted_units:
        raise ConfigurationError(
            f"policy {folder} was trained on {root}, whose joint units are {joints}; "
            f"JointLab's {task} env gives {wanted_units}: {fix}"
        )
