"""The JointLab device emulator: firmware on a pseudo-terminal, paced to wall-clock time.

:class:`Emulator` runs a :class:`~jointlab.hardware.device.Device` (the firmware logic
around a ``SimRobot`` stepped once per tick, ``dt`` = 1 ms at 1 kHz) behind a byte link
(:class:`~jointlab.hardware.links.PtyLink` by default), exactly as a microcontroller sits
behind a UART:

* ticks are paced to ``time.perf_counter`` on an absolute schedule, so small jitter does not
  accumulate; between ticks the loop waits in ``select`` on the link, so requests are
  answered as soon as they arrive, while accepted commands take effect at the next tick;
* a tick that starts more than one period late (the process was descheduled) is counted and
  the schedule **slips** instead of running the missed ticks back to back: firmware never
  bursts, and a burst would leave the host no time to answer each state. Device time is the
  tick count, so it then runs behind the wall clock, never faster;
* frames with a bad CRC are dropped and counted by the decoder, never answered;
* :class:`Faults` injects link faults for tests: byte corruption and frame drops in either
  direction (rate 1.0 = silence), a delay on every sent frame; :meth:`EmulatorProcess.stall`
  freezes the whole device for a while.

:class:`EmulatorProcess` runs an emulator in its own process (a fresh interpreter) and
talks to it over a socket pair with :class:`ControlRequest` / :class:`EmulatorReport`;
``jointlab.connect("emulated://arm6")`` uses it. From a shell::

    python -m jointlab.hardware.emulator arm6          # prints the pty path, Ctrl-C stops
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import time
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

import jointlab
from jointlab.errors import ConfigurationError
from jointlab.hardware.device import APPLIED_LOG, Device
from jointlab.hardware.emulator_process import EmulatorProcess, realtime_priority
from jointlab.hardware.faults import (
    Control,
    ControlRequest,
    EmulatorOptions,
    EmulatorReport,
    Failed,
    Faults,
    Started,
    corrupt,
)
from jointlab.hardware.links import Link, PtyLink, TcpLink
from jointlab.hardware.protocol import FrameDecoder, FrameEncoder, Message, StateData
from jointlab.hardware.wire import WatchdogAction
from jointlab.robots.description import RobotDescription

__all__ = ["Emulator", "EmulatorProcess", "Faults", "main", "realtime_priority"]


class Emulator:
    """A device on a byte link (see the module docstring).

    Args:
        robot: Description, built-in name or robot file.
        rate_hz: Tick rate in Hz.
        watchdog_ms: Power-up watchdog timeout, ms.
        watchdog_action: Power-up watchdog action.
        stream_period: Power-up DATA STATE period, ticks.
        faults: Initial fault injection.
        seed: Seed of the simulator.
        tcp_port: Serve on ``127.0.0.1:tcp_port`` (0: any free port) instead of a pty.
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
    ) -> None:
        from jointlab.sim import SimRobot  # the emulator may use sim (docs/architecture.md)

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
        )
        self.period = dt
        try:
            self.link: Link = PtyLink() if tcp_port is None else TcpLink(tcp_port)
        except BaseException:
            self._sim.close()
            raise
        self._decoder, self._encoder = FrameDecoder(), FrameEncoder()
        self._delayed: list[tuple[float, bytes]] = []
        #: (tick, ``time.perf_counter()``) of the DATA STATE frames written, newest last.
        self._state_sent: deque[tuple[int, float]] = deque(maxlen=APPLIED_LOG)
        self._counts = dict.fromkeys(
            (
                "tx_frames",
                "tx_dropped",
                "rx_dropped",
                "rx_corrupted",
                "tx_corrupted",
                "late_ticks",
            ),
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
            **self._counts,
        )

    # ------------------------------------------------------------------ I/O
    def send(self, message: Message) -> None:
        """Frame and send ``message``, through the fault injection."""
        _, data = self._encoder.encode(message)
        faults, counts = self.faults, self._counts
        counts["tx_frames"] += 1
        if faults.drop_tx and self._rng_drop_tx.random() < faults.drop_tx:
            counts["tx_dropped"] += 1
            return
        if faults.corrupt_tx:
            data, hit = corrupt(data, faults.corrupt_tx, self._rng_corrupt_tx)
            counts["tx_corrupted"] += hit
        if faults.delay_tx:
            self._delayed.append((time.perf_counter() + faults.delay_tx, data))
        else:
            self.link.write(data)
        if isinstance(message, StateData):
            self._state_sent.append((self.device.tick_count, time.perf_counter()))

    def _flush_delayed(self, now: float) -> None:
        while self._delayed and self._delayed[0][0] <= now:
            self.link.write(self._delayed.pop(0)[1])

    def receive(self, fd: int) -> None:
        """Read what arrived on ``fd`` and act on every complete frame."""
        data = self.link.read(fd)
        if not data:
            return
        self.device.received_at = time.perf_counter()
        faults, counts = self.faults, self._counts
        if faults.corrupt_rx:
            data, hit = corrupt(data, faults.corrupt_rx, self._rng_corrupt_rx)
            counts["rx_corrupted"] += hit
        for frame in self._decoder.feed(data):
            if faults.drop_rx and self._rng_drop_rx.random() < faults.drop_rx:
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
        period, device, link = self.period, self.device, self.link
        link.write(b"\x00")  # section 9: one delimiter at start-up
        start = next_tick = time.perf_counter()
        end = None if duration is None else start + duration
        control_fd = control.fileno() if control is not None else None
        counts = self._counts
        while True:
            now = time.perf_counter()
            wait = next_tick - now
            if wait > 0:
                if self._delayed:
                    wait = min(wait, max(self._delayed[0][0] - now, 0.0))
                fds = link.fds()
                if control_fd is not None:
                    fds = [*fds, control_fd]
                ready, _, _ = select.select(fds, [], [], wait)
                for fd in ready:
                    if fd == control_fd:
                        if not self._control(control):  # type: ignore[arg-type]
                            return
                    else:
                        self.receive(fd)
                self._flush_delayed(time.perf_counter())
                link.flush()
                continue
            if end is not None and now >= end:
                return
            if now - next_tick > period:  # descheduled: slip rather than burst
                counts["late_ticks"] += 1
                next_tick = now
            for fd in link.fds():  # commands that arrived just before this tick
                self.receive(fd)
            state = device.tick()
            if state is not None:
                self.send(state)
            next_tick += period

    def _control(self, control: Connection) -> bool:
        try:
            request: ControlRequest = control.recv()
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
            control.send(self.report())
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


