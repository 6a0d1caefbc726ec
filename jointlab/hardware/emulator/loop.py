"""The emulator's two clocks: a real-time loop and a lockstep (virtual-time) loop.

**Real time** (:func:`serve_realtime`): ticks are paced to ``time.perf_counter`` on an
absolute schedule, so small jitter does not accumulate; between ticks the loop waits in
``select`` on the link, so requests are answered as soon as they arrive, while accepted
commands take effect at the next tick. A tick that starts more than one period late (the
process was descheduled) is counted and the schedule **slips** instead of running the
missed ticks back to back: firmware never bursts, and a burst would leave the host no time
to answer each state. Device time is the tick count, so it then runs behind the wall clock.
Firmware that is **asleep** (an emulated servo bus whose arm rests and hears nothing) lets
the loop wait for input up to :data:`SLEEP_WAIT`; the ticks it slept through are counted on
waking (``skip``), so its clock keeps the wall clock's pace without stepping anything.

**Lockstep** (:func:`serve_lockstep`): the device never ticks on its own. It waits in
``select`` and handles frames in the order they arrive; a REQ STEP runs its ticks then and
there and is answered with the state at their end. Whatever the host wrote before the STEP
is handled before those ticks (the byte stream orders them), so a run depends only on what
the host sent, not on when: it is reproducible bit for bit on a loaded machine.

Both loops drive anything :class:`Served`: the JointLab device
(:class:`~jointlab.hardware.emulator.Emulator`) and the emulated servo buses
(:class:`~jointlab.hardware.servo_emulator.emulator.BusEmulator`, whose lockstep ticks come over the
control pipe instead of a REQ STEP).
"""

from __future__ import annotations

import select
import time
from multiprocessing.connection import Connection
from typing import Protocol

from jointlab.hardware.emulator.links import Link

__all__ = ["SLEEP_WAIT", "Served", "serve_lockstep", "serve_realtime"]

#: Longest wait for input while the firmware is asleep, s; the slept ticks are counted after.
SLEEP_WAIT = 0.05


class Served(Protocol):
    """What a loop drives: firmware on a link (:class:`~jointlab.hardware.emulator.Emulator`)."""

    link: Link
    #: Seconds per tick.
    period: float
    #: Counters; the real-time loop adds to ``late_ticks``.
    counts: dict[str, int]
    #: Bytes written once as the loop starts (the JointLab protocol's delimiter; none on a
    #: servo bus, where a stray byte would be noise on the line).
    greeting: bytes

    def asleep(self) -> bool:
        """True while ticks would change nothing (the loop may then wait for input)."""

    def skip(self, ticks: int) -> None:
        """Count ``ticks`` ticks slept through (time passes; nothing else changes)."""

    def tick(self) -> None:
        """One firmware tick (sending what it streams, e.g. a DATA STATE)."""

    def receive(self, fd: int) -> None:
        """Read what arrived on ``fd`` and act on every frame."""

    def control(self, connection: Connection) -> bool:
        """Serve one control request; False when the loop must stop."""

    def next_delayed(self) -> float | None:
        """When the next delayed frame is due, or None."""

    def flush_delayed(self, now: float) -> None:
        """Write the delayed frames due at ``now``."""


def _ready(emulator: Served, control: Connection | None, timeout: float | None) -> None:
    """Wait up to ``timeout`` s until input is ready, without handling it."""
    fds = emulator.link.fds()
    if control is not None:
        fds = [*fds, control.fileno()]
    select.select(fds, [], [], timeout)


def _wait(emulator: Served, control: Connection | None, timeout: float | None) -> bool:
    """Wait up to ``timeout`` s for input and handle it; False when the loop must stop."""
    link = emulator.link
    fds = link.fds()
    control_fd = control.fileno() if control is not None else None
    if control_fd is not None:
        fds = [*fds, control_fd]
    ready, _, _ = select.select(fds, [], [], timeout)
    for fd in ready:
        if fd == control_fd:
            if not emulator.control(control):  # type: ignore[arg-type]
                return False
        else:
            emulator.receive(fd)
    emulator.flush_delayed(time.perf_counter())
    link.flush()
    return True


def _bounded(emulator: Served, wait: float | None, end: float | None) -> float | None:
    """``wait`` shortened to the next delayed frame and the end of the run."""
    now = time.perf_counter()
    for due in (emulator.next_delayed(), end):
        if due is not None:
            wait = max(due - now, 0.0) if wait is None else min(wait, max(due - now, 0.0))
    return wait


def serve_realtime(emulator: Served, control: Connection | None, duration: float | None) -> None:
    """Tick at ``rate_hz`` of wall-clock time (see the module docstring)."""
    period, link = emulator.period, emulator.link
    if emulator.greeting:
        link.write(emulator.greeting)
    start = next_tick = time.perf_counter()
    end = None if duration is None else start + duration
    counts = emulator.counts
    while True:
        now = time.perf_counter()
        if next_tick > now and emulator.asleep():
            # Nothing changes until input arrives: wait for it, then count the ticks slept
            # through before the input is handled, so the firmware's clock kept time.
            _ready(emulator, control, _bounded(emulator, max(next_tick - now, SLEEP_WAIT), end))
            now = time.perf_counter()
            slept = int((now - next_tick) / period) + 1 if now >= next_tick else 0
            if slept:
                emulator.skip(slept)
                next_tick += slept * period
        if next_tick > now:
            if not _wait(emulator, control, _bounded(emulator, next_tick - now, None)):
                return
            continue
        if end is not None and now >= end:
            return
        if now - next_tick > period:  # descheduled: slip rather than burst
            counts["late_ticks"] += 1
            next_tick = now
        for fd in link.fds():  # commands that arrived just before this tick
            emulator.receive(fd)
        emulator.tick()
        next_tick += period


def serve_lockstep(emulator: Served, control: Connection | None, duration: float | None) -> None:
    """Tick only when the host asks (see the module docstring)."""
    if emulator.greeting:
        emulator.link.write(emulator.greeting)
    end = None if duration is None else time.perf_counter() + duration
    while end is None or time.perf_counter() < end:
        if not _wait(emulator, control, _bounded(emulator, None, end)):
            return
