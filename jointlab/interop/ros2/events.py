"""The bridge's events: one JSON ``std_msgs/String`` each, on the events topic.

:class:`EventPublisher` turns the Commander's events (refusals, clamps, stalls, preemptions)
and the state watch's (:mod:`.watch`) into messages. A clamp is published once when it
starts, not every period it lasts: a (quantity, joints) pair clamped in the previous period
is not published again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jointlab.controllers.events import CommandEvent, CommandEventKind
from jointlab.interop.ros2.messages import event_json

__all__ = ["EventPublisher"]

#: The Commander events the bridge publishes (the others are its own bookkeeping).
PUBLISHED = (
    CommandEventKind.REFUSED,
    CommandEventKind.STALLED,
    CommandEventKind.PREEMPTED,
    CommandEventKind.CLAMPED,
)


class EventPublisher:
    """Publish events as JSON text through ``send`` (a publisher's ``publish`` of a string).

    Args:
        send: Called with each event's JSON text.
        joint_names: The robot's joint names (events name joints, not indices).
    """

    def __init__(self, send: Callable[[str], None], joint_names: tuple[str, ...]) -> None:
        self._send = send
        self._names = joint_names
        #: Where the requests being handled came from (a topic, a service, ``commander``).
        self.source = "commander"
        #: Events published so far.
        self.count = 0
        self._clamped: set[tuple[str, tuple[int, ...]]] = set()
        self._clamped_before: set[tuple[str, tuple[int, ...]]] = set()

    def publish(
        self,
        source: str,
        kind: str,
        t: float,
        joints: list[str],
        message: str,
        data: dict[str, Any] | None = None,
        **extra: Any,
    ) -> None:
        """One event: ``kind``, robot time ``t``, ``source``, joint names, message, data."""
        self._send(
            event_json(
                kind, time=t, source=source, joints=joints, message=message, **(data or {}), **extra
            )
        )
        self.count += 1

    def on_command_event(self, event: CommandEvent) -> None:
        """A Commander subscriber: publish what a ROS user needs to hear of."""
        if event.kind not in PUBLISHED:
            return
        if event.kind is CommandEventKind.CLAMPED:  # once per entry, not once per period
            key = (str(event.data.get("quantity", "")), event.joints)
            self._clamped.add(key)
            if key in self._clamped_before:
                return
        names = [self._names[j] for j in event.joints]
        self.publish(
            self.source,
            event.kind.value,
            event.time,
            names,
            event.message,
            dict(event.data),
            command_id=event.command_id,
        )

    def end_period(self) -> None:
        """Mark the end of a control period (the clamps of this one are now 'before')."""
        self._clamped_before, self._clamped = self._clamped, set()
