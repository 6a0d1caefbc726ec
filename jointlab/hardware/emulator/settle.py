"""An unpowered arm at rest: when an emulated plant counts as resting, and settling it.

A real arm whose drives are off does not hang at its home pose while a host connects: it has
already sagged onto its stops, the table or its own friction. A real-time emulator therefore
lets its limp plant settle (:func:`settle`) before it serves, so that the host finds it at
rest, as it would find a real one, rather than falling from home. Lockstep emulators keep the
home pose: they are simulation twins that tests compare state by state with ``sim://``.

:class:`RestWatch` is the one criterion of "at rest" the emulators share: the servo firmware
(:class:`~jointlab.hardware.servo_emulator.firmware.ServoArray`) also uses it to let a resting arm
sleep between writes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["REST_DISTANCE", "REST_TICKS", "SETTLE_SECONDS", "RestWatch", "settle"]

#: Joint displacement under which an arm counts as at rest over :data:`REST_TICKS`, rad:
#: half an encoder tick of a 4096-tick servo, a move no servo of the bus could report. (A limp
#: simulated arm on the table creeps by about 0.5 mrad/s through the joint friction's
#: velocity loop, whose speeds flicker by a few mrad/s from tick to tick; a real one rests.)
REST_DISTANCE = 3.14159 / 4096
#: Ticks in a row within :data:`REST_DISTANCE` after which an arm is at rest.
REST_TICKS = 200
#: Most firmware time a real-time emulator lets its limp arm settle before serving, s.
SETTLE_SECONDS = 5.0


class RestWatch:
    """Counts the ticks an arm has stayed within :data:`REST_DISTANCE` of where it was."""

    def __init__(self) -> None:
        #: Consecutive ticks at rest, and the joint positions (rad) the count started at.
        self.ticks = 0
        self._start: np.ndarray | None = None

    @property
    def at_rest(self) -> bool:
        """True once the arm has rested for :data:`REST_TICKS` ticks."""
        return self.ticks >= REST_TICKS

    def wake(self) -> None:
        """Start counting again (something was written, or the arm was moved)."""
        self.ticks, self._start = 0, None

    def observe(self, q: np.ndarray, disturbed: bool = False) -> None:
        """Count one tick that ended at joint positions ``q`` (rad, shape ``(dof,)``).

        ``disturbed``: something other than the arm's own motion changed this tick (a setpoint
        still ramping); the count starts again from ``q``.
        """
        start = self._start
        if disturbed or start is None or np.abs(q - start).max(initial=0.0) >= REST_DISTANCE:
            self._start, self.ticks = np.array(q, dtype=np.float64), 0
        else:
            self.ticks += 1


def settle(
    tick: Callable[[], None],
    at_rest: Callable[[], bool],
    dt: float,
    seconds: float = SETTLE_SECONDS,
) -> int:
    """Run ``tick`` (one tick of ``dt`` seconds of a limp plant) until ``at_rest()``.

    Stops after ``seconds`` of plant time at the latest (an arm that never rests, e.g. one
    swinging without friction, is served as it is then). Returns the ticks run.
    """
    for count in range(round(seconds / dt)):
        if at_rest():
            return count
        tick()
    return round(seconds / dt)
