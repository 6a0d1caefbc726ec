"""When a serial link counts as dead, and the errors that say so (naming what to change).

A real-time link is judged on the **wall clock**, generously: it is dead when no DATA STATE
arrived for ``dead_ms`` (default 1000 ms, which a healthy link on a machine with both cores
busy does not reach) **and** no bytes wait unread in the port. Bytes waiting unread mean the
host itself was descheduled (its reader thread did not run), not that the device went
silent, so the wait is extended instead. The device's own watchdog (100 ms by default, on
the device clock) protects the robot meanwhile.

Every :class:`~jointlab.errors.LinkError` names the setting to change, both as the URL
query parameter (``?dead_ms=``, ``?timeout=``: what a ``jointlab`` command-line user can
change) and as the ``SerialRobot`` keyword.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from jointlab.errors import LinkError

if TYPE_CHECKING:
    from jointlab.hardware.host.link import HostLink

__all__ = ["DEFAULT_DEAD_MS", "DEFAULT_REQUEST_TIMEOUT", "LinkHealth", "foreign_frames"]

#: Default wall-clock silence (ms) after which a real-time link is dead.
DEFAULT_DEAD_MS = 1000.0
#: Default seconds to wait for the reply to a request (sent twice before the link is dead).
DEFAULT_REQUEST_TIMEOUT = 0.5
#: How much longer to wait when bytes are waiting unread (the host was descheduled), s.
_GRACE = 0.05


class LinkHealth:
    """Whether a link is alive, and the errors that declare it dead.

    Args:
        port: The port or URL, for messages.
        dead_ms: Wall-clock silence (ms) after which the link is dead.
        request_timeout: Seconds per request attempt.
    """

    def __init__(self, port: str, dead_ms: float, request_timeout: float) -> None:
        self.port = port
        self.dead_ms = float(dead_ms)
        self.request_timeout = float(request_timeout)
        #: Why the link died, or None while it is alive.
        self.dead: str | None = None

    @property
    def dead_time(self) -> float:
        """``dead_ms`` in seconds."""
        return self.dead_ms * 1e-3

    def fail(self, why: str) -> LinkError:
        """Declare the link dead; the error to raise."""
        self.dead = why
        return LinkError(
            f"link to {self.port!r} is dead: {why}; reconnect() or a new connect() restores it"
        )

    def check(self, link: HostLink) -> None:
        """Raise if the link was declared dead or its port failed."""
        if self.dead is not None:
            raise LinkError(
                f"link to {self.port!r} is dead: {self.dead}; reconnect() or a "
                "new connect() restores it"
            )
        if link.error is not None:
            raise self.fail(f"the port failed ({link.error})")

    def silence(self, seconds: float) -> str:
        """Why a link with no DATA STATE for ``seconds`` is dead."""
        return (
            f"no DATA STATE for {seconds * 1e3:.0f} ms (the limit is dead_ms="
            f"{self.dead_ms:g}; raise it with ?dead_ms={2 * self.dead_ms:g} in the URL or "
            f"dead_ms= of SerialRobot)"
        )

    def unanswered(self, request: str, attempts: int, timeout: float) -> str:
        """Why a link whose request stayed unanswered (``timeout`` s per attempt) is dead."""
        sent = "sent twice" if attempts == 2 else "sent once"
        return (
            f"no reply to {request} within {timeout * 1e3:.0f} ms ({sent}; "
            f"raise the limit with ?timeout={2 * self.request_timeout:g} in the URL or "
            f"request_timeout= of SerialRobot)"
        )

    def wait_state(self, link: HostLink, seen: int) -> None:
        """Wait (holding ``link.cond``) until more than ``seen`` states arrived.

        Raises:
            LinkError: the port failed, or the link fell silent (see the module docstring).
        """
        while link.state_count == seen:
            if link.error is not None:
                raise self.fail(f"the port failed ({link.error})")
            silent = time.perf_counter() - link.last_state
            remaining = self.dead_time - silent
            if remaining <= 0:
                if link.rejection is not None:
                    raise self.fail(link.rejection)
                if link.transport.unread() == 0:
                    raise self.fail(self.silence(silent) + foreign_frames(link))
                remaining = _GRACE  # our reader is behind: we were descheduled, not the device
            link.cond.wait(remaining)


def foreign_frames(link: HostLink) -> str:
    """What arrived instead of states, if anything: frames of another layout or version."""
    stats = link.stats
    parts = [
        f"{count} {what}"
        for count, what in (
            (stats.malformed, "frames whose payload did not parse (another layout?)"),
            (stats.version_mismatches, "frames of another protocol version"),
            (stats.crc_errors + stats.cobs_errors, "corrupted frames"),
        )
        if count
    ]
    return f"; received instead: {', '.join(parts)}" if parts else ""
