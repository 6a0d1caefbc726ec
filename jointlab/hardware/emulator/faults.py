"""Fault injection and the control protocol of the device emulator.

:class:`Faults` says which link faults an :class:`~jointlab.hardware.emulator.Emulator`
injects; :class:`ControlRequest` and :class:`EmulatorReport` are the typed messages on the
control pipe of an :class:`~jointlab.hardware.emulator.EmulatorProcess` (pickled
dataclasses, never strings and tuples).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.hardware.emulator.queue import AppliedCommand
from jointlab.hardware.protocol import LinkStats

__all__ = [
    "Control",
    "ControlRequest",
    "EmulatorOptions",
    "EmulatorReport",
    "Failed",
    "Faults",
    "Started",
    "corrupt",
]


@dataclass(frozen=True)
class Faults:
    """Link faults the emulator injects (all off by default).

    Byte corruption XORs a byte with a random non-zero value; whether byte ``i`` of a
    direction is hit depends only on ``seed`` and ``i``, not on how the bytes were chunked.
    """

    #: Probability that a received byte (host → device) is corrupted.
    corrupt_rx: float = 0.0
    #: Probability that a sent byte (device → host) is corrupted.
    corrupt_tx: float = 0.0
    #: Probability that a received good-CRC frame is ignored (1.0: the host is not heard).
    drop_rx: float = 0.0
    #: Received good-CRC frames to ignore, by number (0: the first received after the faults
    #: were set): exactly these are lost, whatever the timing.
    drop_rx_frames: tuple[int, ...] = ()
    #: Probability that a frame is not sent (1.0: the device goes silent).
    drop_tx: float = 0.0
    #: Seconds every sent frame waits before it leaves (never before an earlier frame: once
    #: it is lowered, new frames queue behind those still delayed, as on a wire).
    delay_tx: float = 0.0
    #: Seed of the fault generators.
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("corrupt_rx", "corrupt_tx", "drop_rx", "drop_tx"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigurationError(f"Faults.{name} must be a probability, got {value!r}")
        if any(int(n) < 0 for n in self.drop_rx_frames):
            raise ConfigurationError(
                f"Faults.drop_rx_frames must be frame numbers >= 0, got {self.drop_rx_frames!r}"
            )
        if not 0.0 <= self.delay_tx < 10.0:
            raise ConfigurationError(f"Faults.delay_tx must be in [0, 10) s, got {self.delay_tx!r}")


class Control(enum.Enum):
    """What a :class:`ControlRequest` asks the emulator process to do."""

    REPORT = "report"
    FAULTS = "faults"
    STALL = "stall"
    RESET = "reset"
    CLOSE = "close"


@dataclass(frozen=True)
class ControlRequest:
    """A request on the control pipe of an :class:`EmulatorProcess`."""

    kind: Control
    #: New faults for ``FAULTS``.
    faults: Faults | None = None
    #: Seconds for ``STALL``.
    seconds: float = 0.0


@dataclass(frozen=True)
class EmulatorReport:
    """The emulator's counters, sent in reply to every :class:`ControlRequest`."""

    #: Ticks run (device time is ``tick / rate_hz``).
    tick: int
    #: Decoder counters of the received direction (CRC errors, gaps, ...).
    rx: LinkStats
    #: Frames sent (including dropped ones) and frames dropped by ``Faults.drop_tx``.
    tx_frames: int
    tx_dropped: int
    #: Received good-CRC frames ignored by ``Faults.drop_rx``.
    rx_dropped: int
    #: Bytes corrupted on purpose, per direction.
    rx_corrupted: int
    tx_corrupted: int
    #: Bytes lost because the host did not read them.
    tx_overrun_bytes: int
    #: Ticks started more than one period late (the schedule slipped each time).
    late_ticks: int
    #: Ticks at which a new command took effect (a host on time: every tick it streams).
    command_ticks: int
    #: Commands refused with a NACK.
    commands_refused: int
    armed: bool
    watchdog_engaged: bool
    #: Tick at which the watchdog last engaged (-1: never since the last reset).
    watchdog_tick: int
    #: Accepted commands, oldest first (at most ``device.APPLIED_LOG``).
    applied: tuple[AppliedCommand, ...] = field(default=(), repr=False)
    #: ``(tick, time.perf_counter())`` of the DATA STATE frames written, oldest first; the
    #: clock is the machine's monotonic clock, comparable with the host's on one machine.
    state_sent: tuple[tuple[int, float], ...] = field(default=(), repr=False)


def corrupt(data: bytes, rate: float, rng: np.random.Generator) -> tuple[bytes, int]:
    """XOR each byte with probability ``rate``; one uniform draw per byte (chunking-proof)."""
    draws = rng.random(len(data))
    hit = draws < rate
    count = int(np.count_nonzero(hit))
    if not count:
        return data, 0
    array = np.frombuffer(data, np.uint8).copy()
    array[hit] ^= (1 + draws[hit] / rate * 255).astype(np.uint8).clip(1, 255)
    return array.tobytes(), count


@dataclass(frozen=True)
class EmulatorOptions:
    """First message on the control pipe: what the emulator process should run."""

    #: A RobotDescription, a built-in name or a robot file path.
    robot: Any
    #: :class:`~jointlab.hardware.emulator.Emulator` keyword arguments.
    options: dict[str, Any] = field(default_factory=dict)
    #: Ask for SCHED_FIFO scheduling (see :func:`~jointlab.hardware.emulator.realtime_priority`).
    fifo: bool = False
    #: Niceness to ask for (below 0: a larger CPU share; :func:`jointlab.scheduling.raised_weight`).
    nice: int = 0


@dataclass(frozen=True)
class Started:
    """The emulator process is serving at ``path``."""

    path: str
    pid: int
    #: Whether SCHED_FIFO scheduling was asked for and granted.
    fifo: bool = False
    #: The niceness the emulator process runs at.
    nice: int = 0


@dataclass(frozen=True)
class Failed:
    """The emulator process could not start."""

    error: str
