"""The manipulation tasks as goals: what is sampled at reset, what is achieved, what is rewarded.

Each task names the cubes it uses and samples their start poses and the goal from a
:class:`Workspace` (the ring of distances from the robot's base at which its gripper reaches
the table and a hover height above it, measured once per robot with the grasp IK). Cubes
start on the table with their faces turned towards the base (yaw = their azimuth, as
panda-gym's cubes start unrotated), so the jaws, closing across the radius, meet two faces.

Reset distributions (``U`` uniform; ``r`` distance from the base axis, ``a`` azimuth,
``s`` the cube side; ``[r0, r1]`` the workspace ring, ``a`` in ``±azimuth`` of the
workspace):

* **Lift**: cube at ``U(r0, r1)``, ``U(-a, a)``; goal the start raised by ``lift_height``.
* **Push**: cube as Lift; goal on the table ``U(push_distance)`` away in a uniform direction,
  inside the ring.
* **PickPlace**: cube as Lift; goal anywhere in the ring, on the table with probability
  ``table_goal_probability``, else ``U(s, s/2 + place_height)`` high.
* **Stack**: two cubes in the ring at least ``3 s`` apart; the goal of the first is on top
  of the second, the second stays where it is.

``achieved_goal`` is the goal cubes' centres, ``desired_goal`` their targets (3 numbers per
cube, metres). The reward depends on them only, so :meth:`GoalTask.compute_reward` recomputes
any step's reward from a batch of relabelled goals (Hindsight Experience Replay):
``sparse``: ``-1`` until every goal cube is within ``success_threshold`` of its target, then
``0``; ``dense``: minus the sum of the distances.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from jointlab.errors import ConfigurationError

__all__ = ["GOAL_TASKS", "GoalTask", "Lift", "PickPlace", "Push", "Stack", "Workspace"]

REWARD_TYPES = ("sparse", "dense")


@dataclass(frozen=True)
class Workspace:
    """Where a robot's gripper grasps on the table (see the module docstring)."""

    #: Ring of distances from the base axis, metres: ``(inner, outer)``.
    ring: tuple[float, float]
    #: Largest azimuth either side of the base's x axis, rad.
    azimuth: float
    #: Highest grasp-point height reachable over the whole ring, metres.
    height: float
    #: The base's position, world frame, metres, shape ``(3,)``.
    origin: np.ndarray

    def contains(self, point: np.ndarray, margin: float = 1e-9) -> bool:
        """True when ``point`` (m, ``(3,)``) lies in the ring, the azimuth and the height."""
        offset = np.asarray(point, dtype=np.float64) - self.origin
        r = float(np.hypot(offset[0], offset[1]))
        a = abs(float(np.arctan2(offset[1], offset[0])))
        return (
            self.ring[0] - margin <= r <= self.ring[1] + margin
            and a <= self.azimuth + margin
            and -margin <= offset[2] <= self.height + margin
        )

    def sample_xy(self, rng: np.random.Generator) -> np.ndarray:
        """A point of the ring, uniform in area, world frame, shape ``(2,)``."""
        r0, r1 = self.ring
        r = np.sqrt(rng.uniform(r0 * r0, r1 * r1))
        a = rng.uniform(-self.azimuth, self.azimuth)
        return self.origin[:2] + r * np.array([np.cos(a), np.sin(a)])


