"""The JointLab device emulator: firmware on a byte link, with fault injection.

:class:`Emulator` runs a :class:`~jointlab.hardware.emulator.device.Device` (the firmware
logic around a ``SimRobot`` stepped once per tick, ``dt`` = 1 ms at 1 kHz) behind a byte
link (:class:`~jointlab.hardware.emulator.links.PtyLink` by default), exactly as a
microcontroller sits behind a UART. Its clock is one of two loops
(:mod:`~jointlab.hardware.emulator.loop`):

* **real time** (the default): ticks paced to the wall clock at ``rate_hz``, states
  streamed; what latency and deadline benchmarks measure;
* **lockstep** (``lockstep=True``): virtual time. The device never ticks on its own; the
  host's ``step()`` sends REQ STEP and the device runs exactly those ticks and answers with
  the state. A run is then independent of the machine's load and reproducible bit for bit.

Frames with a bad CRC are dropped and counted by the decoder, never answered.
:class:`~jointlab.hardware.emulator.faults.Faults` injects link faults for tests: byte
corruption and frame drops in either direction (rate 1.0 = silence), a delay on every sent
frame; :meth:`EmulatorProcess.stall` freezes the whole device for a while.
"""

from __future__ import annotations

import time
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.hardware.emulator.device import Device
from jointlab.hardware.emulator.faults import (
    Control,
    ControlRequest,
    EmulatorReport,
    Faults,
    corrupt,
)
from jointlab.hardware.emulator.links import Link, PtyLink, TcpLink
from jointlab.hardware.emulator.loop import serve_lockstep, serve_realtime
from jointlab.hardware.emulator.queue import APPLIED_LOG
from jointlab.hardware.protocol import FrameDecoder, FrameEncoder, Message, StateData
from jointlab.hardware.protocol.wire import WatchdogAction
from jointlab.robots.description import RobotDescription

__all__ = ["Emulator"]


