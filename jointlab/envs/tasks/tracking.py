"""JointTracking: follow a random smooth joint-space reference."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.interface import ArrayState, NJointAction

from .base import Marker, Outcome, Task, effort_penalty
from .observations import ObservationPart

__all__ = ["JointTracking", "SineReference"]


class SineReference:
    """A sum of sines per joint: ``q(t) = centre + sum_k a_k sin(2π f_k t + φ_k)``.

    Args:
        centre: Offset per joint, shape ``(dof,)``, rad or m.
        amplitude: Amplitudes, shape ``(dof, K)``.
        frequency: Frequencies in Hz, shape ``(dof, K)``.
        phase: Phases in rad, shape ``(dof, K)``.
    """

    def __init__(
        self, centre: np.ndarray, amplitude: np.ndarray, frequency: np.ndarray, phase: np.ndarray
    ) -> None:
        self.centre = np.asarray(centre, dtype=np.float64)
        self.amplitude = np.asarray(amplitude, dtype=np.float64)
        self.omega = 2.0 * np.pi * np.asarray(frequency, dtype=np.float64)
        self.phase = np.asarray(phase, dtype=np.float64)

    def position(self, t: float) -> np.ndarray:
        """Reference position at time ``t`` (s), shape ``(dof,)``."""
        return self.centre + np.sum(self.amplitude * np.sin(self.omega * t + self.phase), axis=1)

    def velocity(self, t: float) -> np.ndarray:
        """Reference velocity at time ``t`` (s), shape ``(dof,)``."""
        return np.sum(self.amplitude * self.omega * np.cos(self.omega * t + self.phase), axis=1)


class JointTracking(Task):
    """Follow a random smooth joint reference (a sum of sines per joint).

    At each reset every joint gets ``components`` sines with random frequencies in
    ``[min_frequency, max_frequency]`` Hz and random phases; their amplitudes add up to at
    most ``amplitude`` times the distance from home to the nearer soft limit, so the
    reference stays inside the limits. The robot starts on the reference.

    Observation parts: ``reference`` (dof, the reference position at the end of the next
    step), ``reference_velocity`` (dof, likewise) and ``error`` = reference - position (dof).

    Reward, with ``e`` the position error and ``ė`` the velocity error at the end of a step:
    ``-position_weight*mean|e| - velocity_weight*mean|ė| - effort_weight*mean((τ/τ_max)²)``;
    terms ``position``, ``velocity``, ``effort``. ``is_success`` is ``mean|e| <
    success_threshold``.

    Args:
        position_weight: Weight of the mean absolute position error, 1/rad. Defaults to 1.0.
        velocity_weight: Weight of the mean absolute velocity error, s/rad. Defaults to 0.05.
        effort_weight: Weight of the normalised effort penalty. Defaults to 0.0.
        success_threshold: Mean absolute position error counted as success, rad (m).
            Defaults to 0.05.
        amplitude: Fraction of the home-to-soft-limit distance the reference may use.
            Defaults to 0.5.
        components: Number of sines per joint. Defaults to 3.
        min_frequency: Lowest sine frequency, Hz. Defaults to 0.05.
        max_frequency: Highest sine frequency, Hz. Defaults to 0.25.
    """

    default_robot: ClassVar[str] = "planar2"

    def __init__(
        self,
        *,
        position_weight: float = 1.0,
        velocity_weight: float = 0.05,
        effort_weight: float = 0.0,
        success_threshold: float = 0.05,
        amplitude: float = 0.5,
        components: int = 3,
        min_frequency: float = 0.05,
        max_frequency: float = 0.25,
    ) -> None:
        if not 0.0 <= amplitude <= 1.0:
            raise ConfigurationError(f"JointTracking amplitude must be in [0, 1], got {amplitude}")
        if components < 1:
            raise ConfigurationError(f"JointTracking components must be >= 1, got {components}")
        if not 0.0 < min_frequency <= max_frequency:
            raise ConfigurationError(
                "JointTracking needs 0 < min_frequency <= max_frequency, got "
                f"{min_frequency} and {max_frequency} Hz"
            )
        self.position_weight = float(position_weight)
        self.velocity_weight = float(velocity_weight)
        self.effort_weight = float(effort_weight)
        self.success_threshold = float(success_threshold)
        self.amplitude = float(amplitude)
        self.components = int(components)
        self.min_frequency = float(min_frequency)
        self.max_frequency = float(max_frequency)
        self.reference: SineReference | None = None
        self.steps = 0

    def observation_parts(self) -> list[ObservationPart]:
        """``reference``, ``reference_velocity`` and ``error``, each ``dof`` values."""
        d = self.description
        span = d.upper - d.lower
        v = 2.0 * d.velocity_limit
        return [
            ObservationPart(
                "reference",
                np.array(d.lower),
                np.array(d.upper),
                "reference position at the end of the next step, rad or m",
            ),
            ObservationPart("reference_velocity", -v, v, "reference velocity, rad/s or m/s"),
            ObservationPart("error", -span, span, "reference - position, rad or m"),
        ]

    def sample_reference(self, rng: np.random.Generator) -> SineReference:
        """A random reference inside the soft limits (see the class docstring)."""
        d = self.description
        dof, k = d.dof, self.components
        room = np.maximum(np.minimum(d.home - d.soft_lower, d.soft_upper - d.home), 0.0)
        weights = rng.uniform(0.0, 1.0, size=(dof, k))
        weights /= weights.sum(axis=1, keepdims=True)
        scale = self.amplitude * room * rng.uniform(0.5, 1.0, size=dof)
        amplitude = weights * scale[:, None]
        amplitude[d.dependent] = 0.0
        frequency = rng.uniform(self.min_frequency, self.max_frequency, size=(dof, k))
        phase = rng.uniform(0.0, 2.0 * np.pi, size=(dof, k))
        return SineReference(np.array(d.home), amplitude, frequency, phase)

    def reset(
        self, rng: np.random.Generator, options: dict[str, Any] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Sample a reference; start on it at ``t = 0``."""
        self.reference = self.sample_reference(rng)
        self.steps = 0
        return self.targets(0.0)

    def before_step(self, rng: np.random.Generator) -> None:
        """Advance the reference clock by one control period."""
        self.steps += 1

    def targets(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Reference position and velocity at time ``t`` (s), coupled joints included."""
        if self.reference is None:
            raise ConfigurationError("JointTracking: call reset() before stepping")
        d = self.description
        q, qd = self.reference.position(t), self.reference.velocity(t)
        if d.dependent.any():
            matrix, _ = d.coupling_matrix
            q = d.apply_coupling(q)
            qd = np.where(d.dependent, matrix @ qd, qd)
        return q, qd

    def markers(self) -> list[Marker]:
        """Where the tool is on the reference, now (nothing before the first reset)."""
        if self.reference is None:
            return []
        return self.tool_markers(self.targets(self.steps * self.control_dt)[0])

    def observe(self, state: ArrayState) -> list[np.ndarray]:
        """The reference one step ahead, its velocity, and its difference to the position."""
        target, velocity = self.targets((self.steps + 1) * self.control_dt)
        return [target, velocity, target - state.position]

    def reward_terms(
        self, position_error: float, velocity_error: float, effort: float
    ) -> dict[str, float]:
        """Weighted terms for mean absolute errors (rad, rad/s) and normalised effort."""
        return {
            "position": -self.position_weight * position_error,
            "velocity": -self.velocity_weight * velocity_error,
            "effort": -self.effort_weight * effort,
        }

    def evaluate(self, state: ArrayState, action: NJointAction) -> Outcome:
        """Compare the state with the reference at the current step's time."""
        target, velocity = self.targets(self.steps * self.control_dt)
        position_error = float(np.mean(np.abs(target - state.position)))
        velocity_error = float(np.mean(np.abs(velocity - state.velocity)))
        effort = effort_penalty(state, self.description.effort_limit) if self.effort_weight else 0.0
        terms = self.reward_terms(position_error, velocity_error, effort)
        success = position_error < self.success_threshold
        return Outcome(
            reward=float(sum(terms.values())),
            terms=terms,
            terminated=False,
            info={"is_success": bool(success), "tracking_error": position_error},
        )
