"""The device emulator in its own process: :class:`EmulatorProcess`.

The process is ``python -m jointlab.hardware.emulator --control-fd N``: a fresh interpreter
(no ``if __name__ == "__main__"`` guard is needed in the caller's script, unlike with
multiprocessing's spawn). It receives its settings and :class:`ControlRequest` messages over
a socket pair, answers each with an :class:`EmulatorReport`, and exits when the socket
closes, so it never outlives its parent.

**The child is always reaped**: by :meth:`EmulatorProcess.close`, or, when the object is
dropped without it (garbage collection, interpreter exit), by a ``weakref.finalize``
callback that closes the control socket, waits for the child (terminating, then killing it
if it does not exit) and reaps it, so no zombie is left behind in any case.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import weakref
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import jointlab
from jointlab.errors import ConfigurationError, LinkError, quote
from jointlab.hardware.emulator.faults import (
    Control,
    ControlRequest,
    EmulatorOptions,
    EmulatorReport,
    Failed,
    Faults,
)
from jointlab.robots.description import RobotDescription

__all__ = ["FIFO_PRIORITY", "REALTIME_NICE", "EmulatorProcess", "realtime_priority"]

#: Seconds ``close()`` waits at each stage (polite CLOSE, then SIGTERM, then SIGKILL).
STOP_WAIT = 2.0
#: Integer emulator options and their ranges, checked before the process starts.
OPTION_RANGES = {
    "seed": (0, 2**32 - 1),
    "rate_hz": (1, 65535),
    "watchdog_ms": (0, 65535),
    "tcp_port": (0, 65535),
    "stream_period": (1, 65535),
}
#: Longest child error quoted in a LinkError, characters.
MAX_CHILD_ERROR = 400


def _check_options(options: dict[str, Any]) -> None:
    """Refuse out-of-range emulator options here, so the child never dies of them."""
    for key, (low, high) in OPTION_RANGES.items():
        value = options.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ConfigurationError(
                f"emulator option {key!r} = {quote(value, 60)} is invalid: expected a whole "
                f"number in [{low}, {high}]"
            )


def _label(robot: object) -> str:
    """A short name of the emulated robot for messages."""
    return repr(robot.name) if isinstance(robot, RobotDescription) else quote(str(robot), 200)


#: Niceness a real-time emulator process asks for by default: under the normal time-sharing
#: policy its CPU weight is about 9 times a niceness-0 process's, so a busy machine wakes it
#: sooner; it can still never starve the machine (as a real-time policy can). Lockstep
#: emulators run at 0: nothing waits on the wall clock for them.
REALTIME_NICE = -10
#: SCHED_FIFO priority of an emulator that asks for it: low (1-99, higher wins), so the
#: kernel's threaded interrupts (50) and every other real-time task still come first.
FIFO_PRIORITY = 10


def realtime_priority(priority: int = FIFO_PRIORITY) -> bool:
    """Move the calling thread (and threads it starts later) to ``SCHED_FIFO``.

    A real-time loop on a busy machine is late whenever the scheduler runs something else;
    real-time scheduling fixes that. It needs the privilege (root or ``CAP_SYS_NICE``), so
    this is opt-in and returns False where it is not granted. Both JointLab loops sleep
    between periods, so they never starve the machine.
    """
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(priority)))
    except (AttributeError, OSError):
        return False
    return True


def _stop(process: subprocess.Popen, connection: Connection) -> None:
    """Stop and reap ``process`` (politely, then by force); safe to call twice."""
    if not connection.closed:
        try:
            connection.send(ControlRequest(Control.CLOSE))
        except (OSError, ValueError):
            pass
        connection.close()  # end-of-file also stops the emulator
    for stop in (None, process.terminate, process.kill):
        if process.poll() is not None:
            return
        if stop is not None:
            try:
                stop()
            except OSError:
                return
        try:
            process.wait(STOP_WAIT)
            return
        except subprocess.TimeoutExpired:
            continue


class EmulatorProcess:
    """An :class:`~jointlab.hardware.emulator.Emulator` in its own process.

    The process is ``python -m jointlab.hardware.emulator --control-fd N``: a fresh
    interpreter that gets its settings and control requests over a socket pair, and exits
    when that closes, so it never outlives its parent; it is reaped however this object
    ends (see the module docstring).

    Args:
        robot: Description, built-in name or robot file.
        start_timeout: Seconds to wait for the process to report its pty.
        fifo: Ask for SCHED_FIFO scheduling of the emulator (:func:`realtime_priority`);
            :attr:`fifo` says whether it was granted.
        nice: Niceness to ask for (below 0: a larger share of a busy CPU under the normal
            policy, :func:`jointlab.scheduling.raised_weight`); default
            :data:`REALTIME_NICE` in real time, 0 in lockstep. :attr:`nice` says what the
            process got (its inherited niceness where lowering it is not permitted).
        **options: :class:`~jointlab.hardware.emulator.Emulator` keyword arguments
            (``lockstep=True`` for virtual time).

    Raises:
        LinkError: the process did not start (names the robot and the reason).
    """

    #: The module run as ``python -m MODULE --control-fd N`` (subclasses run other emulators).
    module = "jointlab.hardware.emulator"

    def __init__(
        self,
        robot: RobotDescription | str | Path = "arm6",
        *,
        start_timeout: float = 60.0,
        fifo: bool = False,
        nice: int | None = None,
        **options: Any,
    ) -> None:
        self._closed = False
        _check_options(options)
        label = _label(robot)
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        package_root = str(Path(jointlab.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (package_root, env.get("PYTHONPATH"))))
        command = [sys.executable, "-m", self.module, "--control-fd"]
        try:
            self._process = subprocess.Popen(
                [*command, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
            )
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        self._finalizer = weakref.finalize(self, _stop, self._process, self._conn)
        self.pid: int = self._process.pid
        #: Whether the emulator runs in lockstep (virtual time).
        self.lockstep: bool = bool(options.get("lockstep", False))
        try:
            if nice is None:
                nice = 0 if options.get("lockstep", False) else REALTIME_NICE
            self._conn.send(EmulatorOptions(robot, options, fifo=fifo, nice=int(nice)))
            if not self._conn.poll(start_timeout):
                raise LinkError(f"emulator for {label} did not start within {start_timeout} s")
            message = self._conn.recv()
        except (EOFError, OSError) as exc:
            self.close()
            raise LinkError(f"emulator for {label} exited during start-up") from exc
        except BaseException:
            self.close()
            raise
        if isinstance(message, Failed):
            self.close()
            reason = message.error
            if len(reason) > MAX_CHILD_ERROR:
                reason = reason[: MAX_CHILD_ERROR - 3] + "..."
            raise LinkError(f"emulator for {label} failed to start: {reason}")
        #: Where the host connects (a pty path, or ``socket://127.0.0.1:PORT``).
        self.path: str = message.path
        #: Whether the emulator runs with SCHED_FIFO scheduling.
        self.fifo: bool = message.fifo
        #: The niceness the emulator process runs at.
        self.nice: int = message.nice

    def _ask(self, request: Any, timeout: float = 10.0) -> Any:
        if self._closed:
            raise LinkError("the emulator process is closed")
        try:
            self._conn.send(request)
            if not self._conn.poll(timeout + request.seconds):
                raise LinkError(f"emulator did not answer {request.kind.value} in {timeout} s")
            return self._conn.recv()
        except (EOFError, OSError) as exc:
            raise LinkError(f"emulator process {self.pid} is gone") from exc

    def report(self) -> EmulatorReport:
        """The emulator's counters and accepted-command log."""
        return self._ask(ControlRequest(Control.REPORT))

    def set_faults(self, faults: Faults | None = None, **changes: Any) -> EmulatorReport:
        """Set the fault injection (``faults`` with ``changes``); report at that tick."""
        return self._ask(
            ControlRequest(Control.FAULTS, faults=replace(faults or Faults(), **changes))
        )

    def stall(self, seconds: float) -> EmulatorReport:
        """Freeze the device (no ticks, no I/O) for ``seconds``; returns as it starts."""
        return self._ask(ControlRequest(Control.STALL, seconds=float(seconds)))

    def reset(self) -> EmulatorReport:
        """Power-up state: simulator at home, disarmed, default watchdog and stream."""
        return self._ask(ControlRequest(Control.RESET))

    @property
    def alive(self) -> bool:
        """True while the process runs."""
        return self._process.poll() is None

    def close(self) -> None:
        """Stop the process (politely, then by force) and reap it; safe to call twice."""
        self._closed = True
        self._finalizer()

    def __enter__(self) -> EmulatorProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
