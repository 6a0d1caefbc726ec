"""Per-episode domain randomisation of the simulated robot.

A :class:`Randomization` holds ranges; :meth:`Randomization.sample` draws one
:class:`EpisodeParameters` from a seeded :class:`numpy.random.Generator` (uniformly, each
link and joint independently). ``SimRobot.reset(randomize=True)`` applies a fresh draw;
``reset()`` restores the nominal parameters of the description.

:class:`ObjectRandomization` does the same for a scene object (a pushed box): its mass and
sliding friction, drawn as an :class:`ObjectDynamics` and applied with
``World.set_object_dynamics``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from jointlab.errors import ConfigurationError, quote
from jointlab.robots.description import RobotDescription

__all__ = ["EpisodeParameters", "ObjectDynamics", "ObjectRandomization", "Randomization"]

Range = tuple[float, float]


@dataclass(frozen=True)
class EpisodeParameters:
    """Multipliers and offsets of one episode; nominal values are 1 (scales) and 0 (latency)."""

    #: Mass (and inertia) multiplier per body link: the base, then each element in file
    #: order. Shape ``(1 + len(description.actuators),)``.
    mass_scale: np.ndarray
    #: Coulomb friction multiplier per joint, shape ``(dof,)``.
    friction_scale: np.ndarray
    #: Viscous damping multiplier per joint, shape ``(dof,)``.
    damping_scale: np.ndarray
    #: Extra command latency in physics steps per joint (integers), shape ``(dof,)``.
    latency: np.ndarray
    #: Default P gain multiplier per joint, shape ``(dof,)``.
    kp_scale: np.ndarray
    #: Default D gain multiplier per joint, shape ``(dof,)``.
    kd_scale: np.ndarray

    @classmethod
    def nominal(cls, description: RobotDescription) -> EpisodeParameters:
        """The description's own parameters (all scales 1, no extra latency)."""
        dof = description.dof
        return cls(
            mass_scale=np.ones(1 + len(description.actuators)),
            friction_scale=np.ones(dof),
            damping_scale=np.ones(dof),
            latency=np.zeros(dof, dtype=np.int64),
            kp_scale=np.ones(dof),
            kd_scale=np.ones(dof),
        )


#: Largest extra latency a randomisation may draw, physics steps (a delay line's memory).
MAX_LATENCY = 1000
#: Largest multiplier a randomisation may draw.
MAX_SCALE = 1000.0


def _range_pair(field: str, value: object, what: str) -> tuple[float, float]:
    """``value`` as a ``(low, high)`` pair of floats; ``field`` and ``what`` name it in errors."""
    try:
        low, high = value  # type: ignore[misc]
        return float(low), float(high)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ConfigurationError(f"{field} must be {what}, got {quote(value)}") from exc


def _check_range(name: str, value: object, integer: bool) -> None:
    if value is None:
        return
    low_f, high_f = _range_pair(f"Randomization.{name}", value, "a (low, high) pair or None")
    if not (np.isfinite(low_f) and np.isfinite(high_f)) or low_f > high_f:
        raise ConfigurationError(
            f"Randomization.{name} = {quote(value)}: expected finite low <= high"
        )
    if integer:
        if low_f != int(low_f) or high_f != int(high_f) or low_f < 0 or high_f > MAX_LATENCY:
            raise ConfigurationError(
                f"Randomization.{name} = {quote(value)}: expected whole numbers of physics "
                f"steps in [0, {MAX_LATENCY}]"
            )
    elif low_f <= 0 or high_f > MAX_SCALE:
        raise ConfigurationError(
            f"Randomization.{name} = {quote(value)}: scales must be > 0 and <= {MAX_SCALE:g} (1 is "
            "nominal)"
        )


@dataclass(frozen=True)
class Randomization:
    """Ranges of per-episode randomisation; ``None`` leaves a quantity nominal.

    Scales multiply the description's value and are drawn uniformly in ``[low, high]``;
    ``latency`` is a whole number of physics steps drawn uniformly in ``[low, high]`` and
    added to each actuator's ``motor.delay``.
    """

    #: Multiplier of every link's mass and inertia (the base included).
    mass_scale: Range | None = None
    #: Multiplier of each joint's Coulomb friction ``dynamics.static_friction``.
    friction_scale: Range | None = None
    #: Multiplier of each joint's viscous damping ``dynamics.damping``.
    damping_scale: Range | None = None
    #: Extra actuator latency in physics steps, inclusive integer range.
    latency: tuple[int, int] | None = None
    #: Multiplier of the default P gains (used where an action's gain is NaN).
    kp_scale: Range | None = None
    #: Multiplier of the default D gains.
    kd_scale: Range | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            _check_range(f.name, getattr(self, f.name), integer=f.name == "latency")

    def sample(self, description: RobotDescription, rng: np.random.Generator) -> EpisodeParameters:
        """Draw the parameters of one episode (fields in declaration order, fixed draws)."""
        nominal = EpisodeParameters.nominal(description)
        values = {}
        for f in fields(self):
            span = getattr(self, f.name)
            base = getattr(nominal, f.name)
            if span is None:
                values[f.name] = base
            elif f.name == "latency":
                values[f.name] = rng.integers(
                    int(span[0]), int(span[1]), size=base.shape, endpoint=True
                )
            else:
                values[f.name] = rng.uniform(float(span[0]), float(span[1]), size=base.shape)
        return EpisodeParameters(**values)


@dataclass(frozen=True)
class ObjectDynamics:
    """Mass and sliding friction of a scene object in one episode."""

    #: Mass in kg.
    mass: float
    #: Sliding friction coefficient of its contacts.
    friction: float


def _check_positive_range(name: str, value: object) -> None:
    low_f, high_f = _range_pair(f"ObjectRandomization.{name}", value, "a (low, high) pair")
    if not (np.isfinite(low_f) and np.isfinite(high_f)) or not 0 < low_f <= high_f:
        raise ConfigurationError(
            f"ObjectRandomization.{name} = {quote(value)}: expected finite 0 < low <= high"
        )


@dataclass(frozen=True)
class ObjectRandomization:
    """Per-episode ranges of a scene object's mass (kg) and sliding friction coefficient.

    Both are drawn uniformly in ``[low, high]`` (mass first, then friction) from the
    environment's seeded generator, so the same seed gives the same objects.
    """

    #: Mass range in kg.
    mass: Range
    #: Sliding friction coefficient range (1 is ``CONTACT_FRICTION``, the default).
    friction: Range

    def __post_init__(self) -> None:
        for f in fields(self):
            _check_positive_range(f.name, getattr(self, f.name))

    def sample(self, rng: np.random.Generator) -> ObjectDynamics:
        """Draw one episode's mass and friction."""
        mass = float(rng.uniform(float(self.mass[0]), float(self.mass[1])))
        friction = float(rng.uniform(float(self.friction[0]), float(self.friction[1])))
        return ObjectDynamics(mass=mass, friction=friction)
