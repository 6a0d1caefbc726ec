"""The identified character of emulated servos: stiffness factor, backlash and goal delay.

The robot file's ``bus.servos.<joint>`` may carry ``stiffness``, ``backlash`` and ``delay``
(:mod:`jointlab.robots.servo_character`). :class:`ServoCharacter` is how the emulated servos'
firmware (:class:`~jointlab.hardware.servo_emulator.firmware.ServoArray`) applies them, per tick and
vectorised over the servos:

* the P term's torque is ``stiffness × kp(P register) × dead_band(setpoint − q)``;
* ``dead_band(e) = sign(e) · max(|e| − backlash / 2, 0)``: inside the play the loop pushes
  nothing, so the joint stops ``backlash / 2`` short of a goal it approaches (the lost motion a
  reversal test measures); the damping term acts on the joint's speed as before;
* the goal the loop follows is the one written ``delay`` seconds (whole firmware ticks)
  earlier.

With the defaults (1, 0, 0) every function is the identity and the firmware is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.robots.description import RobotDescription

__all__ = ["GoalDelay", "ServoCharacter"]


class GoalDelay:
    """Per-servo delay lines of whole ticks: ``push(goal)`` returns the goal ``ticks`` ago.

    Args:
        ticks: Delay of each servo in firmware ticks, shape ``(n,)``.
    """

    def __init__(self, ticks: np.ndarray) -> None:
        self.ticks = np.asarray(ticks, dtype=np.int64)
        self.length = int(self.ticks.max()) + 1
        self._buffer: np.ndarray | None = None
        self._head = 0
        self._columns = np.arange(len(self.ticks))

    def push(self, goal: np.ndarray) -> np.ndarray:
        """Store this tick's goals (shape ``(n,)``) and return each servo's delayed goal."""
        if self._buffer is None:  # a fresh line holds the first goal it sees
            self._buffer = np.tile(np.asarray(goal, dtype=np.float64), (self.length, 1))
        self._head = (self._head + 1) % self.length
        self._buffer[self._head] = goal
        rows = (self._head - self.ticks) % self.length
        return self._buffer[rows, self._columns]

    def reset(self, k: int, value: float) -> None:
        """Servo ``k``'s line holds ``value`` (after a reboot: goal = present position)."""
        if self._buffer is not None:
            self._buffer[:, k] = value


@dataclass
class ServoCharacter:
    """The character of every servo of one bus (arrays of shape ``(n,)``, joint order).

    Attributes:
        stiffness: Factor on the P register's documented stiffness.
        half_play: Half the backlash, in motor ticks.
        delay: Goal delay lines (None when no servo delays).
    """

    stiffness: np.ndarray
    half_play: np.ndarray
    delay: GoalDelay | None

    @classmethod
    def of(
        cls, description: RobotDescription, ticks_per_radian: np.ndarray, dt: float
    ) -> ServoCharacter:
        """The character the robot file gives its servos.

        Args:
            description: A robot with a ``bus`` section.
            ticks_per_radian: Motor ticks per joint radian of each servo (signed or not).
            dt: The firmware tick, s.
        """
        servos = description.bus.servos  # type: ignore[union-attr]
        stiffness = np.array([s.stiffness for s in servos], dtype=np.float64)
        play = np.array([s.backlash for s in servos], dtype=np.float64)
        delay = np.rint(np.array([s.delay for s in servos]) / dt).astype(np.int64)
        return cls(
            stiffness=stiffness,
            half_play=0.5 * play * np.abs(ticks_per_radian),
            delay=GoalDelay(delay) if delay.any() else None,
        )

    @property
    def has_play(self) -> bool:
        """True when some servo has backlash."""
        return bool(np.any(self.half_play > 0))

    def delayed(self, goal: np.ndarray) -> np.ndarray:
        """This tick's goals (ticks, ``(n,)``) as the delayed loop sees them."""
        return goal if self.delay is None else self.delay.push(goal)

    def dead_band(self, error: np.ndarray) -> np.ndarray:
        """The position error (ticks, ``(n,)``) the loop acts on, the play taken out."""
        if not self.has_play:
            return error
        return np.sign(error) * np.maximum(np.abs(error) - self.half_play, 0.0)

    def reset(self, k: int, goal: float) -> None:
        """Servo ``k`` powered up holding ``goal`` (ticks)."""
        if self.delay is not None:
            self.delay.reset(k, goal)
