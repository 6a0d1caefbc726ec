"""A keyboard as a teleoperator: keys nudge the follower's joint targets.

Keys (one press = one ``step``): ``q w e r t y u`` raise joints 0-6, ``a s d f g h j``
lower them, space returns every joint to where it started. The terminal is put in cbreak
mode (keys arrive at once, unechoed) while the teleoperator is open and restored on close;
any file descriptor works (a pty in the tests).
"""

from __future__ import annotations

import os
import select
import termios
import tty

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.robots.description import RobotDescription
from jointlab.teleop.teleoperator import Teleoperator

__all__ = ["KEYS_DOWN", "KEYS_UP", "KeyboardTeleoperator"]

#: Raise joint k with ``KEYS_UP[k]``, lower it with ``KEYS_DOWN[k]``.
KEYS_UP = "qwertyu"
KEYS_DOWN = "asdfghj"
#: Returns every joint to its start.
KEY_HOME = " "


class KeyboardTeleoperator(Teleoperator):
    """Joint targets moved by key presses, for a follower with ``description``.

    Args:
        description: The follower's robot (its joints, limits and, by default, start).
        start: Joint positions to start from (rad or m), default the description's home.
        step: Target change per key press, rad (m for linear joints).
        fd: The keyboard's file descriptor (default standard input).
        period: Seconds between readings (the follower's loop rate).
    """

    def __init__(
        self,
        description: RobotDescription,
        *,
        start: np.ndarray | None = None,
        step: float = np.radians(2.0),
        fd: int = 0,
        period: float = 0.02,
    ) -> None:
        if description.dof > len(KEYS_UP):
            raise ConfigurationError(
                f"keyboard teleoperation: {description.name!r} has {description.dof} joints; "
                f"the keyboard drives at most {len(KEYS_UP)}"
            )
        if not (step > 0.0 and np.isfinite(step)):
            raise ConfigurationError(f"keyboard teleoperation: step={step!r}, expected > 0")
        self.joint_names = tuple(description.joint_names)
        self.lower = np.asarray(description.lower, dtype=np.float64)
        self.upper = np.asarray(description.upper, dtype=np.float64)
        home = description.home if start is None else np.asarray(start, dtype=np.float64)
        self.start = np.clip(home, self.lower, self.upper)
        self.position = self.start.copy()
        self.step = float(step)
        self.period = float(period)
        self.fd = int(fd)
        self._saved = None
        if os.isatty(self.fd):
            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)

    def read(self) -> np.ndarray:
        """Apply every key pressed since the last reading; the targets, ``(n,)``."""
        keys = b""
        while select.select([self.fd], [], [], 0.0)[0]:
            chunk = os.read(self.fd, 256)
            if not chunk:  # end of input (not a terminal): no more keys
                break
            keys += chunk
        for key in keys.decode("ascii", errors="ignore").lower():
            if key == KEY_HOME:
                self.position[:] = self.start
            elif key in KEYS_UP[: len(self.position)]:
                self.position[KEYS_UP.index(key)] += self.step
            elif key in KEYS_DOWN[: len(self.position)]:
                self.position[KEYS_DOWN.index(key)] -= self.step
        np.clip(self.position, self.lower, self.upper, out=self.position)
        return self.position.copy()

    def close(self) -> None:
        """Give the terminal its settings back; safe twice."""
        if self._saved is not None:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            self._saved = None
