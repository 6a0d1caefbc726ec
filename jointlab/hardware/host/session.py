"""Opening a serial session: port, handshake, description, clock mode, first state.

:func:`open_session` does everything a :class:`~jointlab.hardware.host.robot.SerialRobot`
needs before its first ``step()``, in this order:

1. open the port (:class:`~jointlab.hardware.host.transport.SerialTransport`), drop stale
   input, start the reader on a :class:`~jointlab.hardware.host.link.HostLink`, send 0x00;
2. REQ HELLO until answered; the device's version must be this host's (else a
   :class:`~jointlab.errors.LinkError` naming both versions);
3. :func:`resolve_description` checks the ACK HELLO against the description the user gave
   (dof, digest) or finds one (a built-in robot with the device's digest, else one built
   from the device's GET_GEOM reply by :func:`description_from_geometry`);
4. the clock: a lockstep device answers REQ STEP 0 with its state; a real-time one streams
   (REQ STREAM sets the period). A mismatch between what the host expects and what the
   device does is a ``LinkError`` that says which URL setting to use;
5. REQ WATCHDOG if asked, then the first DATA STATE.

"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from jointlab.errors import CommandRefused, ConfigurationError, LinkError
from jointlab.hardware.host.health import LinkHealth, foreign_frames
from jointlab.hardware.host.link import HostLink
from jointlab.hardware.host.requests import Requester
from jointlab.hardware.host.transport import SerialTransport
from jointlab.hardware.protocol import (
    PROTOCOL_VERSION,
    GeometryRequest,
    HelloReply,
    HelloRequest,
    StateData,
    StepRequest,
    StreamRequest,
    WatchdogAction,
    WatchdogRequest,
)
from jointlab.robots import ArrayGeometry, RobotDescription, load_robot
from jointlab.robots.schema import description_from_dict
from jointlab.robots.yaml_io import builtin_robots, description_digest

__all__ = [
    "Session",
    "SessionResources",
    "SessionSettings",
    "description_from_geometry",
    "open_session",
    "resolve_description",
]


class SessionResources:
    """What a session must release, even when its robot is dropped without ``close()``.

    ``release`` is the robot's ``weakref.finalize`` callback: it closes the link, then runs
    ``on_close`` (which stops an emulator), once.
    """

    def __init__(self, on_close: Callable[[], None] | None) -> None:
        self.link: HostLink | None = None
        self.on_close = on_close

    def keep(self, link: HostLink) -> None:
        """The link to close (the latest one, after a reconnect)."""
        self.link = link

    def release(self) -> None:
        """Close the link, then run ``on_close``; safe to call twice."""
        link, self.link = self.link, None
        if link is not None:
            link.close()
        on_close, self.on_close = self.on_close, None
        if on_close is not None:
            on_close()


@dataclass(frozen=True)
class SessionSettings:
    """How to open a session (the ``SerialRobot`` keywords that shape it)."""

    port: str
    description: RobotDescription | None
    baudrate: int
    request_timeout: float
    dead_ms: float
    connect_timeout: float
    allow_digest_mismatch: bool
    watchdog: tuple[int, WatchdogAction] | None
    stream_period: int | None
    lockstep: bool


@dataclass
class Session:
    """An open session: the link and what the handshake established."""

    link: HostLink
    health: LinkHealth
    requests: Requester
    #: The device's ACK HELLO.
    device: HelloReply
    description: RobotDescription
    #: Device ticks per ``step()``.
    period_ticks: int
    #: The first DATA STATE after the handshake.
    first: StateData


def open_session(settings: SessionSettings, keep: Callable[[HostLink], None]) -> Session:
    """Open the port and run the handshake (see the module docstring).

    Args:
        settings: What to open, and how.
        keep: Called with the link as soon as it exists, so the caller can close it if a
            later step fails.

    Raises:
        LinkError: the port cannot be opened, the device does not answer, runs another
            protocol version, dof, clock mode or (unless allowed) description.
    """
    s = settings
    health = LinkHealth(s.port, s.dead_ms, s.request_timeout)
    link = HostLink(SerialTransport(s.port, baudrate=s.baudrate))
    keep(link)
    try:
        link.transport.port.reset_input_buffer()
    except (OSError, AttributeError, NotImplementedError):
        pass
    link.start()
    link.transport.write(b"\x00")
    requests = Requester(link, health)
    device = _hello(link, s.port, s.request_timeout, s.connect_timeout)
    description = resolve_description(
        s.port,
        device,
        s.description,
        lambda: requests.request(GeometryRequest()).to_geometry(),  # type: ignore[attr-defined]
        allow_digest_mismatch=s.allow_digest_mismatch,
    )
    link.dof = description.dof
    seen = link.state_count
    first: StateData | None = None
    if s.lockstep:
        period = s.stream_period or 1
        own_clock = LinkError(
            f"the device on {s.port!r} runs on its own clock (real time): "
            "connect without lockstep (?lockstep=0)"
        )
        if device.stream_period:  # it streams: a lockstep device never does
            raise own_clock
        link.lockstep, link.rate_hz = True, device.rate_hz
        try:
            first = requests.request(StepRequest(0))  # type: ignore[assignment]  # no tick
        except CommandRefused as exc:
            raise own_clock from exc
    else:
        period = s.stream_period or device.stream_period or 1
        if period != device.stream_period:
            try:
                requests.request(StreamRequest(period))
            except CommandRefused as exc:
                raise LinkError(
                    f"the device on {s.port!r} runs in lockstep (virtual time): "
                    "connect with ?lockstep=1"
                ) from exc
    if s.watchdog is not None:
        try:
            requests.request(WatchdogRequest(*s.watchdog))
        except CommandRefused as exc:
            raise ConfigurationError(str(exc)) from exc
    if first is None:
        first = _first_state(link, seen, s.port, s.connect_timeout)
    return Session(link, health, requests, device, description, period, first)


def _hello(link: HostLink, port: str, request_timeout: float, connect_timeout: float) -> HelloReply:
    deadline = time.perf_counter() + connect_timeout
    reply = None
    while reply is None and time.perf_counter() < deadline:
        wait = min(max(request_timeout, 0.2), deadline - time.perf_counter())
        reply = link.request(HelloRequest(PROTOCOL_VERSION), max(wait, 1e-3))
    if not isinstance(reply, HelloReply):
        raise LinkError(
            f"no HELLO reply from {port!r} within {connect_timeout} s: is a JointLab device "
            "(or `python -m jointlab.hardware.emulator`) on that port?"
        )
    if reply.version != PROTOCOL_VERSION:
        raise LinkError(
            f"device on {port!r} speaks protocol version {reply.version}, this host speaks "
            f"version {PROTOCOL_VERSION}: update the "
            f"{'device firmware' if reply.version < PROTOCOL_VERSION else 'host (jointlab)'}"
        )
    return reply


def _first_state(link: HostLink, seen: int, port: str, timeout: float) -> StateData:
    deadline = time.perf_counter() + timeout
    with link.cond:
        while link.state_count == seen:  # a state sent after the handshake
            remaining = deadline - time.perf_counter()
            if remaining <= 0 or link.error is not None:
                why = link.rejection or link.error or "none arrived"
                raise LinkError(
                    f"no DATA STATE from {port!r} after the handshake ({why}){foreign_frames(link)}"
                )
            link.cond.wait(remaining)
        return link.latest  # type: ignore[return-value]


def description_from_geometry(geometry: ArrayGeometry, name: str = "device") -> RobotDescription:
    """A chain description built from a GET_GEOM reply (geometry only, default limits).

    Used when a device runs a robot whose description the host does not have; joints are
    named ``joint0`` ... and form one chain.
    """
    actuators = [
        {
            "name": f"joint{i}",
            "type": "linear" if g.type == 1 else "rotary",
            "axis": list(g.axis),
            "length": max(g.length, 0.0),
            "orientation": list(g.orientation),
            "min": g.min,
            "max": max(g.max, g.min),
            "centre": min(max(g.centre, g.min), g.max),
            "home": min(max(g.home, g.min), g.max),
            "config_speed": g.config_speed,
            "has_brakes": g.has_brakes,
        }
        for i, g in enumerate(geometry.actuators)
    ]
    base = {"position": list(geometry.base_pos), "orientation": list(geometry.base_orientation)}
    return description_from_dict({"name": name, "base": base, "actuators": actuators})


def resolve_description(
    port: str,
    hello: HelloReply,
    given: RobotDescription | None,
    fetch_geometry: Callable[[], ArrayGeometry],
    *,
    allow_digest_mismatch: bool = False,
) -> RobotDescription:
    """The description of the robot behind ``port``, checked against its ACK HELLO.

    Raises:
        LinkError: ``given`` has another dof, or another digest (unless allowed).
    """
    if given is None:
        for name in builtin_robots():
            candidate = load_robot(name)
            if description_digest(candidate) == hello.digest_hex:
                return candidate
        return description_from_geometry(fetch_geometry())
    if hello.dof != given.dof:
        raise LinkError(
            f"device on {port!r} drives {hello.dof} joints, description "
            f"{given.name!r} has {given.dof}"
        )
    if hello.digest_hex != description_digest(given) and not allow_digest_mismatch:
        raise LinkError(
            f"device on {port!r} runs a different robot description (digest "
            f"{hello.digest_hex[:12]}…) than {given.name!r} "
            f"(digest {description_digest(given)[:12]}…); "
            "pass allow_digest_mismatch=True to connect anyway"
        )
    return given
