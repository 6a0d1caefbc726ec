"""Player actarray commands of the device firmware, and the checks every command shares.

:class:`PlayerCommandsMixin` is the part of :class:`~jointlab.hardware.device.Device` that
executes CMD POS, MULTI_POS, HOME, SPEED, MULTI_SPEED, CURRENT and MULTI_CURRENT through the
per-joint setpoint generators (:mod:`jointlab.hardware.setpoints`). Each handler checks its
command in the order of docs/protocol.md section 8 (BAD_LENGTH, UNKNOWN_JOINT,
INVALID_VALUE, UNPOWERED, DISARMED, BRAKED, OUT_OF_RANGE), raising :class:`Refusal`, and
queues it to take effect at the next tick.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jointlab.hardware.protocol import (
    CurrentCommand,
    Frame,
    HomeCommand,
    Message,
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
    NackReason,
    PositionCommand,
    SpeedCommand,
)
from jointlab.hardware.setpoints import Setpoints

__all__ = ["PlayerCommandsMixin", "Refusal"]


class Refusal(Exception):
    """A check failed: the frame is answered with NACK ``reason`` (internal to the device)."""

    def __init__(self, reason: NackReason, detail: int = -1) -> None:
        super().__init__(reason.text)
        self.reason = reason
        self.detail = detail


class PlayerCommandsMixin:
    """Player CMD handlers; the device provides its state, checks and command queue."""

    dof: int
    description: Any
    robot: Any
    setpoints: Setpoints
    config_accel: np.ndarray
    _torque_per_amp: np.ndarray
    _max_current: np.ndarray

    def _motion_allowed(self) -> None:
        raise NotImplementedError

    def _accept(self, frame: Frame, message: Message, apply: Callable[[], None]) -> None:
        raise NotImplementedError

    def _joint(self, joint: int, allow_all: bool = False) -> None:
        if not (0 <= joint < self.dof or (allow_all and joint == -1)):
            raise Refusal(NackReason.UNKNOWN_JOINT, joint)

    def _vector(self, values: np.ndarray) -> np.ndarray:
        if values.shape[0] != self.dof:
            raise Refusal(NackReason.BAD_LENGTH, self.dof)
        bad = ~np.isfinite(values)
        if bad.any():
            raise Refusal(NackReason.INVALID_VALUE, int(np.flatnonzero(bad)[0]))
        return values.astype(np.float64)

    @staticmethod
    def _finite(value: float, joint: int) -> float:
        if not np.isfinite(value):
            raise Refusal(NackReason.INVALID_VALUE, joint)
        return float(value)

    @staticmethod
    def _within(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
        outside = (values < low) | (values > high)
        if outside.any():
            raise Refusal(NackReason.OUT_OF_RANGE, int(np.flatnonzero(outside)[0]))

    def _position(self, frame: Frame, message: PositionCommand) -> None:
        joint = message.joint
        self._joint(joint)
        value = self._finite(message.position, joint)
        self._motion_allowed()
        d = self.description
        if not d.lower[joint] <= value <= d.upper[joint]:
            raise Refusal(NackReason.OUT_OF_RANGE, joint)
        mask = np.arange(self.dof) == joint
        self._accept(frame, message, lambda: self._move(mask, np.full(self.dof, value)))

    def _multi_position(self, frame: Frame, message: MultiPositionCommand) -> None:
        target = self._vector(message.positions)
        self._motion_allowed()
        self._within(target, self.description.lower, self.description.upper)
        self._accept(frame, message, lambda: self._move(np.ones(self.dof, bool), target))

    def _home(self, frame: Frame, message: HomeCommand) -> None:
        self._joint(message.joint, allow_all=True)
        self._motion_allowed()
        mask = np.full(self.dof, message.joint == -1) | (np.arange(self.dof) == message.joint)
        self._accept(frame, message, lambda: self._move(mask, self.description.home))

    def _move(self, mask: np.ndarray, target: np.ndarray) -> None:
        state = self.robot.read()  # type: ignore[attr-defined]
        self.setpoints.move(
            mask, target, state.position, state.velocity, self.robot.config_speed, self.config_accel
        )  # type: ignore[attr-defined]

    def _speed(self, frame: Frame, message: SpeedCommand) -> None:
        joint = message.joint
        self._joint(joint)
        value = self._finite(message.speed, joint)
        self._motion_allowed()
        if abs(value) > self.description.velocity_limit[joint]:
            raise Refusal(NackReason.OUT_OF_RANGE, joint)
        mask = np.arange(self.dof) == joint
        self._accept(frame, message, lambda: self._run(mask, np.full(self.dof, value)))

    def _multi_speed(self, frame: Frame, message: MultiSpeedCommand) -> None:
        speeds = self._vector(message.speeds)
        self._motion_allowed()
        limit = self.description.velocity_limit
        self._within(speeds, -limit, limit)
        self._accept(frame, message, lambda: self._run(np.ones(self.dof, bool), speeds))

    def _run(self, mask: np.ndarray, speeds: np.ndarray) -> None:
        state = self.robot.read()  # type: ignore[attr-defined]
        self.setpoints.run(mask, speeds, state.position, state.velocity, self.config_accel)

    def _current(self, frame: Frame, message: CurrentCommand) -> None:
        joint = message.joint
        self._joint(joint, allow_all=True)
        value = self._finite(message.current, joint)
        self._motion_allowed()
        mask = np.full(self.dof, joint == -1) | (np.arange(self.dof) == joint)
        currents = np.full(self.dof, value)
        self._within(np.where(mask, currents, 0.0), -self._max_current, self._max_current)
        self._accept(frame, message, lambda: self._drive(mask, currents))

    def _multi_current(self, frame: Frame, message: MultiCurrentCommand) -> None:
        currents = self._vector(message.currents)
        self._motion_allowed()
        self._within(currents, -self._max_current, self._max_current)
        self._accept(frame, message, lambda: self._drive(np.ones(self.dof, bool), currents))

    def _drive(self, mask: np.ndarray, currents: np.ndarray) -> None:
        state = self.robot.read()  # type: ignore[attr-defined]
        self.setpoints.torque(mask, currents * self._torque_per_amp, state.position, state.velocity)