class Emulator:
    """A device on a byte link (see the module docstring).

    Args:
        robot: Description, built-in name or robot file.
        rate_hz: Tick rate in Hz.
        watchdog_ms: Power-up watchdog timeout, ms.
        watchdog_action: Power-up watchdog action.
        stream_period: Power-up DATA STATE period, ticks (real-time mode).
        faults: Initial fault injection.
        seed: Seed of the simulator.
        tcp_port: Serve on ``127.0.0.1:tcp_port`` (0: any free port) instead of a pty.
        lockstep: Virtual time (see the module docstring).
    """

    def __init__(
        self,
        robot: RobotDescription | str | Path = "arm6",
        *,
        rate_hz: int = 1000,
        watchdog_ms: int = 100,
        watchdog_action: WatchdogAction = WatchdogAction.HOLD,
        stream_period: int = 1,
        faults: Faults | None = None,
        seed: int = 0,
        tcp_port: int | None = None,
        lockstep: bool = False,
    ) -> None:
        from jointlab.sim import SimRobot  # emulators may use sim (docs/architecture.md)

        if not 1 <= int(rate_hz) <= 65535:
            raise ConfigurationError(f"rate_hz must be in [1, 65535], got {rate_hz!r}")
        dt = 1.0 / int(rate_hz)
        self._sim = SimRobot(robot, dt=dt, control_dt=dt, seed=seed)
        self.device = Device(
            self._sim,
            rate_hz=int(rate_hz),
            watchdog_ms=watchdog_ms,
            watchdog_action=watchdog_action,
            stream_period=stream_period,
            lockstep=lockstep,
            settle=not lockstep,  # real time: found at rest, as a real unpowered arm is
        )
        #: Seconds per tick.
        self.period = dt
        self.lockstep = bool(lockstep)
        try:
            self.link: Link = PtyLink() if tcp_port is None else TcpLink(tcp_port)
        except BaseException:
            self._sim.close()
            raise
        self._decoder, self._encoder = FrameDecoder(synced=False), FrameEncoder()
        self._delayed: deque[tuple[float, bytes]] = deque()
        #: (tick, ``time.perf_counter()``) of the DATA STATE frames written, newest last.
        self._state_sent: deque[tuple[int, float]] = deque(maxlen=APPLIED_LOG)
        self.counts = dict.fromkeys(
            ("tx_frames", "tx_dropped", "rx_dropped", "rx_corrupted", "tx_corrupted", "late_ticks"),
            0,
        )
        self.set_faults(faults or Faults())
        self._closed = False

    @property
    def path(self) -> str:
        """Where the host connects (a pty path, or ``socket://127.0.0.1:PORT``)."""
        return self.link.path

    def set_faults(self, faults: Faults) -> None:
        """Replace the fault injection settings (generators restart from ``faults.seed``)."""
        self.faults = faults
        self._received = 0  # good frames received since the faults were set
        self._drop_frames = frozenset(int(n) for n in faults.drop_rx_frames)
        rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(faults.seed).spawn(4)]
        self._rng_corrupt_rx, self._rng_corrupt_tx, self._rng_drop_rx, self._rng_drop_tx = rngs

    def report(self) -> EmulatorReport:
        """Counters and the log of accepted commands."""
        device = self.device
        return EmulatorReport(
            tick=device.tick_count,
            rx=self._decoder.stats,
            tx_overrun_bytes=self.link.tx_overrun_bytes,
            commands_refused=device.commands_refused,
            command_ticks=device.command_ticks,
            armed=device.armed,
            watchdog_engaged=device.watchdog_engaged,
            watchdog_tick=device.watchdog_tick,
            applied=tuple(device.applied),
            state_sent=tuple(self._state_sent),
            **self.counts,
        )

    #: Written once as a loop starts: one frame delimiter (docs/protocol.md, section 9).
    greeting = b"\x00"

    # ------------------------------------------------------------------ I/O
    def asleep(self) -> bool:
        """Never: the device streams its state and runs its watchdog every tick."""
        return False

    def skip(self, ticks: int) -> None:
        """Not used (the device never sleeps)."""

    def tick(self) -> None:
        """One device tick; sends the DATA STATE when one is due."""
        state = self.device.tick()
        if state is not None:
            self.send(state)

    def send(self, message: Message) -> None:
        """Frame and send ``message``, through the fault injection."""
        _, data = self._encoder.encode(message)
        faults, counts = self.faults, self.counts
        counts["tx_frames"] += 1
        if faults.drop_tx and self._rng_drop_tx.random() < faults.drop_tx:
            counts["tx_dropped"] += 1
            return
        if faults.corrupt_tx:
            data, hit = corrupt(data, faults.corrupt_tx, self._rng_corrupt_tx)
            counts["tx_corrupted"] += hit
        if faults.delay_tx or self._delayed:
            # behind the frames still delayed (a wire never reorders), even once the delay
            # was lowered or removed
            due = time.perf_counter() + faults.delay_tx
            if self._delayed:
                due = max(due, self._delayed[-1][0])
            self._delayed.append((due, data))
        else:
            self.link.write(data)
        if isinstance(message, StateData):
            self._state_sent.append((self.device.tick_count, time.perf_counter()))

    def next_delayed(self) -> float | None:
        """``time.perf_counter()`` when the next delayed frame is due, or None."""
        return self._delayed[0][0] if self._delayed else None

    def flush_delayed(self, now: float) -> None:
        """Write the delayed frames that are due at ``now``."""
        while self._delayed and self._delayed[0][0] <= now:
            self.link.write(self._delayed.popleft()[1])

    def receive(self, fd: int) -> None:
        """Read what arrived on ``fd`` and act on every complete frame, in order."""
        data = self.link.read(fd)
        if not data:
            return
        self.device.received_at = time.perf_counter()
        faults, counts = self.faults, self.counts
        if faults.corrupt_rx:
            data, hit = corrupt(data, faults.corrupt_rx, self._rng_corrupt_rx)
            counts["rx_corrupted"] += hit
        for frame in self._decoder.feed(data):
            number, self._received = self._received, self._received + 1
            if number in self._drop_frames or (
                faults.drop_rx and self._rng_drop_rx.random() < faults.drop_rx
            ):
                counts["rx_dropped"] += 1
                continue
            reply = self.device.handle(frame)
            if reply is not None:
                self.send(reply)

    # ------------------------------------------------------------------ loop
    def serve(self, control: Connection | None = None, duration: float | None = None) -> None:
        """Run the device until ``duration`` seconds pass or a CLOSE arrives on ``control``.

        ``control`` is the emulator end of an :class:`EmulatorProcess` pipe; end-of-file on
        it (the parent died) also stops the loop.
        """
        (serve_lockstep if self.lockstep else serve_realtime)(self, control, duration)

    def control(self, connection: Connection) -> bool:
        """Serve one control request; False when the loop must stop."""
        try:
            request: ControlRequest = connection.recv()
        except (EOFError, OSError):
            return False
        kind = request.kind
        if kind is Control.FAULTS and request.faults is not None:
            self.set_faults(request.faults)
        elif kind is Control.RESET:
            self.device.reset()
            self._delayed.clear()
        if kind is Control.CLOSE:
            return False
        try:
            connection.send(self.report())
        except OSError:  # the parent is gone
            return False
        if kind is Control.STALL:
            time.sleep(request.seconds)  # the whole device freezes: no ticks, no I/O
        return True

    def close(self) -> None:
        """Release the link and the simulator; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self.link.close()
        self._sim.close()

    def __enter__(self) -> Emulator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
