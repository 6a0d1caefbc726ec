"""``ManipulationEnv``: a robot with a gripper, a table with cubes and a goal, for Gymnasium.

Goal-conditioned: observations are a ``Dict`` of ``observation``, ``achieved_goal`` and
``desired_goal`` (Gymnasium-Robotics' convention), and :meth:`ManipulationEnv.compute_reward`
recomputes any step's reward from goals alone, so Stable-Baselines3's ``HerReplayBuffer``
works unchanged. The environment owns no physics: a :class:`~jointlab.sim.SimRobot` on either
engine holds the robot and its world; the cubes are world objects from the scene file.

Two action spaces, each a ``Box(-1, 1)``:

* ``"ee"`` (panda-gym's): ``(dx, dy, dz, grip)``. The target of the grasp point moves by
  ``ee_step`` metres per unit and stays in the workspace box; the joints come from the grasp
  IK (:class:`~jointlab.envs.manipulation.ik.GraspIK`: the jaws close horizontally across the
  radius, the approach as near straight down as the arm allows), warm-started at every step.
* ``"joint"`` (what LeRobot policies output): one number per joint, the change of that
  joint's position target in units of ``config_speed * control_dt``.

In both the gripper's last number maps ``-1`` to "squeeze a cube" (a little past the contact
angle, :meth:`Gripper.squeeze`) and ``+1`` to open. Targets are positions held by the
description's PD gains at every physics step, the servo law of the real arms.

Time: one step is ``control_dt`` (0.04 s: 25 Hz, panda-gym's rate) of ``dt`` = 0.002 s physics
steps. ``info["control_period"]`` is the simulated time the step advanced, which the
environment checks against ``control_dt`` (a mismatch raises: the rate a policy was trained at
is the rate it runs at).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from jointlab.errors import ConfigurationError, SimulationError
from jointlab.interface import NJointAction
from jointlab.robots.description import RobotDescription
from jointlab.robots.yaml_io import dump_yaml, load_robot, parse_yaml

from ..rendering import default_camera, draw_markers
from ..tasks.base import GOAL_RGBA, Marker
from .goals import GOAL_TASKS, GoalTask, Workspace
from .gripper import Gripper, find_gripper
from .ik import GraspIK
from .scene import TableScene, load_scene

__all__ = ["ACTION_SPACES", "ManipulationEnv", "measure_workspace"]

#: The action spaces (module docstring).
ACTION_SPACES = ("ee", "joint")
#: Hover height of the ready pose's grasp point above a cube's centre, metres.
HOVER = 0.06
#: Bound of every observation element (generous: SI units near the robot).
OBSERVATION_BOUND = 100.0
#: Largest approach tilt from straight down accepted in the workspace, rad.
MAX_TILT = 0.35


def _tangential(point: np.ndarray, origin: np.ndarray) -> np.ndarray:
    """Horizontal unit vector across the radius through ``point`` (the jaws' closing axis)."""
    a = float(np.arctan2(point[1] - origin[1], point[0] - origin[0]))
    return np.array([-np.sin(a), np.cos(a), 0.0])


@lru_cache(maxsize=16)
def _workspace_cached(text: str, size: float) -> tuple[Workspace, tuple[float, ...]]:
    description = parse_yaml(text)
    return _measure(description, find_gripper(description), size)


def measure_workspace(description: RobotDescription, size: float) -> tuple[Workspace, np.ndarray]:
    """The robot's grasping :class:`Workspace` for cubes of side ``size`` and a ready pose.

    The grasp IK is solved on a grid of distances at the table (the cube's centre height)
    and ``HOVER`` above it; the ring is the widest run of distances where both are reached
    with the approach within ``MAX_TILT`` of vertical. The ready pose (jaws open) hovers over
    the middle of the ring. Cached per robot file and size.

    Raises:
        ConfigurationError: the robot's gripper cannot reach the table anywhere (the IK
            cannot reach it), naming the robot.
    """
    workspace, ready = _workspace_cached(dump_yaml(description), float(size))
    return workspace, np.array(ready)


def _measure(
    description: RobotDescription, gripper: Gripper, size: float
) -> tuple[Workspace, tuple[float, ...]]:
    ik = GraspIK(description, gripper.wrist, gripper.grasp_point(size), gripper.arm_joints)
    origin = np.asarray(description.base.position, dtype=np.float64)
    home = np.array(description.home, dtype=np.float64)
    radii = np.arange(0.04, 0.6, 0.02)
    heights = (size / 2, size / 2 + HOVER)
    reached = np.zeros(radii.size, dtype=bool)
    side = np.array([0.0, 1.0, 0.0])
    q = home
    for i, r in enumerate(radii):
        ok = True
        for z in heights:
            target = origin + np.array([r, 0.0, z - origin[2]])
            best = ik.solve(target, side, q, iterations=40)
            ok = ok and best.reached() and best.tilt <= MAX_TILT
            q = best.q if best.reached() else q
        reached[i] = ok
    if not reached.any():
        raise ConfigurationError(
            f"robot {description.name!r}: its gripper's IK reaches no point of the table (cube "
            f"side {size} m); the manipulation tasks need a gripper that reaches the ground "
            "plane beside the base: move the base (base.position) or lengthen the arm"
        )
    runs, start = [], None
    for i, ok in enumerate([*reached, False]):
        if ok and start is None:
            start = i
        elif not ok and start is not None:
            runs.append((start, i - 1))
            start = None
    first, last = max(runs, key=lambda run: run[1] - run[0])
    # Margins: the grid's step inside, and 5 cm off the outer edge, where the arm is nearly
    # stretched and the warm-started IK of a moving target can stall on a joint limit.
    ring = (float(radii[first]) + 0.02, float(radii[last]) - 0.05)
    if ring[1] <= ring[0]:
        ring = (float(radii[first]), float(radii[last]))
    pan = gripper.arm_joints[0]
    span = min(abs(description.soft_lower[pan]), abs(description.soft_upper[pan]))
    azimuth = float(min(np.pi / 3, 0.8 * span))
    middle = origin + np.array([0.5 * (ring[0] + ring[1]), 0.0, size / 2 + HOVER - origin[2]])
    ready = ik.solve(middle, side, home, iterations=100).q
    ready[gripper.joint] = gripper.open
    top = size / 2 + HOVER
    return Workspace(ring, azimuth, top, origin), tuple(ready.tolist())


class ManipulationEnv(gymnasium.Env):
    """A goal-conditioned manipulation task (module docstring).

    Args:
        task: A :class:`GoalTask` or its name (``"lift"``, ``"push"``, ``"pick_place"``,
            ``"stack"``), built with ``task_kwargs``.
        robot: A built-in robot name, a robot file or a description (it needs a gripper).
        engine: ``"pybullet"`` (default) or ``"mujoco"``.
        action_space: ``"ee"`` or ``"joint"`` (module docstring).
        scene: A scene name, a scene file or a :class:`TableScene`.
        control_dt: Environment step, seconds.
        dt: Physics step, seconds (``control_dt`` is a whole number of them).
        ee_step: Grasp-point move per unit action per step in ``"ee"``, metres.
        render_mode: None or ``"rgb_array"``.
        **task_kwargs: The task's keywords (``reward_type``, ``success_threshold``...).
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 25}  # noqa: RUF012

    def __init__(
        self,
        task: GoalTask | str = "lift",
        robot: str | Path | RobotDescription = "so101",
        *,
        engine: str | None = None,
        action_space: str = "ee",
        scene: str | Path | TableScene = "table",
        control_dt: float = 0.04,
        dt: float = 0.002,
        ee_step: float = 0.01,
        render_mode: str | None = None,
        **task_kwargs: Any,
    ) -> None:
        self._closed = True
        self.task = self._build_task(task, task_kwargs)
        if action_space not in ACTION_SPACES:
            raise ConfigurationError(
                f"action_space must be one of {list(ACTION_SPACES)}, got {action_space!r}"
            )
        if render_mode not in (None, "rgb_array"):
            raise ConfigurationError(
                f"render_mode must be None or 'rgb_array', got {render_mode!r}"
            )
        if not (np.isfinite(ee_step) and ee_step > 0):
            raise ConfigurationError(f"ee_step must be > 0 m, got {ee_step!r}")
        self.scene = load_scene(scene)
        if len(self.scene.cubes) < self.task.cubes:
            raise ConfigurationError(
                f"task {self.task.name} needs {self.task.cubes} cube(s); scene "
                f"{self.scene.name!r} has {len(self.scene.cubes)}: add cubes to the scene file"
            )
        self.cube_specs = self.scene.cubes[: self.task.cubes]
        self.description = load_robot(robot)
        self.gripper = find_gripper(self.description)
        self.size = self.cube_specs[0].size
        self.workspace, self.ready = measure_workspace(self.description, self.size)
        self.action_mode = action_space
        self.render_mode = render_mode
        self.ee_step = float(ee_step)
        from jointlab.sim import SimRobot

        self.robot = SimRobot(self.description, dt=dt, control_dt=control_dt, engine=engine)
        self._closed = False
        try:
            self.world = self.robot.world
            self.control_dt = float(self.robot.control_dt)
            self.metadata = {**type(self).metadata, "render_fps": round(1.0 / self.control_dt)}
            self.cubes = [
                self.world.add_box(
                    (c.size / 2,) * 3,
                    position=(0.3 + 0.1 * i, 0.4, c.size / 2),
                    mass=c.mass,
                    rgba=c.rgba,
                    friction=c.friction,
                )
                for i, c in enumerate(self.cube_specs)
            ]
        except BaseException:
            self.close()
            raise
        g = self.gripper
        self.ik = GraspIK(self.description, g.wrist, g.grasp_point(self.size), g.arm_joints)
        self.squeeze = g.squeeze(self.description, self.size)
        self.open_command = float(g.holding(self.description, self.size) + g.opening_sign * 0.6)
        dof = self.description.dof
        self.joint_step = np.asarray(self.description.config_speed) * self.control_dt
        n = 4 if action_space == "ee" else dof
        self.action_space = spaces.Box(-1.0, 1.0, (n,), np.float32)
        goal_size = 3 * self.task.goal_cubes
        obs_size = 2 * dof + 4 + 11 * self.task.cubes
        # Generous finite bounds (m, rad, m/s, rad/s): positions stay within metres of the
        # base and speeds within the joints' limits times a few.
        box = spaces.Box(-OBSERVATION_BOUND, OBSERVATION_BOUND, (goal_size,), np.float32)
        self.observation_space = spaces.Dict(
            {
                "observation": spaces.Box(
                    -OBSERVATION_BOUND, OBSERVATION_BOUND, (obs_size,), np.float32
                ),
                "achieved_goal": box,
                "desired_goal": box,
            }
        )
        lo = self.workspace.origin + np.array([-self.workspace.ring[1]] * 2 + [0.0])
        hi = self.workspace.origin + np.array(
            [self.workspace.ring[1]] * 2 + [self.workspace.height + 0.05]
        )
        self._ee_box = (lo, hi)
        self.goal = np.zeros(goal_size)
        self.q_target = np.array(self.ready)
        self.ee_target = np.zeros(3)
        self._state: Any = None

    # ------------------------------------------------------------------ construction
    @staticmethod
    def _build_task(task: GoalTask | str, kwargs: dict[str, Any]) -> GoalTask:
        if isinstance(task, GoalTask):
            if kwargs:
                raise ConfigurationError(f"unknown ManipulationEnv arguments {sorted(kwargs)}")
            return task
        if task not in GOAL_TASKS:
            raise ConfigurationError(
                f"unknown manipulation task {task!r}; expected one of {list(GOAL_TASKS)}"
            )
        try:
            return GOAL_TASKS[task](**kwargs)
        except TypeError as exc:
            raise ConfigurationError(f"task {task!r}: {exc}") from exc

    # ------------------------------------------------------------------ Gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode: cubes and goal from the task's reset distribution.

        ``options`` may hold ``"goal"`` (the desired goal, checked against the workspace)
        and ``"cubes"`` (start positions, shape ``(cubes, 3)``).
        """
        super().reset(seed=seed)
        self._check_open()
        starts, goal = self.task.sample(self.np_random, self.workspace, self.size)
        options = dict(options or {})
        unknown = set(options) - {"goal", "cubes"}
        if unknown:
            raise ConfigurationError(
                f"unknown reset option(s) {sorted(unknown)}; known: 'goal', 'cubes'"
            )
        if options.get("goal") is not None:
            goal = self._checked_goal(options["goal"])
        if options.get("cubes") is not None:
            starts = np.asarray(options["cubes"], dtype=np.float64).reshape(self.task.cubes, 3)
        self.goal = goal
        self.q_target = np.array(self.ready)
        self.robot.reset(self.q_target, np.zeros(self.description.dof))
        for body, start in zip(self.cubes, starts, strict=True):
            yaw = float(
                np.arctan2(start[1] - self.workspace.origin[1], start[0] - self.workspace.origin[0])
            )
            self.world.reset_body(body, position=start, orientation=(0.0, 0.0, yaw))
        self._state = self.robot.read()
        self.ee_target = self.ik.pose(self._state.position)[0]
        observation = self._observe()
        return observation, {
            "is_success": bool(self.task.is_success(observation["achieved_goal"], self.goal))
        }

    def _checked_goal(self, value: Any) -> np.ndarray:
        goal = np.asarray(value, dtype=np.float64).reshape(-1)
        if goal.shape != self.goal.shape or not np.isfinite(goal).all():
            raise ConfigurationError(
                f"reset option 'goal' must be {self.goal.size} finite "
                f"numbers (metres), got {value!r}"
            )
        for point in goal.reshape(-1, 3):
            if not self.workspace.contains(point, margin=self.size):
                ws = self.workspace
                raise ConfigurationError(
                    f"goal {point.tolist()} is outside the workspace of robot "
                    f"{self.description.name!r} (distance from the base in "
                    f"[{ws.ring[0]:.3f}, {ws.ring[1]:.3f}] m, azimuth within ±{ws.azimuth:.2f} "
                    f"rad, height in [0, {ws.height:.3f}] m): choose a goal inside it"
                )
        return goal

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict]:
        """Apply one action for ``control_dt`` and observe (module docstring)."""
        if self._state is None:
            self._check_open()
            raise ConfigurationError("call reset() before step()")
        a = np.clip(
            np.asarray(action, dtype=np.float64).reshape(self.action_space.shape), -1.0, 1.0
        )
        if not np.isfinite(a).all():
            raise ConfigurationError(f"action must be finite numbers, got {action!r}")
        self._apply(a)
        before = self.robot.time
        self.robot.apply(NJointAction.Position(self.q_target))
        self.robot.step()
        period = self.robot.time - before
        if abs(period - self.control_dt) > 1e-9:
            raise SimulationError(
                f"the step advanced {period} s, not the configured control_dt {self.control_dt} s"
            )
        self._state = self.robot.read()
        observation = self._observe()
        achieved = observation["achieved_goal"]
        success = bool(self.task.is_success(achieved, self.goal))
        info = {"is_success": success, "control_period": period, "control_dt": self.control_dt}
        reward = float(self.task.compute_reward(achieved, self.goal.astype(np.float32), info))
        return observation, reward, False, False, info

    def compute_reward(
        self, achieved_goal: np.ndarray, desired_goal: np.ndarray, info: Any
    ) -> np.ndarray:
        """The task's vectorised reward (:meth:`GoalTask.compute_reward`)."""
        return self.task.compute_reward(achieved_goal, desired_goal, info)

    def render(self) -> np.ndarray | None:
        """An ``(H, W, 3)`` image with the goal markers, in ``rgb_array`` mode."""
        self._check_open()
        if self.render_mode != "rgb_array":
            return None
        markers = [
            Marker(f"goal {i}", p, radius=self.scene.goal_radius, rgba=GOAL_RGBA)
            for i, p in enumerate(self.goal.reshape(-1, 3))
        ]
        draw_markers(self.world, markers)
        return self.world.render(320, 240, camera=default_camera(self.description))

    def close(self) -> None:
        """Release the robot and its world; safe to call twice."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        self._state = None
        self.robot.close()

    # ------------------------------------------------------------------ helpers
    def grip_command(self, value: float) -> float:
        """The gripper joint target of a gripper action in [-1, 1] (-1 squeezes, +1 opens)."""
        return self.squeeze + 0.5 * (value + 1.0) * (self.open_command - self.squeeze)

    def _apply(self, a: np.ndarray) -> None:
        d, g = self.description, self.gripper
        if self.action_mode == "ee":
            lo, hi = self._ee_box
            self.ee_target = np.clip(self.ee_target + a[:3] * self.ee_step, lo, hi)
            closing = _tangential(self.ee_target, self.workspace.origin)
            solution = self.ik.solve(self.ee_target, closing, self.q_target, iterations=8)
            self.q_target = solution.q
            self.q_target[g.joint] = self.grip_command(a[3])
        else:
            self.q_target = self.q_target + a * self.joint_step
        self.q_target = np.clip(self.q_target, d.soft_lower, d.soft_upper)

    def _observe(self) -> dict[str, np.ndarray]:
        state = self._state
        grasp = self.ik.pose(state.position)[0]
        parts = [state.position, state.velocity, grasp, [state.position[self.gripper.joint]]]
        achieved = []
        for body in self.cubes:
            position, rpy = self.world.body_pose(body)
            velocity = self.world.body_velocity(body)[0]
            yaw4 = 4.0 * rpy[2]  # a cube looks the same every quarter turn
            parts += [position, position - grasp, velocity, [np.sin(yaw4), np.cos(yaw4)]]
            achieved.append(position)
        achieved_goal = np.concatenate(achieved[: self.task.goal_cubes]).astype(np.float32)
        return {
            "observation": np.concatenate(parts).astype(np.float32),
            "achieved_goal": achieved_goal,
            "desired_goal": self.goal.astype(np.float32),
        }

    def _check_open(self) -> None:
        if self._closed:
            raise ConfigurationError("the environment is closed")

    @property
    def state(self) -> Any:
        """The robot's latest :class:`~jointlab.interface.ArrayState`."""
        return self._state

    def cube_poses(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each cube's position (m) and roll-pitch-yaw (rad)."""
        return [self.world.body_pose(body) for body in self.cubes]

    def __repr__(self) -> str:
        return (
            f"ManipulationEnv(task={self.task.name}, robot={self.description.name!r}, "
            f"engine={self.robot.engine!r}, action_space={self.action_mode!r})"
        )
