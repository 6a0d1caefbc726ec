"""Player actarray commands of the device firmware (CMD POS ... MULTI_CURRENT).

The commands: POS, MULTI_POS, HOME, SPEED, MULTI_SPEED, CURRENT and MULTI_CURRENT.

:class:`PlayerCommands` is a part of :class:`~jointlab.hardware.emulator.device.Device`
(the message table names its methods as handlers: ``"player.position"`` ...). Each handler
checks its command in the order of docs/protocol.md section 8 (BAD_LENGTH, UNKNOWN_JOINT,
INVALID_VALUE, then the motion gate, then OUT_OF_LIMITS), raising
:class:`~jointlab.hardware.emulator.gate.Refusal`, and hands the command's effect to the
device's queue: it starts the per-joint setpoint generators
(:mod:`~jointlab.hardware.emulator.setpoints`) at the next tick. A command drives only the
joints it names; the other joints keep what they were doing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from jointlab.hardware.emulator.gate import (
    MotionGate,
    Refusal,
    check_finite,
    check_joint,
    check_vector,
    check_within,
)
from jointlab.hardware.emulator.setpoints import Setpoints
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

if TYPE_CHECKING:
    from jointlab.sim import SimRobot

__all__ = ["Accept", "PlayerCommands"]

#: The device's ``accept(frame, message, effect)``: queue ``effect`` for the next tick.
Accept = Callable[[Frame, Message, Callable[[], None]], None]


class PlayerCommands:
    """The Player CMD handlers of a device.

    Args:
        robot: The device's plant (its state and configured speeds).
        setpoints: The device's setpoint generators.
        gate: The device's power, arming and brakes.
        accept: The device's command queue entry point.
        config_accel: The device's configured accelerations, shape ``(dof,)``, rad/s² (a
            live array: REQ ACCEL changes it in place).
    """

    def __init__(
        self,
        robot: SimRobot,
        setpoints: Setpoints,
        gate: MotionGate,
        accept: Accept,
        config_accel: np.ndarray,
    ) -> None:
        self.robot = robot
        self.description = robot.description
        self.dof = self.description.dof
        self.setpoints = setpoints
        self.gate = gate
        self._accept = accept
        self.config_accel = config_accel
        motors = [joint.motor for joint in self.description.joints]
        self._torque_per_amp = np.array([m.torque_constant * m.gear_ratio for m in motors])
        self._max_current = np.array([m.max_current for m in motors])

    def _one(self, joint: int) -> np.ndarray:
        return np.arange(self.dof) == joint

    def _one_or_all(self, joint: int) -> np.ndarray:
        return np.full(self.dof, joint == -1) | self._one(joint)

    # ---------------------------------------------------------------- position moves
    def position(self, frame: Frame, message: PositionCommand) -> None:
        """CMD POS: a trapezoidal move of one joint to its target."""
        joint = message.joint
        check_joint(joint, self.dof)
        value = check_finite(message.position, joint)
        self.gate.check()
        d = self.description
        if not d.lower[joint] <= value <= d.upper[joint]:
            raise Refusal(NackReason.OUT_OF_LIMITS, joint)
        mask, target = self._one(joint), np.full(self.dof, value)
        self._accept(frame, message, lambda: self._move(mask, target))

    def multi_position(self, frame: Frame, message: MultiPositionCommand) -> None:
        """CMD MULTI_POS: every joint to its target."""
        target = check_vector(message.positions, self.dof)
        self.gate.check()
        check_within(target, self.description.lower, self.description.upper)
        self._accept(frame, message, lambda: self._move(np.ones(self.dof, bool), target))

    def home(self, frame: Frame, message: HomeCommand) -> None:
        """CMD HOME: one joint (or every joint for -1) to its home position."""
        check_joint(message.joint, self.dof, allow_all=True)
        self.gate.check()
        mask = self._one_or_all(message.joint)
        self._accept(frame, message, lambda: self._move(mask, self.description.home))

    def _move(self, mask: np.ndarray, target: np.ndarray) -> None:
        state = self.robot.read()
        self.setpoints.move(
            mask, target, state.position, state.velocity, self.robot.config_speed, self.config_accel
        )

    # ---------------------------------------------------------------- velocity runs
    def speed(self, frame: Frame, message: SpeedCommand) -> None:
        """CMD SPEED: one joint ramps to a constant speed (until a limit or a new command)."""
        joint = message.joint
        check_joint(joint, self.dof)
        value = check_finite(message.speed, joint)
        self.gate.check()
        if abs(value) > self.description.velocity_limit[joint]:
            raise Refusal(NackReason.OUT_OF_LIMITS, joint)
        mask, speeds = self._one(joint), np.full(self.dof, value)
        self._accept(frame, message, lambda: self._run(mask, speeds))

    def multi_speed(self, frame: Frame, message: MultiSpeedCommand) -> None:
        """CMD MULTI_SPEED: every joint at its speed."""
        speeds = check_vector(message.speeds, self.dof)
        self.gate.check()
        limit = self.description.velocity_limit
        check_within(speeds, -limit, limit)
        self._accept(frame, message, lambda: self._run(np.ones(self.dof, bool), speeds))

    def _run(self, mask: np.ndarray, speeds: np.ndarray) -> None:
        state = self.robot.read()
        self.setpoints.run(mask, speeds, state.position, state.velocity, self.config_accel)

    # ---------------------------------------------------------------- current
    def current(self, frame: Frame, message: CurrentCommand) -> None:
        """CMD CURRENT: one joint (or every joint for -1) driven with a motor current."""
        joint = message.joint
        check_joint(joint, self.dof, allow_all=True)
        value = check_finite(message.current, joint)
        self.gate.check()
        mask = self._one_or_all(joint)
        currents = np.full(self.dof, value)
        check_within(np.where(mask, currents, 0.0), -self._max_current, self._max_current)
        self._accept(frame, message, lambda: self._drive(mask, currents))

    def multi_current(self, frame: Frame, message: MultiCurrentCommand) -> None:
        """CMD MULTI_CURRENT: every joint driven with its current."""
        currents = check_vector(message.currents, self.dof)
        self.gate.check()
        check_within(currents, -self._max_current, self._max_current)
        self._accept(frame, message, lambda: self._drive(np.ones(self.dof, bool), currents))

    def _drive(self, mask: np.ndarray, currents: np.ndarray) -> None:
        state = self.robot.read()
        self.setpoints.torque(mask, currents * self._torque_per_amp, state.position, state.velocity)

    def run_all(self, speeds: np.ndarray) -> None:
        """Ramp every joint to ``speeds`` now (REQ STOP DECELERATE: zeros)."""
        self._run(np.ones(self.dof, bool), speeds)