# ====================================================================== process
def _serve_control(fd: int) -> int:
    """Child side of :class:`EmulatorProcess`: options in, ``Started`` out, then serve."""
    conn = Connection(fd)
    try:
        settings: EmulatorOptions = conn.recv()
        emulator = Emulator(settings.robot, **settings.options)
    except EOFError:
        return 1
    except Exception as exc:  # reported to the parent, which raises it as a LinkError
        conn.send(Failed(f"{type(exc).__name__}: {exc}"))
        return 1
    realtime = settings.realtime and realtime_priority()
    with emulator:
        conn.send(Started(emulator.path, os.getpid(), realtime))
        emulator.serve(control=conn)
    return 0


# ====================================================================== command line
def main(argv: list[str] | None = None) -> int:
    """``python -m jointlab.hardware.emulator ROBOT``: serve a device until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m jointlab.hardware.emulator",
        description="JointLab device emulator on a pseudo-terminal (prints its path)",
    )
    parser.add_argument("robot", nargs="?", default="arm6", help="built-in name or robot file")
    parser.add_argument("--rate", type=int, default=1000, help="tick rate in Hz")
    parser.add_argument("--watchdog-ms", type=int, default=100, help="power-up watchdog, ms")
    parser.add_argument("--stream-period", type=int, default=1, help="DATA STATE period, ticks")
    parser.add_argument(
        "--tcp",
        type=int,
        metavar="PORT",
        default=None,
        help="serve on 127.0.0.1:PORT instead of a pty (0: any free port)",
    )
    parser.add_argument("--duration", type=float, default=None, help="stop after SECONDS")
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="ask for SCHED_FIFO scheduling (needs root or CAP_SYS_NICE)",
    )
    parser.add_argument("--control-fd", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.control_fd is not None:
        return _serve_control(args.control_fd)
    try:
        emulator = Emulator(
            args.robot,
            rate_hz=args.rate,
            watchdog_ms=args.watchdog_ms,
            stream_period=args.stream_period,
            tcp_port=args.tcp,
        )
    except jointlab.JointLabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.realtime and not realtime_priority():
        print("warning: real-time scheduling not granted", file=sys.stderr)
    with emulator:
        print(emulator.path, flush=True)
        try:
            emulator.serve(duration=args.duration)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
