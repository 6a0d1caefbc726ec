"""Push: push a box to a goal on the ground ("the table") with the arm's tool or links."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.kinematics import forward_kinematics
from jointlab.sim.randomization import ObjectDynamics, ObjectRandomization

from .base import Marker, Outcome, Task, effort_penalty, option_vector
from .kinematics import ChainKinematics, workspace_radius
from .observations import ObservationPart

__all__ = ["Push", "segment_distances"]

#: Colour of the box (RGBA).
BOX_RGBA = (0.2, 0.4, 0.9, 1.0)
#: Random configurations used once per robot to find where the tool reaches the table.
_WORKSPACE_SAMPLES = 4096


def segment_distances(points: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Distance from each point to the nearest of several segments, in the xy plane.

    Args:
        points: Query points, shape ``(n, 2)`` (or ``(n, 3)``; z is ignored), metres.
        starts: Segment start points, shape ``(m, 2+)``.
        ends: Segment end points, shape ``(m, 2+)``.

    Returns:
        Distances in metres, shape ``(n,)``.
    """
    p = np.asarray(points)[:, None, :2]
    a = np.asarray(starts)[None, :, :2]
    ab = np.asarray(ends)[None, :, :2] - a
    length2 = np.maximum(np.sum(ab * ab, axis=-1), 1e-12)
    t = np.clip(np.sum((p - a) * ab, axis=-1) / length2, 0.0, 1.0)
    nearest = a + t[..., None] * ab
    return np.min(np.linalg.norm(p - nearest, axis=-1), axis=1)


