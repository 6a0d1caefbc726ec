"""``python -m jointlab.hardware.emulator``: the emulator from a shell.

It is also the child side of :class:`~jointlab.hardware.emulator.process.EmulatorProcess`.

From a shell::

    python -m jointlab.hardware.emulator arm6              # prints the pty path, Ctrl-C stops
    python -m jointlab.hardware.emulator arm6 --lockstep   # virtual time: ?lockstep=1 to connect
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from jointlab.errors import JointLabError
from jointlab.hardware.emulator.emulator import Emulator
from jointlab.hardware.emulator.faults import EmulatorOptions, Failed, Started
from jointlab.hardware.emulator.process import realtime_priority
from jointlab.scheduling import niceness, normal_scheduling, raised_weight

__all__ = ["main", "serve_control"]


def serve_control(fd: int, build: Callable[..., Any] = Emulator) -> int:
    """Child side of :class:`EmulatorProcess`: options in, ``Started`` out, then serve.

    Args:
        fd: The child's end of the control socket pair.
        build: Called as ``build(robot, **options)``; returns the emulator to serve (a
            context manager with ``path`` and ``serve(control=...)``): :class:`Emulator`,
            or an emulated servo bus.
    """
    # The parent owns this process's lifetime and closes it: a terminal's Ctrl-C, which goes
    # to the whole foreground process group, is the parent's to handle (a child that died of
    # it first left the parent's link broken mid-exchange).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    connection = Connection(fd)
    try:
        settings: EmulatorOptions = connection.recv()
        emulator = build(settings.robot, **settings.options)
    except EOFError:
        return 1
    except Exception as exc:  # reported to the parent, which raises it as a LinkError
        connection.send(Failed(f"{type(exc).__name__}: {exc}"))
        return 1
    if not settings.fifo:
        normal_scheduling()  # not a real-time policy its parent may have been left with
    nice = raised_weight(settings.nice) if settings.nice else niceness()
    fifo = settings.fifo and realtime_priority()
    with emulator:
        connection.send(Started(emulator.path, os.getpid(), fifo, nice))
        emulator.serve(control=connection)
    return 0


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
    parser.add_argument(
        "--lockstep",
        action="store_true",
        help="virtual time: tick only when the host asks (connect with ?lockstep=1)",
    )
    parser.add_argument("--duration", type=float, default=None, help="stop after SECONDS")
    parser.add_argument(
        "--fifo",
        action="store_true",
        help="ask for SCHED_FIFO scheduling (needs root or CAP_SYS_NICE)",
    )
    parser.add_argument("--control-fd", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.control_fd is not None:
        return serve_control(args.control_fd)
    try:
        emulator = Emulator(
            args.robot,
            rate_hz=args.rate,
            watchdog_ms=args.watchdog_ms,
            stream_period=args.stream_period,
            tcp_port=args.tcp,
            lockstep=args.lockstep,
        )
    except JointLabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.fifo and not realtime_priority():
        print("warning: SCHED_FIFO scheduling not granted", file=sys.stderr)
    with emulator:
        print(emulator.path, flush=True)
        try:
            emulator.serve(duration=args.duration)
        except KeyboardInterrupt:
            pass
    return 0