class GoalTask:
    """A goal-conditioned manipulation task (subclasses set the sampling).

    Args:
        reward_type: ``"sparse"`` or ``"dense"`` (module docstring).
        success_threshold: Distance of each goal cube from its target counted as success, m.
    """

    #: Gymnasium id.
    env_id: ClassVar[str]
    #: How many cubes of the scene the task uses.
    cubes: ClassVar[int] = 1
    #: How many of them have goals (the first ones).
    goal_cubes: ClassVar[int] = 1
    #: Episode length in environment steps.
    max_episode_steps: ClassVar[int] = 50

    def __init__(self, *, reward_type: str = "sparse", success_threshold: float = 0.02) -> None:
        if reward_type not in REWARD_TYPES:
            raise ConfigurationError(
                f"{type(self).__name__}: reward_type must be one of "
                f"{list(REWARD_TYPES)}, got {reward_type!r}"
            )
        if not (np.isfinite(success_threshold) and success_threshold > 0):
            raise ConfigurationError(
                f"{type(self).__name__}: success_threshold must be > 0 m, got {success_threshold!r}"
            )
        self.reward_type = reward_type
        self.success_threshold = float(success_threshold)

    @property
    def name(self) -> str:
        """The task's name (its class name)."""
        return type(self).__name__

    def sample(
        self, rng: np.random.Generator, workspace: Workspace, size: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Cube start positions ``(cubes, 3)`` and the goal ``(3 * goal_cubes,)``, metres."""
        raise NotImplementedError

    def _distances(self, achieved: np.ndarray, desired: np.ndarray) -> np.ndarray:
        a = np.asarray(achieved, dtype=np.float64)
        d = np.asarray(desired, dtype=np.float64)
        shape = (*a.shape[:-1], self.goal_cubes, 3)
        return np.linalg.norm(a.reshape(shape) - d.reshape(shape), axis=-1)

    def is_success(self, achieved: np.ndarray, desired: np.ndarray) -> np.ndarray:
        """True where every goal cube is within the threshold (batched over leading axes)."""
        return np.all(self._distances(achieved, desired) < self.success_threshold, axis=-1)

    def compute_reward(
        self, achieved_goal: np.ndarray, desired_goal: np.ndarray, info: Any = None
    ) -> np.ndarray:
        """The reward of ``achieved_goal`` against ``desired_goal``, batched over leading axes.

        Args:
            achieved_goal: Shape ``(..., 3 * goal_cubes)``, metres.
            desired_goal: Same shape.
            info: Unused (the reward depends on the goals only); Gymnasium's signature.

        Returns:
            float32 rewards of shape ``(...)`` (a 0-d array for one goal pair).
        """
        distances = self._distances(achieved_goal, desired_goal)
        if self.reward_type == "sparse":
            done = np.all(distances < self.success_threshold, axis=-1)
            return done.astype(np.float32) - np.float32(1.0)
        return (-np.sum(distances, axis=-1)).astype(np.float32)


def _on_table(xy: np.ndarray, size: float) -> np.ndarray:
    return np.array([xy[0], xy[1], size / 2])


class Lift(GoalTask):
    """Lift the cube ``lift_height`` straight up (module docstring: reset distribution)."""

    env_id = "jointlab/Lift-v0"
    max_episode_steps = 50

    def __init__(self, *, lift_height: float = 0.05, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not (np.isfinite(lift_height) and lift_height > 0):
            raise ConfigurationError(f"Lift: lift_height must be > 0 m, got {lift_height!r}")
        self.lift_height = float(lift_height)

    def sample(
        self, rng: np.random.Generator, workspace: Workspace, size: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The cube in the ring; the goal ``lift_height`` above it."""
        start = _on_table(workspace.sample_xy(rng), size)
        return start[None], start + np.array([0.0, 0.0, self.lift_height])


class Push(GoalTask):
    """Push the cube over the table to a goal on the table."""

    env_id = "jointlab/Push-v1"
    max_episode_steps = 80

    def __init__(self, *, push_distance: tuple[float, float] = (0.05, 0.1), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        low, high = (float(v) for v in push_distance)
        if not 0 < low <= high:
            raise ConfigurationError(
                f"Push: push_distance must be (low, high) with 0 < low <= "
                f"high metres, got {push_distance!r}"
            )
        self.push_distance = (low, high)

    def sample(
        self, rng: np.random.Generator, workspace: Workspace, size: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The cube in the ring; the goal ``push_distance`` away, in the ring."""
        for _ in range(1000):
            start = _on_table(workspace.sample_xy(rng), size)
            step = rng.uniform(*self.push_distance)
            heading = rng.uniform(-np.pi, np.pi)
            goal = start + step * np.array([np.cos(heading), np.sin(heading), 0.0])
            if workspace.contains(goal):
                return start[None], goal
        raise ConfigurationError("Push: no goal inside the workspace; lower push_distance")


class PickPlace(GoalTask):
    """Pick the cube up and place it at a goal on the table or in the air."""

    env_id = "jointlab/PickPlace-v0"
    max_episode_steps = 80

    def __init__(
        self, *, place_height: float = 0.06, table_goal_probability: float = 0.3, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        if not (np.isfinite(place_height) and place_height >= 0):
            raise ConfigurationError(
                f"PickPlace: place_height must be >= 0 m, got {place_height!r}"
            )
        if not 0.0 <= table_goal_probability <= 1.0:
            raise ConfigurationError(
                "PickPlace: table_goal_probability must be in [0, 1], got "
                f"{table_goal_probability!r}"
            )
        self.place_height = float(place_height)
        self.table_goal_probability = float(table_goal_probability)

    def sample(
        self, rng: np.random.Generator, workspace: Workspace, size: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The cube in the ring; the goal in the ring, on the table or up to ``place_height``."""
        start = _on_table(workspace.sample_xy(rng), size)
        goal = _on_table(workspace.sample_xy(rng), size)
        height = min(self.place_height, workspace.height - size / 2)
        if rng.uniform() >= self.table_goal_probability and height > size / 2:
            goal[2] = rng.uniform(size, size / 2 + height)
        return start[None], goal


class Stack(GoalTask):
    """Put the first cube on top of the second."""

    env_id = "jointlab/Stack-v0"
    cubes = 2
    goal_cubes = 2
    max_episode_steps = 120

    def sample(
        self, rng: np.random.Generator, workspace: Workspace, size: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Two cubes at least three sides apart; the first's goal on the second."""
        for _ in range(1000):
            first = _on_table(workspace.sample_xy(rng), size)
            second = _on_table(workspace.sample_xy(rng), size)
            if np.linalg.norm(first[:2] - second[:2]) >= 3 * size:
                top = second + np.array([0.0, 0.0, size])
                return np.stack([first, second]), np.concatenate([top, second])
        raise ConfigurationError("Stack: the workspace is too small for two cubes")


#: Task name -> class.
GOAL_TASKS: dict[str, type[GoalTask]] = {
    "lift": Lift,
    "push": Push,
    "pick_place": PickPlace,
    "stack": Stack,
}
