"""Feetech STS step mode (operating mode 3): Goal Position writes are numbers of steps.

Feetech's STS3215 memory table: "3: step servo mode, the number of steps is represented by
parameter 0x2a [Goal Position], and the highest bit 15 is the direction bit". :class:`StepMode`
is the part of :class:`~jointlab.hardware.servo_emulator.firmware.ServoArray` that keeps each
servo's step target, in ticks of an unwrapped frame (the target may leave the turn), and
moves it by the steps written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jointlab.hardware.servo.control_table import ServoModel
from jointlab.robots.transmission import TransmissionArray

__all__ = ["StepMode"]


class StepMode:
    """Step targets of the servos of a bus (a part of ``ServoArray``; see the module)."""

    models: list[ServoModel]
    memory: np.ndarray
    sim: Any
    transmissions: TransmissionArray
    setpoint: np.ndarray
    step_target: np.ndarray
    trajectory_velocity: np.ndarray
    _mode_values: dict[str, np.ndarray]
    _decoded: Callable[[], dict[str, np.ndarray]]
    changed: Callable[[], None]

    def in_step_mode(self, k: int) -> bool:
        """Whether servo ``k`` is in Feetech step mode (3)."""
        mode = self.memory[k, self.models[k].table["operating_mode"].address]
        return bool(mode == self._mode_values["step"][k])

    def _unwrapped_position(self, k: int) -> float:
        """Servo ``k``'s position in ticks without wrapping (the step-mode frame)."""
        ticks = self.transmissions.to_motor(self.sim.read().position)[k]
        inputs = self._decoded()
        return float(inputs["direction"][k] * ticks - inputs["homing"][k])

    def hold_steps(self, k: int) -> None:
        """Step mode: servo ``k`` holds where it is (its target is its present position).

        On entering step mode, at power-up in it and when its torque is enabled: a step
        written afterwards counts from here.
        """
        here = self._unwrapped_position(k)
        self.step_target[k] = self.setpoint[k] = here
        self.trajectory_velocity[k] = 0.0
        self.changed()

    def step(self, k: int, steps: int) -> None:
        """Step mode: move servo ``k`` by ``steps`` ticks from its target (Goal Position written).

        Feetech's memory table: in step servo mode Goal Position "represents the number of
        steps", bit 15 its direction. JointLab counts the steps from the servo's target, so
        steps written during a move add up as a stepper's pulses do.
        """
        if np.isnan(self.step_target[k]):
            self.hold_steps(k)
        self.step_target[k] += steps
        self.changed()
