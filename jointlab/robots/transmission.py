"""Transmissions: motor space ↔ joint space, per actuator (the BB.Actuator seed's transmissions).

A servo reports and takes positions in its own **motor space**: encoder ticks of its output
horn. The joint it drives may sit behind a further reduction (a belt, a gear pair), be mounted
the other way round, and have its zero anywhere on the encoder. A :class:`Transmission` holds
exactly that, per actuator, in the robot file::

    transmission: {reduction: 1.0, offset: 2048, direction: 1, ticks_per_rev: 4096}

and maps (all element-wise, radians and ticks)::

    joint  = direction * (ticks - offset) * 2π / (ticks_per_rev * reduction)
    ticks  = offset + direction * joint * ticks_per_rev * reduction / 2π

Velocities map with the same factor (without the offset); a torque at the motor's horn
becomes ``direction * reduction`` times it at the joint. ``offset`` is the motor position in
ticks at joint position 0; a calibration (``jointlab calibrate``) measures it on the real arm
and replaces the file's nominal value. :class:`TransmissionArray` is the vectorised form every
servo backend and the emulated servos use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Transmission", "TransmissionArray"]

TWO_PI = 2.0 * math.pi


@dataclass(frozen=True)
class Transmission:
    """Motor space ↔ joint space of one actuator (see the module docstring)."""

    #: Motor turns per joint turn after the servo's horn (1.0: the horn is the joint).
    reduction: float = 1.0
    #: Motor position in ticks at joint position 0.
    offset: float = 0.0
    #: +1 when positive motor ticks move the joint positively, -1 when mounted reversed.
    direction: int = 1
    #: Encoder ticks per motor (horn) revolution.
    ticks_per_rev: int = 4096

    @property
    def ticks_per_radian(self) -> float:
        """Motor ticks per radian of joint motion (signed by ``direction``)."""
        return self.direction * self.ticks_per_rev * self.reduction / TWO_PI


@dataclass(frozen=True, eq=False)
class TransmissionArray:
    """The transmissions of ``dof`` joints as arrays of shape ``(dof,)``."""

    #: Signed ticks per joint radian: ``direction * ticks_per_rev * reduction / 2π``.
    scale: np.ndarray
    #: Motor ticks at joint zero.
    offset: np.ndarray
    #: ``direction * reduction``: joint torque per motor (horn) torque.
    torque_ratio: np.ndarray

    @classmethod
    def from_transmissions(cls, transmissions: Sequence[Transmission]) -> TransmissionArray:
        """Stack ``transmissions`` (one per joint, in joint order)."""
        scale = np.array([t.ticks_per_radian for t in transmissions], dtype=np.float64)
        offset = np.array([t.offset for t in transmissions], dtype=np.float64)
        ratio = np.array([t.direction * t.reduction for t in transmissions], dtype=np.float64)
        for array in (scale, offset, ratio):
            array.setflags(write=False)
        return cls(scale=scale, offset=offset, torque_ratio=ratio)

    def with_offsets(
        self, offset: np.ndarray, direction: np.ndarray | None = None
    ) -> TransmissionArray:
        """A copy with measured ``offset`` ticks (and ``direction`` signs), shape ``(dof,)``."""
        scale = self.scale if direction is None else np.abs(self.scale) * np.sign(direction)
        ratio = (
            self.torque_ratio
            if direction is None
            else np.abs(self.torque_ratio) * np.sign(direction)
        )
        return TransmissionArray(
            scale=np.array(scale, dtype=np.float64),
            offset=np.array(offset, dtype=np.float64),
            torque_ratio=np.array(ratio, dtype=np.float64),
        )

    def to_joint(self, ticks: np.ndarray) -> np.ndarray:
        """Joint positions (rad) of motor positions ``ticks``, shape ``(..., dof)``."""
        return (np.asarray(ticks, dtype=np.float64) - self.offset) / self.scale

    def to_motor(self, joint: np.ndarray) -> np.ndarray:
        """Motor positions in (fractional) ticks of joint positions (rad), ``(..., dof)``."""
        return self.offset + np.asarray(joint, dtype=np.float64) * self.scale

    def velocity_to_joint(self, ticks_per_second: np.ndarray) -> np.ndarray:
        """Joint velocities (rad/s) of motor velocities in ticks/s."""
        return np.asarray(ticks_per_second, dtype=np.float64) / self.scale

    def velocity_to_motor(self, joint_velocity: np.ndarray) -> np.ndarray:
        """Motor velocities in ticks/s of joint velocities (rad/s)."""
        return np.asarray(joint_velocity, dtype=np.float64) * self.scale

    def torque_to_joint(self, motor_torque: np.ndarray) -> np.ndarray:
        """Joint torques (N·m) of torques at the servo horns (N·m)."""
        return np.asarray(motor_torque, dtype=np.float64) * self.torque_ratio

    def torque_to_motor(self, joint_torque: np.ndarray) -> np.ndarray:
        """Torques at the servo horns (N·m) for joint torques (N·m)."""
        return np.asarray(joint_torque, dtype=np.float64) / self.torque_ratio
