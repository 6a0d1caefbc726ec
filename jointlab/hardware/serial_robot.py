"""``SerialRobot``: the :class:`~jointlab.interface.Robot` interface over a serial link.

Talks the JointLab wire protocol (docs/protocol.md) to a device, or to the emulator, through
any pyserial port: a device path (``/dev/ttyUSB0``, a pty) or URL (``socket://host:port``).

Time semantics, as for every backend (``jointlab.interface``), made concrete for a device:

* ``apply(a)`` sends one CMD NJOINT at once; the device uses it from its next tick on, until
  the next accepted command. The device answers a command only when it refuses it: such a
  NACK is raised as :class:`~jointlab.errors.CommandRefused` (with the device's reason) by
  the next ``step()``. ``apply`` itself refuses a non-zero action at once when the device
  is known to be disarmed or unpowered.
* ``step()`` waits for the next DATA STATE frame: **the device paces the loop**, one
  control period is ``stream_period / rate_hz`` seconds of device time. If ``apply`` was not
  called since the previous ``step()``, the action in force is sent again first, which keeps
  the device's command watchdog fed exactly as long as the loop runs.
* ``read()`` returns the DATA STATE that the last ``step()`` returned on (float32 on the
  wire, float64 here), the newest one when ``step()`` returned; its ``torque`` is the torque
  the device applied during the tick it describes. States arriving later change nothing
  until the next ``step()``.
* ``time`` is the device time of that state, in seconds since the connection was made or
  ``reset()`` last returned.

A link is declared **dead** when no DATA STATE arrives for ``dead_periods`` stream periods,
when a request stays unanswered after its retry, or when the port fails; every later call
then raises :class:`~jointlab.errors.LinkError` until :meth:`SerialRobot.reconnect`.
The robot starts **disarmed** (the HELLO handshake disarms the device) and moves only
after ``arm()``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from jointlab.errors import (
    ActionError,
    CommandRefused,
    ConfigurationError,
    JointLabError,
    LinkError,
)
from jointlab.hardware.device_requests import RequestsMixin
from jointlab.hardware.host_link import HostLink
from jointlab.hardware.protocol import (
    PROTOCOL_VERSION,
    DisarmRequest,
    GeometryRequest,
    HelloReply,
    HelloRequest,
    LinkStats,
    Message,
    NackReason,
    NJointCommand,
    StateData,
    StreamRequest,
    WatchdogAction,
    WatchdogRequest,
)
from jointlab.hardware.reset_move import minimum_jerk_move, reset_target
from jointlab.hardware.session import (
    ConfigurationRefused,
    description_from_geometry,
    refused,
    resolve_description,
)
from jointlab.hardware.transport import SerialTransport
from jointlab.interface import ArrayState, NJointAction, Robot
from jointlab.robots import ArrayGeometry, RobotDescription, load_robot

__all__ = ["ConfigurationRefused", "SerialRobot", "description_from_geometry"]


class SerialRobot(RequestsMixin, Robot):
    """A device (or the emulator) behind a serial port (see the module docstring).

    Args:
        port: Device path or pyserial URL (``/dev/ttyACM0``, ``socket://127.0.0.1:7000``).
        description: The robot the device should run (description, built-in name or file).
            ``None``: a built-in robot with the device's digest, else one built from GET_GEOM.
        baudrate: Line rate in bit/s (ignored by ptys, sockets and USB CDC).
        request_timeout: Seconds to wait for the reply to a request (retried once).
        dead_periods: Stream periods without a DATA STATE after which the link is dead.
        connect_timeout: Seconds the handshake and the first state may take.
        allow_digest_mismatch: Accept a device whose description digest differs.
        watchdog_ms: Set the device watchdog (ms, 0 disables it); None keeps the device's.
        watchdog_action: What the watchdog does, with ``watchdog_ms``.
        stream_period: DATA STATE period in device ticks; None keeps the device's.
        on_close: Called once by ``close()`` after the port is closed (stops an emulator).

    Attributes:
        port: The port or URL given.
        device: The device's ACK HELLO (:class:`~jointlab.hardware.protocol.HelloReply`):
            version, dof, tick rate, watchdog, stream period and description digest.

    Raises:
        LinkError: the port cannot be opened, the handshake fails, or the device runs
            another protocol version, dof or (unless allowed) description.
    """

    realtime = True

    def __init__(
        self,
        port: str,
        description: RobotDescription | str | Path | None = None,
        *,
        baudrate: int = 1_000_000,
        request_timeout: float = 0.1,
        dead_periods: int = 50,
        connect_timeout: float = 2.0,
        allow_digest_mismatch: bool = False,
        watchdog_ms: int | None = None,
        watchdog_action: WatchdogAction = WatchdogAction.HOLD,
        stream_period: int | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        if not request_timeout > 0 or not connect_timeout > 0 or int(dead_periods) < 1:
            raise ConfigurationError(
                f"request_timeout and connect_timeout must be > 0 s and dead_periods >= 1, got "
                f"{request_timeout!r}, {connect_timeout!r}, {dead_periods!r}"
            )
        self._closed = False
        self._on_close = on_close
        self.port = port
        self._baudrate = int(baudrate)
        self._request_timeout = float(request_timeout)
        self._dead_periods = int(dead_periods)
        self._connect_timeout = float(connect_timeout)
        self._allow_digest_mismatch = bool(allow_digest_mismatch)
        self._watchdog = None if watchdog_ms is None else (int(watchdog_ms), watchdog_action)
        self._stream_period = stream_period
        self._given = None if description is None else load_robot(description)
        try:
            self._connect()
        except BaseException:
            self._closed = True
            self._shutdown()
            raise

    # ================================================================ session
    def _connect(self) -> None:
        self._dead: str | None = None
        self._link = HostLink(SerialTransport(self.port, baudrate=self._baudrate))
        try:
            self._link.transport.port.reset_input_buffer()
        except (OSError, AttributeError, NotImplementedError):
            pass
        self._link.start()
        self._link.transport.write(b"\x00")
        hello = self._hello()
        self._description = self._resolve_description(hello)
        dof = self._description.dof
        self._zero = NJointAction.Zero(dof)
        self._action = self._zero
        self._zero_command = NJointCommand.from_action(self._zero)
        #: The CMD step() sends again when nothing was sent in a period (feeds the watchdog).
        self._in_force: Message | None = None
        self._sent = False
        self._config_speed = np.array(self._description.config_speed)
        self._config_accel = np.array(self._description.acceleration_limit)
        self._dead_time = self._connect_timeout  # until the stream period is known
        period = hello.stream_period if self._stream_period is None else self._stream_period
        self._set_period(hello.rate_hz, period or 1, send=period != hello.stream_period)
        if self._watchdog is not None:
            self._checked(WatchdogRequest(*self._watchdog))
        self._await_first_state()

    def _hello(self) -> HelloReply:
        deadline = time.perf_counter() + self._connect_timeout
        reply = None
        while reply is None and time.perf_counter() < deadline:
            wait = min(max(self._request_timeout, 0.2), deadline - time.perf_counter())
            reply = self._link.request(HelloRequest(PROTOCOL_VERSION), max(wait, 1e-3))
        if not isinstance(reply, HelloReply):
            raise LinkError(
                f"no HELLO reply from {self.port!r} within {self._connect_timeout} s: is a "
                "JointLab device (or `python -m jointlab.hardware.emulator`) on that port?"
            )
        if reply.version != PROTOCOL_VERSION:
            raise LinkError(
                f"device on {self.port!r} speaks protocol version {reply.version}, this host "
                f"speaks version {PROTOCOL_VERSION}"
            )
        self.device = reply
        return reply

    def _resolve_description(self, hello: HelloReply) -> RobotDescription:
        def fetch_geometry() -> ArrayGeometry:
            return self._checked(GeometryRequest()).to_geometry()  # type: ignore[attr-defined]

        return resolve_description(
            self.port,
            hello,
            self._given,
            fetch_geometry,
            allow_digest_mismatch=self._allow_digest_mismatch,
        )

    def _set_period(self, rate_hz: int, period: int, *, send: bool) -> None:
        if send:
            self._checked(StreamRequest(period))
        self._rate_hz = rate_hz
        self._period_ticks = period
        self._control_dt = period / rate_hz
        self._dead_time = self._dead_periods * self._control_dt

    def _await_first_state(self) -> None:
        link = self._link
        deadline = time.perf_counter() + self._connect_timeout
        with link.cond:
            start = link.state_count
            while link.state_count == start:  # a state sent after the HELLO reply
                remaining = deadline - time.perf_counter()
                if remaining <= 0 or link.error is not None:
                    raise LinkError(f"no DATA STATE from {self.port!r} after the handshake")
                link.cond.wait(remaining)
            self._seen = link.state_count
            #: The DATA STATE the last step() returned on (what read() and time describe).
            self._current: StateData = link.latest
            self._current_at = link.last_state
        self._t0_us = self._current.time_us
        self._state: ArrayState | None = None

    def reconnect(self) -> None:
        """Reopen the port and redo the handshake (the robot is disarmed afterwards)."""
        if self._closed:
            raise LinkError(f"SerialRobot on {self.port!r} is closed")
        self._link.close()
        self._connect()

    def _shutdown(self) -> None:
        link = getattr(self, "_link", None)
        if link is not None:
            link.close()
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()

    def close(self) -> None:
        """Disarm the device (best effort), close the port, then run ``on_close``."""
        if self._closed:
            return
        self._closed = True
        if self._dead is None and self._link.error is None:
            try:
                self._link.request(DisarmRequest(), self._request_timeout)
            except JointLabError:
                pass
        self._shutdown()

    # ================================================================ link health
    def _fail(self, why: str) -> LinkError:
        self._dead = why
        return LinkError(f"link to {self.port!r} is dead: {why}; call reconnect()")

    def _check_alive(self) -> None:
        if self._closed:
            raise LinkError(f"SerialRobot on {self.port!r} is closed")
        if self._dead is not None:
            raise LinkError(f"link to {self.port!r} is dead: {self._dead}; call reconnect()")
        link = self._link
        if link.error is not None:
            raise self._fail(f"the port failed ({link.error})")
        silent = time.perf_counter() - link.last_state
        if silent > self._dead_time:
            raise self._fail(self._silence(silent))

    def _silence(self, seconds: float) -> str:
        return (
            f"no DATA STATE for {seconds * 1e3:.0f} ms ({self._dead_periods} stream periods "
            f"= {self._dead_time * 1e3:.0f} ms)"
        )

    # ================================================================ Robot API
    @property
    def description(self) -> RobotDescription:
        """The robot's description."""
        return self._description

    @property
    def control_dt(self) -> float:
        """Seconds of device time per ``step()``: ``stream_period / rate_hz``."""
        return self._control_dt

    @property
    def time(self) -> float:
        """Device seconds since the connection or the last ``reset()`` (changes in ``step()``)."""
        return (self._current.time_us - self._t0_us) * 1e-6

    @property
    def device_time(self) -> float:
        """Device clock of the state ``read()`` returns, seconds since the device started."""
        return self._current.time_us * 1e-6

    @property
    def last_action(self) -> NJointAction:
        """The action most recently passed to ``apply`` (Zero after arm, disarm, brakes)."""
        return self._action

    @property
    def config_speed(self) -> np.ndarray:
        """Configured speeds (REQ SPEED), shape ``(dof,)``, rad/s or m/s."""
        return self._config_speed.copy()

    @property
    def config_accel(self) -> np.ndarray:
        """Configured accelerations (REQ ACCEL), shape ``(dof,)``, rad/s² or m/s²."""
        return self._config_accel.copy()

    @property
    def link_stats(self) -> LinkStats:
        """Counters of the device-to-host direction (CRC errors, gaps, ...)."""
        return self._link.stats

    @property
    def state_received_at(self) -> float:
        """``time.perf_counter()`` when the state ``read()`` returns arrived."""
        return self._current_at

    @property
    def states_received(self) -> int:
        """DATA STATE frames received since the connection was made."""
        return self._link.state_count

    @property
    def armed(self) -> bool:
        """True when the device accepts motion commands (as its replies and states say)."""
        return self._link.device_armed

    @property
    def dead(self) -> bool:
        """True once the link was declared dead (until ``reconnect()``)."""
        return self._dead is not None

    def read(self) -> ArrayState:
        """The DATA STATE the last ``step()`` returned on, as an :class:`ArrayState`.

        Its ``time`` is rebased like :attr:`time`. States that arrive between two ``step()``
        calls do not change it, as in simulation.
        """
        state = self._state
        if state is None:
            current = self._current
            state = self._state = current.to_state((current.time_us - self._t0_us) * 1e-6)
        return state

    def apply(self, action: NJointAction) -> None:
        """Send ``action`` as CMD NJOINT; the device uses it from its next tick on.

        Raises:
            ActionError: not an ``NJointAction`` or its length is not ``dof``.
            CommandRefused: the device is disarmed or unpowered and the action is not zero.
            LinkError: the link is dead.
        """
        if not isinstance(action, NJointAction):
            raise ActionError(f"apply() takes an NJointAction, got {type(action).__name__}")
        if action.dof != self._description.dof:
            raise ActionError(
                f"NJointAction.torque has length {action.dof}, expected "
                f"{self._description.dof} (one per joint of robot {self._description.name!r})"
            )
        self._check_alive()
        link = self._link
        if not action.is_zero and not link.device_armed:
            latest = link.latest
            if latest is not None and not latest.motor_power:
                raise CommandRefused(
                    f"robot {self._description.name!r} on {self.port!r}: motor power is off; "
                    "call power(True) and arm() first",
                    reason=NackReason.UNPOWERED.slug,
                )
            raise CommandRefused(
                f"robot {self._description.name!r} on {self.port!r} is disarmed: only a zero "
                "action is accepted; call arm() first",
                reason=NackReason.DISARMED.slug,
            )
        self._send(NJointCommand.from_action(action))
        self._action = action

    def _send(self, command: Message) -> int:
        try:
            seq = self._link.send(command)
        except LinkError as exc:
            raise self._fail(str(exc)) from exc
        self._in_force, self._sent = command, True
        return seq

    def step(self) -> None:
        """Wait for the next DATA STATE (see the module docstring).

        Raises:
            CommandRefused: the device refused a command sent before this state.
            LinkError: no state for ``dead_periods`` stream periods, or the port failed.
        """
        self._check_alive()
        if self._in_force is not None and not self._sent and self._link.device_armed:
            self._send(self._in_force)
        self._wait_state()
        self._sent = False
        nack = self._link.take_refusal()
        if nack is not None:
            self._in_force = None  # do not repeat a refused command; the device holds the last
            raise refused(nack)

    def _wait_state(self) -> None:
        link = self._link
        with link.cond:
            while link.state_count == self._seen:
                if link.error is not None:
                    raise self._fail(f"the port failed ({link.error})")
                remaining = link.last_state + self._dead_time - time.perf_counter()
                if remaining <= 0:
                    raise self._fail(self._silence(self._dead_time - remaining))
                link.cond.wait(remaining)
            self._seen = link.state_count
            self._current = link.latest
            self._current_at = link.last_state
        self._state = None

    def send_command(self, message: Message, *, wait: bool = True) -> int:
        """Send any CMD (POS, MULTI_POS, HOME, SPEED, CURRENT, NJOINT ...); return its seq.

        The command becomes the one ``step()`` repeats to feed the watchdog (repeating a POS,
        HOME or SPEED continues the move it started). With ``wait``, wait until two more
        states arrived, by which time the device has taken the command or refused it, and
        raise the refusal.

        Raises:
            CommandRefused: the device refused it (``reason`` is the device's).
            LinkError: the link is dead.
        """
        self._check_alive()
        seq = self._send(message)
        if wait:
            self._wait_state()
            self._wait_state()
            self._sent = False
            nack = self._link.take_refusal(seq)
            if nack is not None:
                self._in_force = None
                raise refused(nack)
        return seq

    def reset(self, q: np.ndarray | None = None, qd: np.ndarray | None = None) -> ArrayState:
        """Move to ``q`` (default: home) with a minimum-jerk move, hold there, restart time.

        A device cannot be teleported: the move takes as long as the configured speeds and
        accelerations and the jerk limits require, and needs the robot armed (unless it is
        already there). The hold action stays in force afterwards.

        Raises:
            ConfigurationError: ``q`` is not ``dof`` finite values within the joint limits,
                or ``qd`` is not zero.
            CommandRefused: the robot must move but is disarmed.
        """
        target = reset_target(self._description, q, qd)
        self._check_alive()
        moved = minimum_jerk_move(self, target)
        if not moved:
            self._wait_state()  # restart time on a fresh state
        self._t0_us = self._current.time_us
        self._state = None
        if not moved and not self._link.device_armed:
            self._action = self._zero
        return self.read()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("dead" if self._dead else f"t={self.time:.3f}s")
        return f"SerialRobot({self.port!r}, {self._description.name!r}, {state})"
