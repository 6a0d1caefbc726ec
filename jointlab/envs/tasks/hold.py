"""Hold: keep a joint pose against random external pushes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.interface import ArrayState, NJointAction

from .base import Marker, Outcome, Task, effort_penalty, option_vector
from .kinematics import workspace_radius
from .observations import ObservationPart

__all__ = ["Hold", "PushEvent"]


@dataclass(frozen=True)
class PushEvent:
    """One external push: a constant force on a link for a number of environment steps."""

    #: Link (actuator) name the force acts on.
    link: str
    #: Force in the world frame, newtons, shape ``(3,)``.
    force: np.ndarray
    #: Environment steps left, including the current one.
    steps: int


class Hold(Task):
    """Hold a target pose while random pushes act on the links.

    The target is home plus uniform noise of ``pose_range`` (rad or m) per joint; the robot
    starts there at rest. Before each step, when no push is active, a push starts with
    probability ``push_probability``: a force on a random link, in a random direction, of
    magnitude ``push_strength`` (a range) times ``mean(effort limit) / workspace radius``
    (the force the robot's average joint can resist at arm's length), lasting a random
    ``push_duration`` (a range, seconds). Pushes need a simulated robot
    (``SimRobot.apply_external_force``).

    Observation parts: ``target`` (dof, rad or m) and ``error`` = target - position (dof).
    The push itself is not observed.

    Reward, with ``e`` the position error: ``-position_weight*mean|e| -
    velocity_weight*mean|q̇| - effort_weight*mean((τ/τ_max)²)``; terms ``position``,
    ``velocity``, ``effort``. ``is_success`` is ``mean|e| < success_threshold``.

    Args:
        position_weight: Weight of the mean absolute position error, 1/rad. Defaults to 1.0.
        velocity_weight: Weight of the mean absolute joint speed, s/rad. Defaults to 0.05.
        effort_weight: Weight of the normalised effort penalty. Defaults to 0.0.
        success_threshold: Mean absolute error counted as success, rad (m). Defaults to 0.05.
        pose_range: Half-width of the uniform target noise around home, rad (m).
            Defaults to 0.3.
        push_probability: Probability per step that a push starts. Defaults to 0.1.
        push_strength: ``(low, high)`` push magnitude, as a fraction of the reference force.
            Defaults to (0.3, 1.0).
        push_duration: ``(low, high)`` push duration in seconds. Defaults to (0.1, 0.4).
    """

    default_robot: ClassVar[str] = "arm6"
    option_keys: ClassVar[tuple[str, ...]] = ("target",)

    def __init__(
        self,
        *,
        position_weight: float = 1.0,
        velocity_weight: float = 0.05,
        effort_weight: float = 0.0,
        success_threshold: float = 0.05,
        pose_range: float = 0.3,
        push_probability: float = 0.1,
        push_strength: tuple[float, float] = (0.3, 1.0),
        push_duration: tuple[float, float] = (0.1, 0.4),
    ) -> None:
        if not 0.0 <= push_probability <= 1.0:
            raise ConfigurationError(
                f"Hold push_probability must be in [0, 1], got {push_probability}"
            )
        for name, pair in (("push_strength", push_strength), ("push_duration", push_duration)):
            if len(pair) != 2 or not 0.0 <= pair[0] <= pair[1]:
                raise ConfigurationError(
                    f"Hold {name} must be (low, high) with 0 <= low <= high, got {pair!r}"
                )
        self.position_weight = float(position_weight)
        self.velocity_weight = float(velocity_weight)
        self.effort_weight = float(effort_weight)
        self.success_threshold = float(success_threshold)
        self.pose_range = float(pose_range)
        self.push_probability = float(push_probability)
        self.push_strength = (float(push_strength[0]), float(push_strength[1]))
        self.push_duration = (float(push_duration[0]), float(push_duration[1]))
        self.target = np.zeros(0)
        self.push: PushEvent | None = None

    def bind(self, robot: Any) -> None:
        """Attach to the robot; pushes need ``apply_external_force`` (a simulated robot)."""
        super().bind(robot)
        if self.push_probability > 0 and not hasattr(robot, "apply_external_force"):
            raise ConfigurationError(
                f"Hold pushes need a simulated robot with apply_external_force; "
                f"{type(robot).__name__} has none (use push_probability=0)"
            )
        d = self.description
        self.reference_force = float(np.mean(d.effort_limit)) / max(workspace_radius(d), 1e-3)
        self.links = d.joint_names
        self.target = np.array(d.home)

    def observation_parts(self) -> list[ObservationPart]:
        """``target`` and ``error``, each ``dof`` values."""
        d = self.description
        span = d.upper - d.lower
        return [
            ObservationPart(
                "target", np.array(d.lower), np.array(d.upper), "pose to hold, rad or m"
            ),
            ObservationPart("error", -span, span, "target - position, rad or m"),
        ]

    def reset(
        self, rng: np.random.Generator, options: dict[str, Any] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sample the target (or take ``options["target"]``); start there at rest."""
        d = self.description
        target = option_vector(options, "target", d.dof)
        if target is None:
            noise = rng.uniform(-self.pose_range, self.pose_range, d.dof)
            target = np.clip(d.home + noise, d.soft_lower, d.soft_upper)
        self.target = d.apply_coupling(target)
        self.push = None
        return np.array(self.target), np.zeros(d.dof)

    def markers(self) -> list[Marker]:
        """Where the tool is when the robot holds the target pose."""
        return self.tool_markers(self.target)

    def before_step(self, rng: np.random.Generator) -> None:
        """Continue the active push or start a new one, and apply it for this step."""
        if self.push_probability <= 0:
            return
        if self.push is None or self.push.steps <= 0:
            self.push = None
            if rng.uniform() < self.push_probability:
                direction = rng.normal(size=3)
                direction /= max(float(np.linalg.norm(direction)), 1e-12)
                magnitude = rng.uniform(*self.push_strength) * self.reference_force
                duration = rng.uniform(*self.push_duration)
                self.push = PushEvent(
                    link=self.links[int(rng.integers(len(self.links)))],
                    force=magnitude * direction,
                    steps=max(1, round(duration / self.control_dt)),
                )
        if self.push is not None:
            self.robot.apply_external_force(  # type: ignore[attr-defined]
                self.push.link, self.push.force, duration=self.control_dt
            )
            self.push = PushEvent(self.push.link, self.push.force, self.push.steps - 1)

    def observe(self, state: ArrayState) -> list[np.ndarray]:
        """Target and target - position."""
        return [self.target, self.target - state.position]

    def reward_terms(self, position_error: float, speed: float, effort: float) -> dict[str, float]:
        """Weighted terms for the mean absolute error (rad), speed (rad/s) and effort."""
        return {
            "position": -self.position_weight * position_error,
            "velocity": -self.velocity_weight * speed,
            "effort": -self.effort_weight * effort,
        }

    def evaluate(self, state: ArrayState, action: NJointAction) -> Outcome:
        """Reward terms, ``is_success``, ``hold_error`` and the push force in newtons."""
        position_error = float(np.mean(np.abs(self.target - state.position)))
        speed = float(np.mean(np.abs(state.velocity)))
        effort = effort_penalty(state, self.description.effort_limit) if self.effort_weight else 0.0
        terms = self.reward_terms(position_error, speed, effort)
        force = 0.0 if self.push is None else float(np.linalg.norm(self.push.force))
        return Outcome(
            reward=float(sum(terms.values())),
            terms=terms,
            terminated=False,
            info={
                "is_success": bool(position_error < self.success_threshold),
                "hold_error": position_error,
                "push_force": force,
            },
        )