class Push(Task):
    """Push a box over the ground to a goal position.

    The box is created once (``World.add_box``) and moved at every reset. Its start and
    goal are sampled in the ring of horizontal distances from the base at which the tool
    reaches down to box height (found once per robot from random configurations), the start
    clear of the arm's initial pose, the goal ``goal_distance`` (a range, metres) away.

    For a robot whose tool moves in a horizontal plane (``planar2``), the box is made tall
    enough to reach that plane, so the links can push it; otherwise it is a cube of side
    ``box_size``.

    Observation parts (metres, world frame): ``tool`` (3), ``box`` (3), ``goal`` (3),
    ``box_to_tool`` = tool - box (3) and ``goal_to_box`` = goal - box (3).

    Reward, with ``g`` the horizontal box-to-goal distance and ``r`` the tool-to-box
    distance: ``-goal_weight*g - reach_weight*r + success_bonus*[g < success_threshold] -
    effort_weight*mean((τ/τ_max)²)``; terms ``goal``, ``reach``, ``success``, ``effort``.

    Args:
        goal_weight: Weight of the box-to-goal distance, 1/m. Defaults to 1.0.
        reach_weight: Weight of the tool-to-box distance, 1/m. Defaults to 0.2.
        success_bonus: Reward on steps where the box is within the threshold. Defaults to 0.1.
        effort_weight: Weight of the normalised effort penalty. Defaults to 0.0.
        success_threshold: Box-to-goal distance counted as success, metres. Defaults to 0.05.
        box_size: Side of the box's square footprint, metres. Defaults to 0.08.
        box_mass: Box mass, kg. Defaults to 0.2.
        goal_distance: ``(low, high)`` start-to-goal distance, metres. Defaults to (0.1, 0.2).
        tool: Tool frame (a name from ``description.tool_names``); None means the first.
            Defaults to None.
        box_randomization: Ranges of the box's mass and sliding friction, drawn at every
            reset from the environment's seeded generator (after the start and goal); None
            keeps ``box_mass`` and friction 1. Defaults to None.
    """

    default_robot: ClassVar[str] = "planar2"
    option_keys: ClassVar[tuple[str, ...]] = ("goal", "box")

    def __init__(
        self,
        *,
        goal_weight: float = 1.0,
        reach_weight: float = 0.2,
        success_bonus: float = 0.1,
        effort_weight: float = 0.0,
        success_threshold: float = 0.05,
        box_size: float = 0.08,
        box_mass: float = 0.2,
        goal_distance: tuple[float, float] = (0.1, 0.2),
        tool: str | None = None,
        box_randomization: ObjectRandomization | None = None,
    ) -> None:
        if box_size <= 0 or box_mass <= 0:
            raise ConfigurationError(
                f"Push box_size and box_mass must be > 0, got {box_size} m and {box_mass} kg"
            )
        if len(goal_distance) != 2 or not 0.0 <= goal_distance[0] <= goal_distance[1]:
            raise ConfigurationError(
                f"Push goal_distance must be (low, high) with 0 <= low <= high, got {goal_distance}"
            )
        if box_randomization is not None and not isinstance(box_randomization, ObjectRandomization):
            raise ConfigurationError(
                "Push box_randomization must be an ObjectRandomization or None, got "
                f"{type(box_randomization).__name__}"
            )
        self.goal_weight = float(goal_weight)
        self.reach_weight = float(reach_weight)
        self.success_bonus = float(success_bonus)
        self.effort_weight = float(effort_weight)
        self.success_threshold = float(success_threshold)
        self.box_size = float(box_size)
        self.box_mass = float(box_mass)
        self.goal_distance = (float(goal_distance[0]), float(goal_distance[1]))
        self.tool_name = tool
        self.box_randomization = box_randomization
        #: The box's mass and friction in the current episode.
        self.box_dynamics = ObjectDynamics(mass=self.box_mass, friction=1.0)
        self.box: Any = None
        self.goal = np.zeros(3)
        self.box_start = np.zeros(3)
        #: Box centre at the latest observation, metres, shape ``(3,)``.
        self.box_position = np.zeros(3)
        self._observed: tuple[ArrayState | None, np.ndarray] = (None, np.zeros(3))

    # ------------------------------------------------------------------ setup
    def bind(self, robot: Any) -> None:
        """Find the workspace ring and create the box in the robot's world."""
        super().bind(robot)
        world = getattr(robot, "world", None)
        if world is None:
            raise ConfigurationError(
                f"Push needs a simulated robot with a world; {type(robot).__name__} has none"
            )
        self.world = world
        d = self.description
        self.kinematics = ChainKinematics(d, self.tool_name)
        self.tool_name = self.kinematics.frame
        self.radius = workspace_radius(d)
        self._origin = np.asarray(d.base.position, dtype=np.float64)
        # A fixed generator: this is a property of the robot, not episode randomness.
        samples = np.random.default_rng(0).uniform(
            d.soft_lower, d.soft_upper, size=(_WORKSPACE_SAMPLES, d.dof)
        )
        points = forward_kinematics(d, d.apply_coupling(samples)).tools[self.tool_name][:, :3, 3]
        planar = float(np.ptp(points[:, 2])) < 1e-6
        half = self.box_size / 2
        self.half_height = 0.5 * (points[0, 2] + half) if planar else half
        low = points[:, 2] <= 2 * self.half_height
        if np.count_nonzero(low) < 10:
            raise ConfigurationError(
                f"Push: the tool of robot {d.name!r} does not reach down to box height "
                f"({2 * self.half_height:.3f} m)"
            )
        ring = np.linalg.norm(points[low, :2] - self._origin[:2], axis=1)
        self.ring = (float(np.percentile(ring, 20)), float(np.percentile(ring, 90)))
        self.half_extents = (half, half, self.half_height)
        self.box = world.add_box(
            self.half_extents,
            position=(*self._start_guess(), self.half_height),
            mass=self.box_mass,
            rgba=BOX_RGBA,
        )

    def _start_guess(self) -> tuple[float, float]:
        r = 0.5 * (self.ring[0] + self.ring[1])
        return float(self._origin[0] + r), float(self._origin[1] + r)

    def observation_parts(self) -> list[ObservationPart]:
        """``tool``, ``box``, ``goal``, ``box_to_tool`` and ``goal_to_box`` (3 each, m)."""
        r = np.full(3, self.radius + self.box_size)
        low, high = self._origin - r, self._origin + r
        return [
            ObservationPart("tool", low, high, "tool position, m"),
            ObservationPart("box", low, high, "box centre, m"),
            ObservationPart("goal", low, high, "goal for the box centre, m"),
            ObservationPart("box_to_tool", -2 * r, 2 * r, "tool - box, m"),
            ObservationPart("goal_to_box", -2 * r, 2 * r, "goal - box, m"),
        ]

    # ------------------------------------------------------------------ episode
    def sample_episode(
        self, rng: np.random.Generator, q0: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Box start and goal (each ``(3,)``, m) for an arm starting at ``q0``."""
        d = self.description
        kin = forward_kinematics(d, q0)
        clearance = self.box_size * 0.75 + 0.05
        starts, ends = kin.frames[:, :3, 3], kin.ends[:, :3, 3]
        for _ in range(100):
            radius = rng.uniform(*self.ring, size=64)
            angle = rng.uniform(-np.pi, np.pi, size=64)
            xy = self._origin[:2] + np.stack([radius * np.cos(angle), radius * np.sin(angle)], 1)
            free = segment_distances(xy, starts, ends) > clearance
            step = rng.uniform(*self.goal_distance, size=64)
            heading = rng.uniform(-np.pi, np.pi, size=64)
            goal = xy + np.stack([step * np.cos(heading), step * np.sin(heading)], 1)
            goal_radius = np.linalg.norm(goal - self._origin[:2], axis=1)
            inside = (goal_radius >= self.ring[0]) & (goal_radius <= self.ring[1])
            ok = np.flatnonzero(free & inside)
            if ok.size:
                i = ok[0]
                return (
                    np.array([*xy[i], self.half_height]),
                    np.array([*goal[i], self.half_height]),
                )
        raise ConfigurationError(f"Push: no free box start found for robot {d.name!r}")

    def reset(
        self, rng: np.random.Generator, options: dict[str, Any] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sample the box start and goal (or take ``options["box"]``/``options["goal"]``)."""
        d = self.description
        q0 = np.array(d.home)
        start, goal = self.sample_episode(rng, q0)
        box = option_vector(options, "box", 3)
        given_goal = option_vector(options, "goal", 3)
        self.box_start = start if box is None else box
        self.goal = goal if given_goal is None else given_goal
        if self.box_randomization is not None:
            self.box_dynamics = self.box_randomization.sample(rng)
        return q0, np.zeros(d.dof)

    def after_reset(self, state: ArrayState) -> None:
        """Put the box at its start, at rest and upright (with this episode's dynamics)."""
        if self.box_randomization is not None:
            self.world.set_object_dynamics(
                self.box, mass=self.box_dynamics.mass, friction=self.box_dynamics.friction
            )
        self.world.reset_body(self.box, position=self.box_start, orientation=(0.0, 0.0, 0.0))

    def markers(self) -> list[Marker]:
        """The goal: a disc on the ground as large as the success threshold."""
        centre = np.array([self.goal[0], self.goal[1], 0.003])
        return [Marker("goal", centre, radius=self.success_threshold, shape="disc")]

    # ------------------------------------------------------------------ step
    def observe(self, state: ArrayState) -> list[np.ndarray]:
        """Tool, box, goal and the two difference vectors."""
        tool = self.kinematics.position(state.position)
        box = np.asarray(self.world.body_pose(self.box)[0], dtype=np.float64)
        self.box_position = box
        self._observed = (state, tool)
        return [tool, box, self.goal, tool - box, self.goal - box]

    def reward_terms(
        self, goal_distance: float, reach_distance: float, effort: float
    ) -> dict[str, float]:
        """Weighted terms for box-to-goal and tool-to-box distances (m) and effort."""
        return {
            "goal": -self.goal_weight * goal_distance,
            "reach": -self.reach_weight * reach_distance,
            "success": self.success_bonus if goal_distance < self.success_threshold else 0.0,
            "effort": -self.effort_weight * effort,
        }

    def evaluate(self, state: ArrayState, action: NJointAction) -> Outcome:
        """Reward terms, ``is_success`` and ``goal_distance`` for the latest observation."""
        if self._observed[0] is not state:
            self.observe(state)
        tool = self._observed[1]
        box = self.box_position
        goal_distance = float(np.linalg.norm(self.goal[:2] - box[:2]))
        reach_distance = float(np.linalg.norm(tool - box))
        effort = effort_penalty(state, self.description.effort_limit) if self.effort_weight else 0.0
        terms = self.reward_terms(goal_distance, reach_distance, effort)
        return Outcome(
            reward=float(sum(terms.values())),
            terms=terms,
            terminated=False,
            info={
                "is_success": bool(goal_distance < self.success_threshold),
                "goal_distance": goal_distance,
            },
        )

    def close(self) -> None:
        """Remove the box from the world (the env closes its task before its robot)."""
        if self.box is not None:
            self.world.remove(self.box)
            self.box = None
