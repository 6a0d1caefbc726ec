"""Joint sensor model: encoder quantisation and Gaussian noise on position and velocity.

The model changes what :meth:`jointlab.sim.SimRobot.read` reports, not the physics: the
joint-level PD (the drive's own loop) runs on the true joint state, as a servo drive with its
own fine encoder does. Noise is drawn once per control period, at the end of ``step()``, from
the robot's seeded sensor generator, so readings do not depend on how often ``read()`` is
called and the same seed gives the same readings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.errors import ConfigurationError

__all__ = ["SensorModel"]

Spec = float | tuple[float, ...]


def _per_joint(name: str, value: Spec, dof: int) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        array = np.full(dof, float(array))
    if array.shape != (dof,):
        raise ConfigurationError(
            f"SensorModel.{name} must be one number or {dof} numbers (one per joint), "
            f"got {len(array)}"
        )
    return np.array(array)


@dataclass(frozen=True)
class SensorModel:
    """Encoder quantisation and white noise, per joint or one value for all joints.

    Each field is a number or a tuple of ``dof`` numbers; 0 switches the effect off.
    Quantisation rounds to the nearest multiple of the resolution; noise is added after it.
    """

    #: Position resolution (one encoder count) in rad or m.
    position_resolution: Spec = 0.0
    #: Standard deviation of position noise in rad or m.
    position_noise: Spec = 0.0
    #: Velocity resolution in rad/s or m/s.
    velocity_resolution: Spec = 0.0
    #: Standard deviation of velocity noise in rad/s or m/s.
    velocity_noise: Spec = 0.0

    def __post_init__(self) -> None:
        for name in (
            "position_resolution",
            "position_noise",
            "velocity_resolution",
            "velocity_noise",
        ):
            array = np.asarray(getattr(self, name), dtype=np.float64)
            if array.ndim > 1 or not np.all(np.isfinite(array)) or np.any(array < 0):
                raise ConfigurationError(
                    f"SensorModel.{name} must be finite numbers >= 0, got {getattr(self, name)!r}"
                )

    @classmethod
    def encoder(cls, counts_per_turn: int, noise: float = 0.0) -> SensorModel:
        """An incremental encoder of ``counts_per_turn`` on a rotary joint, optional noise (rad)."""
        if counts_per_turn <= 0:
            raise ConfigurationError(f"counts_per_turn must be > 0, got {counts_per_turn}")
        return cls(position_resolution=2.0 * np.pi / counts_per_turn, position_noise=noise)

    def bind(self, dof: int) -> BoundSensors:
        """Per-joint arrays for a robot with ``dof`` joints."""
        return BoundSensors(
            position_resolution=_per_joint("position_resolution", self.position_resolution, dof),
            position_noise=_per_joint("position_noise", self.position_noise, dof),
            velocity_resolution=_per_joint("velocity_resolution", self.velocity_resolution, dof),
            velocity_noise=_per_joint("velocity_noise", self.velocity_noise, dof),
        )


def _quantise(values: np.ndarray, resolution: np.ndarray) -> np.ndarray:
    on = resolution > 0
    if not on.any():
        return values
    step = np.where(on, resolution, 1.0)
    return np.where(on, np.round(values / step) * step, values)


@dataclass(frozen=True)
class BoundSensors:
    """A :class:`SensorModel` expanded to arrays of shape ``(dof,)``."""

    position_resolution: np.ndarray
    position_noise: np.ndarray
    velocity_resolution: np.ndarray
    velocity_noise: np.ndarray

    def measure(
        self, position: np.ndarray, velocity: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Measured position and velocity of true ``position`` and ``velocity`` (``(dof,)``).

        Draws ``2 * dof`` standard normals from ``rng`` every call (fixed consumption).
        """
        noise = rng.standard_normal((2, position.shape[0]))
        measured_position = _quantise(position, self.position_resolution)
        measured_position = measured_position + noise[0] * self.position_noise
        measured_velocity = _quantise(velocity, self.velocity_resolution)
        measured_velocity = measured_velocity + noise[1] * self.velocity_noise
        return measured_position, measured_velocity
