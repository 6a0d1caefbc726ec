"""Requests of the serial backend: send, wait for the reply the table promises, retry once.

:class:`Requester` is the part of :class:`~jointlab.hardware.host.robot.SerialRobot` that
sends REQ frames. A request waits for its reply (the message table says which: ACK, ACK
GEOMETRY, ACK HELLO, DATA STATE), is retried once on timeout (every request is idempotent,
docs/protocol.md section 10.4) and then declares the link dead. A NACK
becomes :class:`~jointlab.errors.CommandRefused` with the device's reason; a refused setting
(REQ SPEED/ACCEL) a :class:`~jointlab.errors.ConfigurationRefused`.
"""

from __future__ import annotations

from jointlab.errors import CommandRefused, ConfigurationRefused, LinkError
from jointlab.hardware.host.health import LinkHealth
from jointlab.hardware.host.link import HostLink
from jointlab.hardware.protocol import (
    TABLE,
    AccelRequest,
    Message,
    Nack,
    NackReason,
    SpeedRequest,
)

__all__ = ["SETTING_REASONS", "Requester", "refused"]

_SETTINGS = (SpeedRequest, AccelRequest)
#: NACK reasons of REQ SPEED/ACCEL that mean "bad setting" (raised as ConfigurationRefused).
SETTING_REASONS = {NackReason.OUT_OF_LIMITS, NackReason.UNKNOWN_JOINT, NackReason.INVALID_VALUE}


def refused(nack: Nack, cls: type[CommandRefused] = CommandRefused) -> CommandRefused:
    """The :class:`CommandRefused` (or ``cls``) for a NACK: its reason and its sentence."""
    return cls(TABLE.describe(nack), reason=nack.reason.slug)


class Requester:
    """Sends requests on a link and turns replies into results or errors.

    Args:
        link: The host link.
        health: The link's liveness policy (timeouts, dead-link errors).
    """

    def __init__(self, link: HostLink, health: LinkHealth) -> None:
        self.link = link
        self.health = health

    def request(self, message: Message, timeout: float | None = None) -> Message:
        """Send a request, retry once on timeout (if idempotent), return the reply.

        Raises:
            CommandRefused: the device answered NACK (``reason`` is its reason;
                :class:`ConfigurationRefused` for a refused setting).
            LinkError: no reply (the link is then dead), or a port error.
        """
        health = self.health
        health.check(self.link)
        timeout = health.request_timeout if timeout is None else float(timeout)
        attempts = 2  # every request is idempotent (REQ STEP too: its target is absolute)
        for _ in range(attempts):
            try:
                reply = self.link.request(message, timeout)
            except LinkError as exc:
                raise health.fail(str(exc)) from exc
            if isinstance(reply, Nack):
                if isinstance(message, _SETTINGS) and reply.reason in SETTING_REASONS:
                    raise refused(reply, ConfigurationRefused)
                raise refused(reply)
            if reply is not None:
                return reply
        raise health.fail(health.unanswered(type(message).__name__, attempts, timeout))
