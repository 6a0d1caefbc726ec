"""Reach: bring the tool frame to a random reachable target position."""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.interface import ArrayState, NJointAction

from .base import BatchOutcome, Marker, Outcome, Task, effort_penalty, option_vector
from .kinematics import ChainKinematics, workspace_radius
from .observations import ObservationPart

__all__ = ["REWARD_TYPES", "Reach", "sample_configurations"]

REWARD_TYPES = ("dense", "sparse")


def check_reward_type(reward_type: str) -> str:
    """Return ``reward_type`` if known, else raise with a suggestion."""
    if reward_type in REWARD_TYPES:
        return reward_type
    hint = difflib.get_close_matches(str(reward_type), REWARD_TYPES, n=1)
    suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
    raise ConfigurationError(
        f"unknown reward_type {reward_type!r}; expected one of {list(REWARD_TYPES)}{suggestion}"
    )


def sample_configurations(
    rng: np.random.Generator,
    centre: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    fraction: float,
    count: int,
) -> np.ndarray:
    """Uniform joint configurations around ``centre``, shape ``(count, dof)``.

    Each joint is sampled in ``[centre + fraction*(low - centre), centre + fraction*(high -
    centre)]``, so ``fraction=1`` covers the whole ``[low, high]`` range.
    """
    lo = centre + fraction * (low - centre)
    hi = centre + fraction * (high - centre)
    return rng.uniform(lo, hi, size=(count, centre.shape[0]))


