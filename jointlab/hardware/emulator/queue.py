"""Accepted commands of the device firmware: queued on arrival, in force from the next tick.

A command is checked when its frame arrives (and NACKed at once if refused). An accepted
one is queued and takes effect at the start of the next tick, **in arrival order**: two
commands that arrive within one tick (a CMD POS for one joint, then a CMD SPEED for
another) both take effect at that tick, the later one last. The queue also keeps the log of
accepted commands that tests and the fault-injection reports read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["APPLIED_LOG", "AppliedCommand", "CommandQueue"]

#: Accepted commands remembered for :attr:`CommandQueue.applied` (about 20 s at 1 kHz).
APPLIED_LOG = 20_000


@dataclass(frozen=True)
class AppliedCommand:
    """A command the device accepted, for tests and fault-injection reports."""

    #: Tick from which it was in force.
    tick: int
    #: Host sequence number of the frame.
    seq: int
    #: Header type byte (a ``CmdType``).
    msg_type: int
    #: The payload as received.
    payload: bytes
    #: ``time.perf_counter()`` when its bytes were read (0.0 when the caller did not say).
    received: float = 0.0


@dataclass
class _Queued:
    seq: int
    msg_type: int
    payload: bytes
    received: float
    apply: Callable[[], None]


class CommandQueue:
    """Commands accepted since the last tick, and the log of those that took effect."""

    def __init__(self) -> None:
        self._pending: list[_Queued] = []
        #: Accepted commands, oldest first (at most :data:`APPLIED_LOG`).
        self.applied: deque[AppliedCommand] = deque(maxlen=APPLIED_LOG)
        self.clear()

    def clear(self) -> None:
        """Forget queued commands, the log and the counters (power-up)."""
        self._pending.clear()
        self.applied.clear()
        #: Ticks at which a newly accepted command took effect.
        self.command_ticks = 0
        #: Tick during which the last command was accepted (the watchdog's reference).
        self.last_command_tick = 0

    def drop_pending(self) -> None:
        """Forget commands accepted but not yet in force (DISARM, BRAKES, POWER 0, STOP)."""
        self._pending.clear()

    @property
    def pending(self) -> bool:
        """True when commands wait for the next tick."""
        return bool(self._pending)

    def accept(
        self,
        seq: int,
        msg_type: int,
        payload: bytes,
        received: float,
        tick: int,
        apply: Callable[[], None],
    ) -> None:
        """Queue ``apply`` (the command's effect) for the next tick; ``tick`` is the current."""
        self._pending.append(_Queued(seq, msg_type, payload, received, apply))
        self.last_command_tick = tick

    def take_effect(self, tick: int) -> None:
        """Run the queued commands, in arrival order, at the start of ``tick``."""
        if not self._pending:
            return
        self.command_ticks += 1
        queued, self._pending = self._pending, []
        for command in queued:
            command.apply()
            self.applied.append(
                AppliedCommand(
                    tick, command.seq, command.msg_type, command.payload, command.received
                )
            )
