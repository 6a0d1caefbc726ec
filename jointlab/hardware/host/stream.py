"""The command and state stream of a serial session: what ``apply`` and ``step`` do on a link.

:class:`CommandStream` sends commands (remembering the one *in force*, which ``step()``
sends again when nothing else was sent in a period, so the device's watchdog stays fed
exactly as long as the loop runs) and brings the next DATA STATE: in real time by waiting
for the device's stream, in lockstep by asking for the ticks with REQ STEP. After a step,
a NACK of a command sent before it is raised as
:class:`~jointlab.errors.CommandRefused`.
"""

from __future__ import annotations

from jointlab.errors import LinkError
from jointlab.hardware.host.health import LinkHealth
from jointlab.hardware.host.link import HostLink
from jointlab.hardware.host.requests import Requester, refused
from jointlab.hardware.protocol import HeartbeatRequest, Message, StateData, StepRequest

__all__ = ["CommandStream"]


class CommandStream:
    """Commands out, states in, on one link (see the module docstring).

    Args:
        link: The host link.
        health: Its liveness policy.
        requests: Its requester.
        lockstep: Ask for ticks (REQ STEP) instead of waiting for the stream.
        first: The first state of the session.
        rate_hz: The device's tick rate.
    """

    def __init__(
        self,
        link: HostLink,
        health: LinkHealth,
        requests: Requester,
        lockstep: bool,
        first: StateData,
        rate_hz: int,
    ) -> None:
        self.link = link
        self.health = health
        self.requests = requests
        self.lockstep = lockstep
        self._rate_hz = int(rate_hz)
        #: The device tick of the last state taken.
        self.tick = self._tick_of(first)
        #: The command ``step()`` sends again when nothing was sent in a period, or None.
        self.in_force: Message | None = None
        self._sent = False
        self.seen = link.state_count
        #: ``time.perf_counter()`` when the last state taken arrived.
        self.received_at = link.last_state

    def send(self, command: Message) -> int:
        """Send a CMD now; it becomes the command in force. Return its sequence number."""
        health = self.health
        health.check(self.link)
        try:
            seq = self.link.send(command)
        except LinkError as exc:
            raise health.fail(str(exc)) from exc
        self.in_force, self._sent = command, True
        return seq

    def replace(self, command: Message | None) -> None:
        """Change the command in force without sending it (the device changed it itself)."""
        self.in_force = command
        self._sent = False

    def mark(self) -> None:
        """Replies just arrived: the next state taken must be newer than them."""
        with self.link.cond:
            self.seen = self.link.state_count

    def after_reply(self) -> StateData:
        """Real time: the first DATA STATE sent after the last reply, without taking it.

        ``read()`` still shows the last step's state; this one shows what the device did
        with the request (the joints may have moved since that step: a loaded host, a pause).

        Raises:
            LinkError: the link is dead or fell silent.
        """
        link = self.link
        with link.cond:
            self.health.wait_state(link, self.seen)  # ``mark()`` set it at the reply
            return link.latest  # type: ignore[return-value]

    def step(self, ticks: int) -> StateData:
        """Send the command in force if nothing was sent, then the next state (``ticks`` on).

        Raises:
            CommandRefused: the device refused a command sent before this state.
            LinkError: the link is dead or fell silent.
        """
        link = self.link
        self.health.check(link)
        if self.in_force is not None and not self._sent:
            self.send(self.in_force)
        state = self.ticks(ticks) if self.lockstep else self.next_state()
        self._sent = False
        nack = link.take_refusal()
        if nack is not None:
            self.in_force = None  # do not repeat a refused command; the device holds the last
            raise refused(nack)
        return state

    def next_state(self) -> StateData:
        """Real time: wait for a DATA STATE newer than the last one taken."""
        link = self.link
        with link.cond:
            self.health.wait_state(link, self.seen)
            return self._taken(link.latest)  # type: ignore[arg-type]

    def ticks(self, ticks: int) -> StateData:
        """Lockstep: REQ STEP; the state after ``ticks`` more ticks (0: the current state)."""
        health = self.health
        timeout = max(health.request_timeout, 0.5 * health.dead_time)
        try:
            state = self.requests.request(StepRequest(self.tick + ticks), timeout)
        except LinkError as exc:
            if health.dead is not None and "no reply" in health.dead:
                raise health.fail(health.silence(2 * timeout)) from exc
            raise
        with self.link.cond:
            return self._taken(state)  # type: ignore[arg-type]

    def _taken(self, state: StateData) -> StateData:
        self.seen = self.link.state_count
        self.received_at = self.link.last_state
        self.tick = self._tick_of(state)
        return state

    def _tick_of(self, state: StateData) -> int:
        return round(state.time_us * self._rate_hz / 1e6)

    def settle(self, seq: int) -> None:
        """Wait until the device took or refused command ``seq``; raise its refusal.

        Lockstep: REQ STEP 0, answered after the command. Real time: REQ HEARTBEAT, whose
        ACK the device sends after any NACK of the command (it handles frames in the order
        of the byte stream), then two states sent after that ACK, the second one with the
        command in force. States alone would race: on a loaded host, states the device sent
        before it read the command can arrive after it was sent.
        """
        if self.lockstep:
            self.ticks(0)
        else:
            self.requests.request(HeartbeatRequest())
            link = self.link
            with link.cond:
                for _ in range(2):
                    self.health.wait_state(link, link.state_count)
        nack = self.link.take_refusal(seq)
        if nack is not None:
            self.in_force = None
            raise refused(nack)
