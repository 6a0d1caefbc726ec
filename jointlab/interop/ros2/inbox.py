"""What the ROS thread hands the control thread: checked requests, in arrival order.

The ROS executor's thread only receives: it checks a message (:mod:`.messages`) and puts a
:class:`Request` here; the control thread takes them all at the start of its period
(:meth:`Inbox.take`). A service call waits on its :class:`ServiceCall` for the answer.
"""

from __future__ import annotations

import enum
import queue
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jointlab.interop.ros2.messages import BadMessage, JointCommand, TrajectoryRequest

__all__ = ["Inbox", "Request", "RequestKind", "ServiceCall"]


class RequestKind(enum.Enum):
    """What a request carries."""

    #: A checked ``JointState`` command (:class:`JointCommand`).
    COMMAND = "command"
    #: A checked trajectory (:class:`TrajectoryRequest`).
    TRAJECTORY = "trajectory"
    #: A message refused by its checks (:class:`BadMessage`).
    BAD = "bad"
    #: A service call (:class:`ServiceCall`).
    SERVICE = "service"


@dataclass
class ServiceCall:
    """A ``std_srvs/Trigger`` call waiting for the control thread's answer."""

    #: ``"arm"``, ``"disarm"`` or ``"hold"``.
    verb: str
    #: Set by the control thread once :attr:`result` is in.
    done: threading.Event = field(default_factory=threading.Event)
    #: ``(success, message)``.
    result: tuple[bool, str] = (False, "not answered")

    def answer(self, success: bool, message: str) -> None:
        """Give the result and wake the waiting call."""
        self.result = (success, message)
        self.done.set()


@dataclass(frozen=True)
class Request:
    """One received request."""

    kind: RequestKind
    #: The topic or service it came from (for events).
    source: str
    payload: JointCommand | TrajectoryRequest | BadMessage | ServiceCall


class Inbox:
    """A thread-safe queue of :class:`Request` (put on the ROS thread, taken on the control one)."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Request] = queue.SimpleQueue()

    def put(self, kind: RequestKind, source: str, payload: Any) -> None:
        """Queue a request."""
        self._queue.put(Request(kind, source, payload))

    def empty(self) -> bool:
        """True when nothing waits."""
        return self._queue.empty()

    def take(self) -> tuple[list[Request], int]:
        """Every queued request, oldest first, and how many stream commands were superseded.

        A stream is about the latest target: of a run of commands for the same joints and
        fields queued back to back (the loop fell behind), only the newest is returned.
        """
        items: list[Request] = []
        while True:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                break
        kept = [
            r
            for i, r in enumerate(items)
            if not _superseded(r, items[i + 1] if i + 1 < len(items) else None)
        ]
        return kept, len(items) - len(kept)


def _superseded(request: Request, after: Request | None) -> bool:
    """True when ``after`` is a command for the same joints and fields as ``request``."""
    if (
        after is None
        or request.kind is not RequestKind.COMMAND
        or after.kind is not RequestKind.COMMAND
    ):
        return False
    one, other = request.payload, after.payload
    return bool(np.array_equal(one.joints, other.joints)) and all(
        (getattr(one, f) is None) == (getattr(other, f) is None)
        for f in ("position", "velocity", "effort")
    )
