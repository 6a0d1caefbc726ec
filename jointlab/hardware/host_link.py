"""The host end of a serial session: frames in and out, replies matched, the latest state.

:class:`HostLink` sits between the transport (:mod:`jointlab.hardware.transport`, whose
reader thread calls :meth:`HostLink.data_received`) and the backend
(:class:`~jointlab.hardware.serial_robot.SerialRobot`, which calls :meth:`HostLink.send`,
:meth:`HostLink.request` and waits on :attr:`HostLink.cond`). Everything the reader thread
shares with the caller is guarded by one :class:`threading.Condition`:

* the latest DATA STATE (the message itself; conversion to float64 is left to the caller,
  so the reader thread stays cheap) and a count of the states received;
* replies to requests, matched by the sequence number they echo;
* NACKs of commands (which are answered only when refused), queued for the caller;
* whether the device is armed, as far as the byte stream has told (ACK of ARM, DISARM,
  HELLO and POWER 0, and the ``armed`` flag of every state, in stream order);
* the error that stopped the reader (a port error, or a bug in this handler).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

from jointlab.errors import LinkError
from jointlab.hardware.protocol import (
    Ack,
    ArmRequest,
    DisarmRequest,
    FrameDecoder,
    FrameEncoder,
    GeometryReply,
    HelloReply,
    HelloRequest,
    LinkStats,
    Message,
    MessageClass,
    Nack,
    PowerRequest,
    StateData,
)
from jointlab.hardware.transport import Protocol, SerialTransport

__all__ = ["HostLink", "Pending"]

_REPLIES = (Ack, Nack, HelloReply, GeometryReply)
_REQ = int(MessageClass.REQ)


@dataclass
class Pending:
    """A request waiting for its reply."""

    #: The request sent.
    message: Message
    #: Its sequence number.
    seq: int
    #: The ACK (of any type) or NACK, once it arrived.
    reply: Message | None = None


class HostLink(Protocol):
    """Protocol handler of the host (see the module docstring).

    Args:
        transport: An open transport; :meth:`start` starts its reader.
    """

    def __init__(self, transport: SerialTransport) -> None:
        self.transport = transport
        self.cond = threading.Condition()
        self._decoder = FrameDecoder()
        self._encoder = FrameEncoder()
        self._pending: dict[int, Pending] = {}
        #: The latest DATA STATE, or None before the first one.
        self.latest: StateData | None = None
        #: States received since the link started.
        self.state_count = 0
        #: ``time.perf_counter()`` when the last state arrived.
        self.last_state = time.perf_counter()
        #: NACKs of commands, oldest first.
        self.refusals: deque[Nack] = deque()
        #: Whether the device is armed, as the byte stream says.
        self.device_armed = False
        #: The exception that stopped the reader, or None.
        self.error: BaseException | None = None

    def start(self) -> None:
        """Start the transport's reader thread on this handler."""
        self.transport.start(self)

    @property
    def stats(self) -> LinkStats:
        """Counters of the received direction (CRC errors, gaps, ...)."""
        with self.cond:
            return self._decoder.stats

    # ---------------------------------------------------------------- reader thread
    def data_received(self, data: bytes) -> None:
        """Decode ``data`` and publish states, replies and refusals (reader thread)."""
        with self.cond:
            frames = self._decoder.feed(data)
            if not frames:
                return
            notify = False
            for frame in frames:
                message = frame.message
                kind = type(message)
                if kind is StateData:
                    self.latest = message
                    self.state_count += 1
                    self.device_armed = message.armed
                    self.last_state = time.perf_counter()
                    notify = True
                elif kind in _REPLIES:
                    notify |= self._reply(message)
            if notify:
                self.cond.notify_all()

    def _reply(self, message: Message) -> bool:
        ref_class = message.ref_class  # type: ignore[attr-defined]
        pending = self._pending.get(message.ref_seq) if ref_class == _REQ else None  # type: ignore[attr-defined]
        if pending is not None and int(pending.message.msg_type) == message.ref_type:  # type: ignore[attr-defined]
            del self._pending[pending.seq]
            pending.reply = message
            if not isinstance(message, Nack):
                request = pending.message
                if isinstance(request, ArmRequest):
                    self.device_armed = True
                elif isinstance(request, (DisarmRequest, HelloRequest)) or (
                    isinstance(request, PowerRequest) and not request.on
                ):
                    self.device_armed = False
            return True
        if isinstance(message, Nack) and ref_class == MessageClass.CMD:
            self.refusals.append(message)
            return True
        return False  # a late reply to a request that timed out, or junk

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
        transport = self.transport
        with transport.locked():
            seq = self._encoder.next_seq
            pending = Pending(message, seq)
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
