"""The control pipe of an emulated servo bus: the requests and how the bus serves them.

A :class:`~jointlab.hardware.servo_emulator.emulator_process.BusEmulatorProcess` sends
:class:`BusRequest` values down the pipe; the bus in the child process answers each with its
:class:`~jointlab.hardware.servo_emulator.emulator.BusReport` (or a ``Failed``) through
:func:`handle_control`. The bus itself is anything :class:`Controlled`, so this module sits
below both the emulator and its process.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Protocol

from jointlab.errors import JointLabError
from jointlab.hardware.emulator.faults import Failed

__all__ = ["BusControl", "BusRequest", "Controlled", "handle_control"]


class Controlled(Protocol):
    """What the control pipe drives: an emulated bus (``BusEmulator``)."""

    def set_faults(self, faults: Any) -> None:
        """Replace the fault injection."""

    def inject(self, servo_id: int, bits: int) -> None:
        """Set hardware error bits on a servo."""

    def move(self, position: Any) -> None:
        """Put the limp arm at joint positions, rad."""

    def advance(self, seconds: float, rx_bytes: int) -> None:
        """Lockstep: run ``seconds`` of ticks after the host's first ``rx_bytes`` bytes."""

    def report(self) -> Any:
        """The bus counters and the arm's joint positions."""


class BusControl(enum.Enum):
    """What a :class:`BusRequest` asks the emulated bus to do."""

    REPORT = "report"
    FAULTS = "faults"
    INJECT = "inject"
    MOVE = "move"
    ADVANCE = "advance"
    CLOSE = "close"


@dataclass(frozen=True)
class BusRequest:
    """A request on the control pipe of a :class:`BusEmulatorProcess`."""

    kind: BusControl
    #: FAULTS: the new fault injection (a ``BusFaults``).
    faults: Any = None
    servo_id: int = 0
    bits: int = 0
    position: tuple[float, ...] = ()
    #: ADVANCE: firmware seconds to run, and bytes the host wrote so far.
    seconds: float = 0.0
    rx_bytes: int = 0


def handle_control(emulator: Controlled, control: Connection) -> bool:
    """Act on one request from the control pipe; False when the emulator should stop."""
    try:
        request: BusRequest = control.recv()
    except (EOFError, OSError):
        return False
    kind = request.kind
    if kind is BusControl.CLOSE:
        return False
    try:
        if kind is BusControl.FAULTS and request.faults is not None:
            emulator.set_faults(request.faults)
        elif kind is BusControl.INJECT:
            emulator.inject(request.servo_id, request.bits)
        elif kind is BusControl.MOVE:
            emulator.move(request.position)
        elif kind is BusControl.ADVANCE:
            emulator.advance(request.seconds, request.rx_bytes)
        answer: Any = emulator.report()
    except JointLabError as exc:
        answer = Failed(f"{type(exc).__name__}: {exc}")
    try:
        control.send(answer)
    except OSError:
        return False
    return True
