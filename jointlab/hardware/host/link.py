"""The host end of a serial session: frames in and out, replies routed, the latest state.

:class:`HostLink` is the ``serial.threaded.Protocol`` of the host: the transport's reader
thread calls :meth:`HostLink.data_received`; the backend
(:class:`~jointlab.hardware.host.robot.SerialRobot`) calls :meth:`HostLink.send`,
:meth:`HostLink.request` and waits on :attr:`HostLink.cond`.

Every message from the device is **routed by its class, from the message table**: a reply
class (every ACK and NACK row) goes to the request it echoes; DATA STATE is the state stream,
and, from a lockstep device (which sends states only when asked), also completes the oldest
pending request whose table reply is DATA STATE (REQ STEP). A NACK of a command is queued
for the caller. Nothing is kept in a hand-written list of "known replies", so a new reply
class cannot be dropped by mistake.

A DATA STATE whose joint count differs from the robot's (:attr:`HostLink.dof`) is never
published: it is rejected, counted (``LinkStats.rejected``) and described in
:attr:`HostLink.rejection`, so no consumer ever sees an array of the wrong length.

Everything the reader thread shares with the caller is guarded by one
:class:`threading.Condition`.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import deque
from dataclasses import dataclass

import serial.threaded

from jointlab.errors import LinkError
from jointlab.hardware.host.transport import SerialTransport
from jointlab.hardware.protocol import (
    TABLE,
    FrameDecoder,
    FrameEncoder,
    LinkStats,
    Message,
    MessageClass,
    Nack,
    StateData,
)

__all__ = ["HostLink", "Pending"]

_CMD = int(MessageClass.CMD)


@dataclass
class Pending:
    """A request waiting for its reply."""

    #: The request sent.
    message: Message
    #: Its sequence number.
    seq: int
    #: The reply the message table promises when the device accepts it.
    expects: type[Message]
    #: The reply (``expects`` or a NACK), once it arrived.
    reply: Message | None = None


class HostLink(serial.threaded.Protocol):
    """Protocol handler of the host (see the module docstring).

    Args:
        transport: An open transport; :meth:`start` starts its reader.
    """

    def __init__(self, transport: SerialTransport) -> None:
        self.transport = transport
        self.cond = threading.Condition()
        self._decoder = FrameDecoder(synced=False)
        self._encoder = FrameEncoder()
        self._pending: dict[int, Pending] = {}
        self._routes = {
            row.cls: self._on_reply if row.is_reply else self._on_state
            for row in TABLE
            if not row.from_host
        }
        #: Joints of the robot; a DATA STATE with another count is rejected (None: any).
        self.dof: int | None = None
        #: The device is in lockstep: it sends a DATA STATE only to answer a request, so a
        #: state completes the oldest request that expects one. A real-time device streams
        #: states on its own, which never answer a request.
        self.lockstep = False
        #: The device's tick rate (Hz), to read a state's tick from its time.
        self.rate_hz = 1000
        #: The latest accepted DATA STATE, or None before the first one.
        self.latest: StateData | None = None
        #: States accepted since the link started.
        self.state_count = 0
        #: ``time.perf_counter()`` when the last state arrived.
        self.last_state = time.perf_counter()
        #: NACKs of commands, oldest first.
        self.refusals: deque[Nack] = deque()
        #: Why the last DATA STATE was rejected, or None.
        self.rejection: str | None = None
        self._rejected = 0
        #: Replies that matched no pending request (late, after a timeout).
        self.late_replies = 0
        #: The exception that stopped the reader, or None.
        self.error: BaseException | None = None

    def start(self) -> None:
        """Start the transport's reader thread on this handler."""
        self.transport.start(self)

    @property
    def stats(self) -> LinkStats:
        """Counters of the received direction (CRC errors, gaps, rejected states, ...)."""
        with self.cond:
            return dataclasses.replace(self._decoder.stats, rejected=self._rejected)

    # ---------------------------------------------------------------- reader thread
    def data_received(self, data: bytes) -> None:
        """Decode ``data`` and route every message (reader thread)."""
        with self.cond:
            notify = False
            routes = self._routes
            for frame in self._decoder.feed(data):
                route = routes.get(type(frame.message))
                if route is not None:
                    notify |= route(frame.message)
            if notify:
                self.cond.notify_all()

    def _on_state(self, message: StateData) -> bool:
        if self.dof is not None and message.dof != self.dof:
            self._rejected += 1
            self.rejection = (
                f"the device sends DATA STATE for {message.dof} joints, the robot "
                f"has {self.dof} ({self._rejected} rejected)"
            )
            return False
        self.latest = message
        self.state_count += 1
        self.last_state = time.perf_counter()
        if self.lockstep:
            tick = round(message.time_us * self.rate_hz / 1e6)
            for pending in self._pending.values():
                # a STEP is answered by a state at its target tick or later: the answer to
                # an earlier STEP sent twice (a retry) cannot complete a later one
                if pending.expects is StateData and tick >= getattr(pending.message, "until", 0):
                    pending.reply = message
                    del self._pending[pending.seq]
                    break
        return True

    def _on_reply(self, message: Message) -> bool:
        ref_class, ref_seq = message.ref_class, message.ref_seq  # type: ignore[attr-defined]
        pending = self._pending.get(ref_seq)
        if (
            pending is not None
            and int(pending.message.msg_class) == ref_class
            and int(pending.message.msg_type) == message.ref_type  # type: ignore[attr-defined]
            and type(message) in (pending.expects, Nack)
        ):
            del self._pending[ref_seq]
            pending.reply = message
            return True
        if isinstance(message, Nack) and ref_class == _CMD:
            self.refusals.append(message)
            return True
        self.late_replies += 1  # a late reply to a request that timed out
        return False

    def connection_lost(self, exc: BaseException | None) -> None:
        """The reader stopped; wake every waiter (reader thread)."""
        with self.cond:
            self.error = exc if exc is not None else LinkError("the serial port was closed")
            self.cond.notify_all()

    # ---------------------------------------------------------------- caller
    def send(self, message: Message) -> int:
        """Number, frame and write ``message``; return its sequence number.

        Raises:
            LinkError: the port failed.
        """
        transport = self.transport
        with transport.locked():
            seq, data = self._encoder.encode(message)
            transport.write_locked(data)
        return seq

    def request(self, message: Message, timeout: float) -> Message | None:
        """Send a request and wait up to ``timeout`` s for its reply (None on timeout).

        Raises:
            LinkError: the port failed, before or while waiting.
        """
        expects = TABLE.row_of(type(message)).reply
        if expects is None:
            raise TypeError(f"{type(message).__name__} is not a request with a reply")
        transport = self.transport
        with transport.locked():
            seq = self._encoder.next_seq
            pending = Pending(message, seq, expects)
            with self.cond:
                self._pending[seq] = pending
            try:
                _, data = self._encoder.encode(message)
                transport.write_locked(data)
            except BaseException:
                with self.cond:
                    self._pending.pop(seq, None)
                raise
        deadline = time.perf_counter() + timeout
        with self.cond:
            while pending.reply is None and self.error is None:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    self._pending.pop(seq, None)
                    return None
                self.cond.wait(remaining)
            if pending.reply is None:
                self._pending.pop(seq, None)
                raise LinkError(f"the link failed while waiting for a reply: {self.error}")
            return pending.reply

    def take_refusal(self, seq: int | None = None) -> Nack | None:
        """Remove and return the oldest command NACK (for ``seq`` only, if given)."""
        with self.cond:
            for nack in self.refusals:
                if seq is None or nack.ref_seq == seq:
                    self.refusals.remove(nack)
                    return nack
        return None

    def close(self) -> None:
        """Close the transport (stops the reader)."""
        self.transport.close()
