"""Real-time pacing of a watched simulated robot: robot time = wall time, for the eye.

A simulated robot steps as fast as the CPU allows (a 6 s program may take 2 s), which is
what training and tests want and what a person watching the live view does not: the motion
flashes by. :class:`RealTimePacer` is a :class:`~jointlab.contract.RobotListener` that,
after each ``step()``, sleeps until the wall clock has caught up with the robot's clock.
"""

from __future__ import annotations

import time as wallclock
from typing import Any

__all__ = ["MAX_LAG", "RealTimePacer"]

#: Seconds the robot may fall behind the wall clock (a slow policy, a busy machine) before
#: the pacer stops trying to catch up and takes the present as the new origin: it never
#: runs the robot faster than real time to make up for lost time.
MAX_LAG = 0.25
#: The pacer sleeps only once the robot is this far ahead (s): one sleep per few control
#: periods at 1 kHz instead of one per period, within a millisecond of real time.
_MIN_SLEEP = 0.001


class RealTimePacer:
    """Keeps a robot's ``time`` at the wall clock's pace (a ``RobotListener``).

    The first step takes the wall clock's present as the origin of the robot's time; a
    robot whose time goes back (a reset) or falls more than :data:`MAX_LAG` behind takes a
    new origin. Attach it with ``robot.listen(RealTimePacer())`` to a robot whose
    ``realtime`` is False (hardware paces itself).
    """

    def __init__(self) -> None:
        self._origin: float | None = None  # wall clock (perf_counter s) at robot time 0
        self._last = 0.0
        #: Seconds slept so far (for tests and reports).
        self.slept = 0.0

    def on_step(self, robot: Any) -> None:
        """Sleep until the wall clock reaches the robot's time."""
        now = wallclock.perf_counter()
        robot_time = float(robot.time)
        origin = self._origin
        if origin is None or robot_time < self._last or now - (origin + robot_time) > MAX_LAG:
            origin = self._origin = now - robot_time
        self._last = robot_time
        ahead = origin + robot_time - now
        if ahead >= _MIN_SLEEP:
            wallclock.sleep(ahead)
            self.slept += ahead

    def on_refusal(self, robot: Any, verb: str, reason: str) -> None:
        """Refusals take no time."""
