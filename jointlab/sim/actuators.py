"""Actuator models, the command delay line and joint friction: pure numpy, vectorised.

All functions work on joint-space arrays of shape ``(dof,)`` (N·m for rotary joints, N for
linear ones). :class:`jointlab.sim.SimRobot` evaluates exactly these formulas every physics
step (inlined in its loop for speed); the tests check the robot against them.

Models, chosen per actuator by ``motor.model`` in the description:

* ``ideal``: the command torque, clamped to the effort limit ``limits.effort``.
* ``dc_motor``: a voltage-limited DC motor behind a gearbox of ratio ``G``. With the joint-side
  stall torque ``S = stall_torque * G`` and no-load speed ``W = no_load_speed / G``, the torque
  it can produce at joint speed ``v`` lies on the lines of the torque-speed diagram::

      -S * (1 + v / W)  <=  torque  <=  S * (1 - v / W)

  (``S`` at stand-still, falling to 0 at ``v = W`` when driving; braking against the motion
  is allowed up to the same voltage limit). The torque is also limited by the current
  (``max_current * torque_constant * G``) and by the effort limit.

The motor current is ``torque / (torque_constant * G)``, clamped at ``max_current``.

A per-actuator ``motor.delay`` (physics steps) delays the command torque in a ring buffer
(:class:`DelayLine`) before the actuator model sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.robots.description import MotorModel, RobotDescription

__all__ = [
    "ActuatorArray",
    "DelayLine",
    "coulomb_friction",
]


@dataclass(frozen=True)
class ActuatorArray:
    """Per-joint actuator parameters, derived once from a description. Shapes ``(dof,)``."""

    #: Largest torque magnitude: min(effort limit, current limit for ``dc_motor``), N·m or N.
    effort: np.ndarray
    #: Joint-side stall torque ``S`` (``dc_motor``); equal to ``effort`` for ``ideal``.
    stall: np.ndarray
    #: ``S / W`` in N·m·s/rad: how fast the available torque falls with speed (0 for ideal).
    slope: np.ndarray
    #: ``1 / (torque_constant * gear_ratio)`` in A/(N·m).
    amps_per_torque: np.ndarray
    #: Maximum current in A.
    max_current: np.ndarray
    #: Command latency in physics steps (integers).
    delay: np.ndarray

    @classmethod
    def from_description(cls, description: RobotDescription) -> ActuatorArray:
        """Build the arrays from each joint's ``motor`` and ``limits.effort``."""
        joints = description.joints
        effort = np.array(description.effort_limit, dtype=np.float64)
        stall = effort.copy()
        slope = np.zeros(len(joints))
        ratio = np.array([j.motor.gear_ratio for j in joints], dtype=np.float64)
        constant = np.array([j.motor.torque_constant for j in joints], dtype=np.float64)
        max_current = np.array([j.motor.max_current for j in joints], dtype=np.float64)
        for i, joint in enumerate(joints):
            motor = joint.motor
            if motor.model is not MotorModel.DC_MOTOR:
                continue
            effort[i] = min(effort[i], motor.max_current * motor.torque_constant * ratio[i])
            if motor.stall_torque is not None:
                stall[i] = motor.stall_torque * ratio[i]
                if motor.no_load_speed is not None:
                    slope[i] = stall[i] / (motor.no_load_speed / ratio[i])
            else:
                stall[i] = effort[i]
        delay = np.array([j.motor.delay for j in joints], dtype=np.int64)
        return cls(
            effort=effort,
            stall=stall,
            slope=slope,
            amps_per_torque=1.0 / (constant * ratio),
            max_current=max_current,
            delay=delay,
        )

    @property
    def speed_dependent(self) -> bool:
        """True when some joint's torque limit depends on its speed (a ``dc_motor`` curve)."""
        return bool(np.any(self.slope != 0.0))

    def limits(self, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Lowest and highest torque available at joint ``velocity`` (rad/s or m/s)."""
        drop = self.slope * velocity
        return (
            np.clip(-self.stall - drop, -self.effort, self.effort),
            np.clip(self.stall - drop, -self.effort, self.effort),
        )

    def clamp(self, command: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """Torque the actuators deliver for ``command`` at joint ``velocity``.

        Clips to the torque-speed lines, then to the effort limit (the same as clipping to
        :meth:`limits`, and the exact operations the simulator runs).
        """
        drop = self.slope * velocity
        return np.clip(
            np.clip(command, -self.stall - drop, self.stall - drop), -self.effort, self.effort
        )

    def current(self, torque: np.ndarray) -> np.ndarray:
        """Motor current in A for delivered joint ``torque``, clamped at ``max_current``."""
        return np.clip(torque * self.amps_per_torque, -self.max_current, self.max_current)


def coulomb_friction(
    torque: np.ndarray, velocity: np.ndarray, static: np.ndarray, stiffness: np.ndarray
) -> np.ndarray:
    """Net joint torque after Coulomb friction: ``torque`` minus the friction torque.

    The friction torque opposes ``torque + stiffness * velocity`` and is at most ``static``
    in magnitude. Below that it cancels the actuator torque and brakes the joint with the
    viscous ``stiffness`` (N·m·s/rad), which :class:`~jointlab.sim.SimRobot` sets to half the
    joint's inertia over ``dt``: a joint pushed by less than its friction stops within a few
    physics steps instead of chattering, and a moving joint feels exactly ``static``.
    Equivalent to ``clip(-stiffness * velocity, torque - static, torque + static)``.
    """
    return np.clip(-stiffness * velocity, torque - static, torque + static)


class DelayLine:
    """Delays a joint-space command by a per-joint whole number of physics steps.

    ``push(command)`` returns the command pushed ``delay[i]`` calls earlier for joint ``i``
    (zeros until enough commands were pushed). Joints with delay 0 pass straight through.
    """

    def __init__(self, delay: np.ndarray) -> None:
        delay = np.asarray(delay, dtype=np.int64)
        if delay.ndim != 1 or np.any(delay < 0):
            raise ValueError(f"delays must be a 1-D array of integers >= 0, got {delay!r}")
        self.delay = delay
        dof = delay.shape[0]
        self._length = int(delay.max(initial=0)) + 1
        self._buffer = np.zeros((self._length, dof))
        columns = np.arange(dof)
        # _read[w]: flat indices of the entries to emit when the newest command sits in row w.
        self._read = [((w - delay) % self._length) * dof + columns for w in range(self._length)]
        self._write = 0

    @property
    def active(self) -> bool:
        """True when some joint has a delay."""
        return self._length > 1

    def push(self, command: np.ndarray) -> np.ndarray:
        """Store ``command`` and return the delayed command, both shape ``(dof,)``."""
        write = self._write
        self._buffer[write] = command
        self._write = (write + 1) % self._length
        return self._buffer.take(self._read[write])

    def clear(self) -> None:
        """Forget every stored command (as after a reset or a power cycle)."""
        self._buffer[:] = 0.0
        self._write = 0