class Reach(Task):
    """Move the tool frame to a target position, sampled so that it is always reachable.

    Each reset samples a random joint configuration (within ``target_range`` of the soft
    limits around home) and takes its forward-kinematics tool position as the target,
    rejecting targets lower than ``min_height`` above the ground.

    Observation parts (after the joint parts): ``goal`` (3, m), ``tool`` (3, m), ``to_goal``
    = goal - tool (3, m), all in the world frame and bounded by the workspace radius.

    Reward, with ``d`` the tool-to-goal distance in metres:

    * ``dense``: ``-distance_weight*d + success_bonus*[d < success_threshold]
      - effort_weight*mean((torque/effort)²)``; terms ``distance``, ``success``, ``effort``.
    * ``sparse``: ``-1`` until ``d < success_threshold``, then ``0``; term ``sparse``.

    Args:
        reward_type: ``"dense"`` or ``"sparse"``. Defaults to "dense".
        distance_weight: Weight of the distance term, 1/m. Defaults to 1.0.
        success_bonus: Reward added on steps where the tool is within the threshold.
            Defaults to 0.5.
        effort_weight: Weight of the normalised effort penalty. Defaults to 0.0.
        success_threshold: Tool-to-goal distance counted as success, metres. Defaults to 0.05.
        target_range: Fraction of each joint's soft range around home that targets are
            sampled from (1.0 = the whole range). Defaults to 0.35.
        min_height: Lowest target height above the ground, metres. Defaults to 0.05.
        init_noise: Half-width of the uniform noise added to home at reset, rad (m).
            Defaults to 0.0.
        terminate_on_success: End the episode as soon as the tool is within the threshold.
            Defaults to False.
        tool: Tool frame to move (a name from ``description.tool_names``); None means the
            first one. Defaults to None.
    """

    default_robot: ClassVar[str] = "arm6"
    option_keys: ClassVar[tuple[str, ...]] = ("goal",)

    def __init__(
        self,
        *,
        reward_type: str = "dense",
        distance_weight: float = 1.0,
        success_bonus: float = 0.5,
        effort_weight: float = 0.0,
        success_threshold: float = 0.05,
        target_range: float = 0.35,
        min_height: float = 0.05,
        init_noise: float = 0.0,
        terminate_on_success: bool = False,
        tool: str | None = None,
    ) -> None:
        self.reward_type = check_reward_type(reward_type)
        if success_threshold <= 0:
            raise ConfigurationError(
                f"Reach success_threshold must be > 0 metres, got {success_threshold}"
            )
        if not 0.0 < target_range <= 1.0:
            raise ConfigurationError(f"Reach target_range must be in (0, 1], got {target_range}")
        self.distance_weight = float(distance_weight)
        self.success_bonus = float(success_bonus)
        self.effort_weight = float(effort_weight)
        self.success_threshold = float(success_threshold)
        self.target_range = float(target_range)
        self.min_height = float(min_height)
        self.init_noise = float(init_noise)
        self.terminate_on_success = bool(terminate_on_success)
        self.tool_name = tool
        self.goal = np.zeros(3)
        self._cache: tuple[ArrayState | None, np.ndarray] = (None, np.zeros(3))
        self._cache_goal: np.ndarray | None = None
        self._to_goal = np.zeros(3)
        self._locate: Any = None

    def bind(self, robot: Any) -> None:
        """Attach to the robot and compile the tool's kinematics."""
        super().bind(robot)
        d = self.description
        self.kinematics = ChainKinematics(d, self.tool_name)
        self.tool_name = self.kinematics.frame
        self.radius = workspace_radius(d)
        self._origin = np.asarray(d.base.position, dtype=np.float64)
        self.goal = self.kinematics.position(d.home)
        locator = getattr(robot, "frame_locator", None)  # a simulated robot's engine
        #: The engine's position of the tool at the robot's latest state, where it is exact
        #: and cheaper than the kinematics (:meth:`SimRobot.frame_locator`), else None.
        self._locate = None if locator is None else locator(self.tool_name)

    def observation_parts(self) -> list[ObservationPart]:
        """``goal``, ``tool`` and ``to_goal``, each 3 values in metres."""
        r = np.full(3, self.radius)
        return [
            ObservationPart("goal", self._origin - r, self._origin + r, "target position, m"),
            ObservationPart("tool", self._origin - r, self._origin + r, "tool position, m"),
            ObservationPart("to_goal", -2 * r, 2 * r, "goal - tool, m"),
        ]

    # ------------------------------------------------------------------ episode
    def sample_goal(self, rng: np.random.Generator) -> np.ndarray:
        """A reachable target: the tool position of a random configuration, shape ``(3,)``."""
        d = self.description
        for _ in range(1000):
            q = sample_configurations(rng, d.home, d.soft_lower, d.soft_upper, self.target_range, 1)
            point = self.kinematics.position(d.apply_coupling(q[0]))
            if point[2] >= self.min_height:
                return point
        raise ConfigurationError(
            f"Reach: no target above min_height={self.min_height} m found for robot "
            f"{d.name!r}; lower min_height or widen target_range"
        )

    def reset(
        self, rng: np.random.Generator, options: dict[str, Any] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sample the goal (or take ``options["goal"]``) and a start near home."""
        d = self.description
        goal = option_vector(options, "goal", 3)
        self.goal = self.sample_goal(rng) if goal is None else goal
        q = np.array(d.home)
        if self.init_noise > 0:
            q = np.clip(
                q + rng.uniform(-self.init_noise, self.init_noise, d.dof),
                d.soft_lower,
                d.soft_upper,
            )
        return d.apply_coupling(q), np.zeros(d.dof)

    def markers(self) -> list[Marker]:
        """The goal: a sphere as large as the success threshold."""
        return [Marker("goal", self.goal, radius=self.success_threshold)]

    # ------------------------------------------------------------------ step
    def tool_position(self, state: ArrayState) -> np.ndarray:
        """Tool position in metres for ``state`` (memoised for the latest state)."""
        return self._parts(state)[0]

    def _parts(self, state: ArrayState) -> tuple[np.ndarray, np.ndarray]:
        """Tool position and goal - tool (m, ``(3,)`` each) for ``state``, memoised."""
        cached_state, tool = self._cache
        if cached_state is not state or self._cache_goal is not self.goal:
            tool = None if self._locate is None else self._locate(state)
            if tool is None:
                tool = self.kinematics.position(state.position)
            self._cache = (state, tool)
            self._cache_goal, self._to_goal = self.goal, self.goal - tool
        return tool, self._to_goal

    def observe(self, state: ArrayState) -> list[np.ndarray]:
        """Goal, tool position and goal - tool."""
        tool, to_goal = self._parts(state)
        return [self.goal, tool, to_goal]

    def reward_terms(self, distance: float, effort: float) -> dict[str, float]:
        """Weighted reward terms for a tool-to-goal ``distance`` (m) and normalised effort."""
        success = distance < self.success_threshold
        if self.reward_type == "sparse":
            return {"sparse": 0.0 if success else -1.0}
        return {
            "distance": -self.distance_weight * distance,
            "success": self.success_bonus if success else 0.0,
            "effort": -self.effort_weight * effort,
        }

    def evaluate(self, state: ArrayState, action: NJointAction) -> Outcome:
        """Reward terms, ``is_success`` and ``distance`` for the step ending in ``state``."""
        x, y, z = self._parts(state)[1].tolist()
        distance = math.sqrt(x * x + y * y + z * z)  # as batch_outcome: the same rounding
        effort = effort_penalty(state, self.description.effort_limit) if self.effort_weight else 0.0
        terms = self.reward_terms(distance, effort)
        success = distance < self.success_threshold
        return Outcome.trusted(
            sum(terms.values()),
            terms,
            success and self.terminate_on_success,
            {"is_success": success, "distance": distance},
        )

    def evaluate_into(
        self, state: ArrayState, action: NJointAction, info: dict[str, Any]
    ) -> tuple[float, bool]:
        """:meth:`evaluate` written into ``info`` without the Outcome and terms dicts.

        The same entries in the same order and the same values (a test compares them).
        """
        x, y, z = self._parts(state)[1].tolist()
        distance = math.sqrt(x * x + y * y + z * z)
        success = distance < self.success_threshold
        info["is_success"] = success
        info["distance"] = distance
        if self.reward_type == "sparse":
            reward = info["reward_sparse"] = 0.0 if success else -1.0
            return reward, success and self.terminate_on_success
        effort = effort_penalty(state, self.description.effort_limit) if self.effort_weight else 0.0
        info["reward_distance"] = near = -self.distance_weight * distance
        info["reward_success"] = bonus = self.success_bonus if success else 0.0
        info["reward_effort"] = cost = -self.effort_weight * effort
        return near + bonus + cost, success and self.terminate_on_success  # as sum(terms)

    @staticmethod
    def batch_outcome(
        tasks: Sequence[Reach],
        states: Sequence[ArrayState],
        positions: np.ndarray | None = None,
        torques: np.ndarray | None = None,
    ) -> BatchOutcome:
        """:meth:`observe` and :meth:`evaluate` of N tasks (one robot description) at once.

        The same values as asking each task, computed with one forward kinematics over the N
        configurations (batched environments, :mod:`jointlab.envs.vector`). ``positions``
        and ``torques``: the states' joint positions and torques stacked, ``(N, dof)`` each,
        when the caller has them.
        """
        first = tasks[0]
        goal = np.array([task.goal for task in tasks])
        tool = None
        if first._locate is not None:  # each robot's engine, as each task's observe() does
            located = [task._locate(state) for task, state in zip(tasks, states, strict=True)]
            if all(point is not None for point in located):
                tool = np.array(located)
        if tool is None:
            if positions is None:
                positions = np.array([state.position for state in states])
            tool = first.kinematics.positions(positions)
        offset = tool - goal
        squares = offset * offset
        # (x² + y²) + z², the order of evaluate()'s Python sum: bit for bit the same distance
        distance = np.sqrt(squares[:, 0] + squares[:, 1] + squares[:, 2])
        success = distance < first.success_threshold
        if first.reward_type == "sparse":
            terms = {"sparse": np.where(success, 0.0, -1.0)}
        else:
            effort = np.zeros(len(tasks))
            if first.effort_weight:
                limit = first.description.effort_limit
                if torques is None:
                    torques = np.array([s.torque for s in states])
                effort = np.mean(np.square(torques / limit), axis=1)
            terms = {
                "distance": -first.distance_weight * distance,
                "success": np.where(success, first.success_bonus, 0.0),
                "effort": -first.effort_weight * effort,
            }
        values = iter(terms.values())
        reward = next(values).copy()
        for value in values:  # left to right, as sum() over one task's terms
            reward += value
        info = {
            "is_success": success,
            "distance": distance,
            **{f"reward_{name}": value for name, value in terms.items()},
        }
        return BatchOutcome(
            parts=[goal, tool, goal - tool],
            reward=reward,
            terminated=success & first.terminate_on_success,
            info=info,
        )

    def compute_reward(
        self, achieved_goal: np.ndarray, desired_goal: np.ndarray, info: Any = None
    ) -> np.ndarray:
        """Goal-conditioned reward for relabelling (HER), vectorised over leading axes.

        Uses the distance and success terms only (effort is not recoverable from goals).

        Args:
            achieved_goal: Tool positions, shape ``(..., 3)``, metres.
            desired_goal: Goals, shape ``(..., 3)``, metres.
            info: Ignored (Gymnasium-Robotics signature).
        """
        distance = np.linalg.norm(np.asarray(achieved_goal) - np.asarray(desired_goal), axis=-1)
        success = distance < self.success_threshold
        if self.reward_type == "sparse":
            return np.where(success, 0.0, -1.0)
        return -self.distance_weight * distance + self.success_bonus * success
