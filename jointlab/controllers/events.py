"""Command feedback: event kinds, events and command handles (BB-style feedback with ids).

Every command the :class:`~jointlab.controllers.commander.Commander` receives gets a
``command_id`` (yours, or a counter) and produces events in this order::

    accepted → begin_motion → end_motion | stalled | preempted
    refused                                  (instead of accepted; CommandRefused is raised)

``clamped`` events report the safety layer changing the command of a joint (with the id of
the command that drives it). Event kinds have the same values as
``jointlab.recording.EventKind``, so a recorder can store them directly.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["CommandEvent", "CommandEventKind", "CommandHandle", "CommandStatus"]


class CommandEventKind(str, enum.Enum):
    """Kinds of command feedback."""

    ACCEPTED = "accepted"
    BEGIN_MOTION = "begin_motion"
    END_MOTION = "end_motion"
    STALLED = "stalled"
    REFUSED = "refused"
    PREEMPTED = "preempted"
    CLAMPED = "clamped"


class CommandStatus(str, enum.Enum):
    """Where a command is in its life."""

    #: Accepted and still driving at least one joint.
    ACTIVE = "active"
    #: Finished: the target was reached within tolerance (``end_motion``).
    SUCCEEDED = "succeeded"
    #: Gave up: the target was not reached in time, or the robot reported a stall.
    STALLED = "stalled"
    #: Replaced by another command on all its joints, or stopped by disarm/brakes/reset.
    PREEMPTED = "preempted"
    #: Not accepted.
    REFUSED = "refused"


@dataclass(frozen=True)
class CommandEvent:
    """One feedback event."""

    #: What happened.
    kind: CommandEventKind
    #: Id of the command concerned (``None`` for a clamp of a joint no command drives).
    command_id: Hashable | None
    #: Robot time of the event, seconds.
    time: float
    #: Joint indices concerned.
    joints: tuple[int, ...]
    #: Human-readable detail (the refusal or clamp reason, what preempted it...).
    message: str = ""
    #: Extra values (``reason``, ``initial_position``, ``target_position``, ``by``...).
    data: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def fields(self) -> dict[str, Any]:
        """Flat JSON-friendly fields (for ``Recorder.event``)."""
        out: dict[str, Any] = {
            "command_id": self.command_id
            if isinstance(self.command_id, (int, str))
            else (None if self.command_id is None else repr(self.command_id)),
            "joints": list(self.joints),
        }
        if self.message:
            out["message"] = self.message
        out.update(self.data)
        return out


class CommandHandle:
    """What a command returns: its id, its joints, its live status and its events.

    The status is updated by the Commander as ticks run; ``commander.wait(handle)`` drives the
    loop until :attr:`done`.
    """

    __slots__ = ("_events", "_status", "command_id", "joints", "open_ended", "verb")

    def __init__(
        self, command_id: Hashable, verb: str, joints: tuple[int, ...], open_ended: bool
    ) -> None:
        #: The correlation id given in every event of this command.
        self.command_id = command_id
        #: The verb, e.g. ``"set_position"``.
        self.verb = verb
        #: Joint indices the command drives.
        self.joints = joints
        #: True for commands that only end when replaced (hold, forever trajectories...).
        self.open_ended = open_ended
        self._status = CommandStatus.ACTIVE
        self._events: list[CommandEvent] = []

    @property
    def status(self) -> CommandStatus:
        """Current status."""
        return self._status

    @property
    def done(self) -> bool:
        """True once the command is no longer active."""
        return self._status is not CommandStatus.ACTIVE

    @property
    def succeeded(self) -> bool:
        """True when the command ended with ``end_motion``."""
        return self._status is CommandStatus.SUCCEEDED

    @property
    def events(self) -> tuple[CommandEvent, ...]:
        """This command's events so far, in order."""
        return tuple(self._events)

    def _record(self, event: CommandEvent, status: CommandStatus | None = None) -> None:
        self._events.append(event)
        if status is not None:
            self._status = status

    def __repr__(self) -> str:
        return (
            f"CommandHandle(command_id={self.command_id!r}, verb={self.verb!r}, "
            f"joints={self.joints}, status={self._status.value})"
        )
