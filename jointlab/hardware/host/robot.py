"""``SerialRobot``: the :class:`~jointlab.contract.Robot` interface over a serial link.

Talks the JointLab wire protocol (docs/protocol.md) to a device, or to the emulator, through
any pyserial port: a device path (``/dev/ttyUSB0``, a pty) or URL (``socket://host:port``).
The checks every backend shares (closed, action type and length, refusal reasons and their
order, settings) are the :class:`~jointlab.contract.Robot` base's; this class implements
its hooks, by composition: a :class:`~jointlab.hardware.host.link.HostLink` (frames, replies,
states) on a :class:`~jointlab.hardware.host.transport.SerialTransport`, a
:class:`~jointlab.hardware.host.requests.Requester` and a
:class:`~jointlab.hardware.host.health.LinkHealth`.

Time semantics, as for every backend (:mod:`jointlab.interface`), made concrete for a device:

* ``apply(a)`` sends one CMD NJOINT at once; the device uses it from its next tick on, until
  the next accepted command. The device answers a command only when it refuses it (the host
  refuses first what it knows the device would, with the same reason): such a NACK is
  raised as :class:`~jointlab.errors.CommandRefused` by the next ``step()``.
* ``step()`` advances one control period of ``stream_period`` device ticks. **Real time**
  (the default): it waits for the next DATA STATE, so the device paces the loop.
  **Lockstep** (``lockstep=True``, a virtual-time emulator): it sends REQ STEP and the
  device runs exactly those ticks, then answers with the state; nothing depends on the
  machine's load. Either way, if ``apply`` was not called since the previous ``step()``,
  the command in force is sent again first, which keeps the device's watchdog fed.
* ``read()`` returns the DATA STATE the last ``step()`` returned on (float32 on the wire,
  float64 here), with the flags the device acknowledged since (``arm()`` … ``brakes()``
  are in effect when they return, and ``read()`` shows it at once).
* ``time`` is the device time of that state, in seconds since the connection was made or
  ``reset()`` last returned.

A link is declared **dead** (:mod:`~jointlab.hardware.host.health`) when no DATA STATE
arrives for ``dead_ms`` of wall-clock time, when a request stays unanswered after its retry,
or when the port fails; every later call then raises :class:`~jointlab.errors.LinkError`
until :meth:`SerialRobot.reconnect`. The robot starts **disarmed** (the HELLO handshake
disarms the device) and moves only after ``arm()``.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from pathlib import Path

import numpy as np

from jointlab.contract import Readiness, Robot
from jointlab.errors import CommandRefused, ConfigurationError, JointLabError, LinkError
from jointlab.hardware.host.health import DEFAULT_DEAD_MS, DEFAULT_REQUEST_TIMEOUT
from jointlab.hardware.host.reset_move import minimum_jerk_move, reset_target
from jointlab.hardware.host.session import SessionResources, SessionSettings, open_session
from jointlab.hardware.host.stream import CommandStream
from jointlab.hardware.host.view import StateView
from jointlab.hardware.protocol import (
    AccelRequest,
    ArmRequest,
    BrakesRequest,
    DisarmRequest,
    GeometryReply,
    GeometryRequest,
    HeartbeatRequest,
    HelloReply,
    LinkStats,
    Message,
    NJointCommand,
    PowerRequest,
    SetStateRequest,
    SpeedRequest,
    StopMode,
    StopRequest,
    StreamRequest,
    WatchdogAction,
    WatchdogRequest,
)
from jointlab.holding import hold_action
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots import ArrayGeometry, RobotDescription, load_robot

__all__ = ["SerialRobot"]

_FLAG_REQUESTS = (ArmRequest, DisarmRequest, PowerRequest, BrakesRequest)


class SerialRobot(Robot):
    """A device (or the emulator) behind a serial port (see the module docstring).

    Args:
        port: Device path or pyserial URL (``/dev/ttyACM0``, ``socket://127.0.0.1:7000``).
        description: The robot the device should run (description, built-in name or file).
            ``None``: a built-in robot with the device's digest, else one built from GET_GEOM.
        baudrate: Line rate in bit/s (ignored by ptys, sockets and USB CDC).
        request_timeout: Seconds to wait for the reply to a request (retried once).
        dead_ms: Wall-clock milliseconds without a DATA STATE after which the link is dead.
        connect_timeout: Seconds the handshake and the first state may take.
        allow_digest_mismatch: Accept a device whose description digest differs.
        watchdog_ms: Set the device watchdog (ms, 0 disables it); None keeps the device's.
        watchdog_action: What the watchdog does, with ``watchdog_ms``.
        stream_period: Device ticks per ``step()``; None keeps the device's (1 in lockstep).
        lockstep: The device runs in lockstep (virtual time): ``step()`` asks it for the ticks.
        on_close: Called once after the port is closed, by ``close()`` or when the robot is
            dropped without it (stops an emulator).

    Attributes:
        port: The port or URL given.
        device: The device's ACK HELLO (:class:`~jointlab.hardware.protocol.HelloReply`):
            version, dof, tick rate, watchdog, stream period and description digest.

    Raises:
        LinkError: the port cannot be opened, the handshake fails, or the device runs
            another protocol version, dof, clock mode or (unless allowed) description.
    """

    def __init__(
        self,
        port: str,
        description: RobotDescription | str | Path | None = None,
        *,
        baudrate: int = 1_000_000,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        dead_ms: float = DEFAULT_DEAD_MS,
        connect_timeout: float = 5.0,
        allow_digest_mismatch: bool = False,
        watchdog_ms: int | None = None,
        watchdog_action: WatchdogAction = WatchdogAction.HOLD,
        stream_period: int | None = None,
        lockstep: bool = False,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        if not request_timeout > 0 or not connect_timeout > 0 or not dead_ms > 0:
            raise ConfigurationError(
                f"request_timeout, connect_timeout and dead_ms must be > 0, got "
                f"{request_timeout!r} s, {connect_timeout!r} s, {dead_ms!r} ms"
            )
        if stream_period is not None and int(stream_period) < 1:
            raise ConfigurationError(f"stream_period must be >= 1 tick, got {stream_period!r}")
        self.port = port
        self.lockstep = bool(lockstep)
        #: False in lockstep: ``step()`` is then not paced by the wall clock.
        self.realtime = not self.lockstep
        self._settings = SessionSettings(
            port=port,
            description=None if description is None else load_robot(description),
            baudrate=int(baudrate),
            request_timeout=float(request_timeout),
            dead_ms=float(dead_ms),
            connect_timeout=float(connect_timeout),
            allow_digest_mismatch=bool(allow_digest_mismatch),
            watchdog=None if watchdog_ms is None else (int(watchdog_ms), watchdog_action),
            stream_period=None if stream_period is None else int(stream_period),
            lockstep=self.lockstep,
        )
        self._resources = SessionResources(on_close)
        self._finalizer = weakref.finalize(self, self._resources.release)
        try:
            self._connect()
        except BaseException:
            self._finalizer()
            raise
        self._closed = False

    # ================================================================ session
    def _connect(self) -> None:
        session = open_session(self._settings, self._resources.keep)
        self._link, self._health, self._requests = session.link, session.health, session.requests
        self._stream = CommandStream(
            session.link,
            session.health,
            session.requests,
            self.lockstep,
            session.first,
            session.device.rate_hz,
        )
        self.device: HelloReply = session.device
        self._description = description = session.description
        self._zero = NJointAction.Zero(description.dof)
        self._zero_command = NJointCommand.from_action(self._zero)
        self._action = self._zero
        self._config_speed = np.array(description.config_speed)
        self._config_accel = np.array(description.acceleration_limit)
        self._period_ticks = session.period_ticks
        self._view = StateView(session.first, self.device.rate_hz, description.has_brakes)

    def reconnect(self) -> None:
        """Reopen the port and redo the handshake (the robot is disarmed afterwards)."""
        self._check_open("reconnect")
        self._link.close()
        self._connect()

    def close(self) -> None:
        """Disarm the device (best effort), close the port, then run ``on_close``."""
        if self._closed:
            return
        self._closed = True
        if self._health.dead is None and self._link.error is None:
            try:
                self._link.request(DisarmRequest(), self._health.request_timeout)
            except JointLabError:
                pass
        self._finalizer()

    # ================================================================ requests
    def _request(self, message: Message, timeout: float | None = None) -> Message:
        """A request; the flags it changes are in effect (and in ``read()``) on return."""
        reply = self._requests.request(message, timeout)
        self._stream.mark()  # the next step() returns a state sent after the reply
        if isinstance(message, _FLAG_REQUESTS):
            self._view.acknowledged(message)
        return reply

    def _checked(self, message: Message) -> Message:
        try:
            return self._request(message)
        except CommandRefused as exc:
            raise ConfigurationError(str(exc)) from exc

    def request(self, message: Message, timeout: float | None = None) -> Message:
        """Send any REQ, retry once on timeout, and return its reply.

        Raises:
            CommandRefused: the device answered NACK (``reason`` is its reason).
            LinkError: no reply after the retry (the link is then dead), or a port error.
        """
        self._check_open("request")
        return self._request(message, timeout)

    def _zero_in_force(self) -> None:
        self._action = self._zero
        self._stream.replace(self._zero_command)

    # ================================================================ Robot hooks
    def _readiness(self) -> Readiness:
        state = self._read()
        return Readiness(state.motor_power, state.armed, state.brakes)

    def _where(self) -> str:
        return f" on {self.port!r}"

    def _power(self, on: bool) -> None:
        self._request(PowerRequest(on))
        if not on:
            self._zero_in_force()

    def _brakes(self, on: bool) -> None:
        self._request(BrakesRequest(on))
        if on:
            self._zero_in_force()

    def _arm(self) -> None:
        """ARM (the device latches its present position), then the hold with gravity.

        See docs/protocol.md: the hold with gravity feed-forward becomes the command in force
        in the same call. It holds where the device latched: in real time the position of
        the first state sent after the ACK, not the last step's (a disarmed arm may have
        moved since, and holding that would pull it back); in lockstep no tick passed.
        """
        was_armed = self._read().armed
        self._request(ArmRequest())
        if not was_armed:
            if self.lockstep:
                position = self._read().position
            else:
                position = self._stream.after_reply().to_state(0.0).position
            self._apply(hold_action(self._description, position))

    def _disarm(self) -> None:
        self._request(DisarmRequest())
        self._zero_in_force()

    def _configure_speed(self, joint: int, speed: float) -> None:
        self._request(SpeedRequest(joint, speed))
        self._config_speed[joint] = float(np.float32(speed))

    def _configure_accel(self, joint: int, accel: float) -> None:
        self._request(AccelRequest(joint, accel))
        self._config_accel[joint] = float(np.float32(accel))

    def _geometry(self) -> ArrayGeometry:
        reply = self._request(GeometryRequest())
        if not isinstance(reply, GeometryReply):
            raise LinkError(f"device on {self.port!r} answered GET_GEOM with {reply!r}")
        return reply.to_geometry()

    def _read(self) -> ArrayState:
        return self._view.read()

    def _apply(self, action: NJointAction) -> None:
        self._stream.send(NJointCommand.from_action(action))
        self._action = action

    def _step(self) -> None:
        self._view.take(self._stream.step(self._period_ticks))

    def _reset(self, q: np.ndarray | None, qd: np.ndarray | None) -> ArrayState:
        """Lockstep: put the joints at ``q``/``qd`` (as a simulator does); real time: move.

        A device cannot be teleported: in real time ``reset`` is a minimum-jerk move to ``q``
        within the configured speeds and accelerations and the jerk limits, then a hold that
        stays in force (the robot must be armed unless it is already there; ``qd`` must be
        zero). A lockstep emulator is a simulation twin: it sets the state (REQ SET_STATE) and
        the action becomes zero, exactly as ``SimRobot.reset`` does.

        Raises:
            ConfigurationError: ``q`` is not ``dof`` finite values within the joint limits, or
                ``qd`` is not finite (not zero in real time).
            CommandRefused: the robot must move but is disarmed.
        """
        target, velocity = reset_target(self._description, q, qd, moving=self.lockstep)
        self._health.check(self._link)
        if self.lockstep:
            self._request(SetStateRequest.from_arrays(target, velocity))
            self._zero_in_force()
            self._view.take(self._stream.ticks(0))
        else:
            # The move starts where the joints are now, not at the last step's state (they
            # may have moved since: a pause, a loaded host, an arm that fell while disarmed).
            # Time restarts on this state too when there is nothing to move.
            self._view.take(self._stream.next_state())
            if not minimum_jerk_move(self, target) and not self._read().armed:
                self._action = self._zero
        self._view.rebase()
        return self._read()

    # ================================================================ device verbs
    def send_command(self, message: Message, *, wait: bool = True) -> int:
        """Send any CMD (POS, MULTI_POS, HOME, SPEED, CURRENT, NJOINT ...); return its seq.

        The command becomes the one ``step()`` repeats to feed the watchdog (repeating a POS,
        HOME or SPEED continues the move it started). With ``wait``, wait until the device
        has taken the command or refused it (real time: a REQ HEARTBEAT, answered after the
        command, then two states; lockstep: a REQ STEP of 0 ticks), and raise the refusal.

        Raises:
            CommandRefused: the device refused it (``reason`` is the device's).
            LinkError: the link is dead.
        """
        self._check_open("send_command")
        seq = self._stream.send(message)
        if wait:
            self._stream.settle(seq)
        return seq

    def stop(self, mode: StopMode = StopMode.IMMEDIATE) -> None:
        """REQ STOP: hold still at once, or decelerate at the configured accelerations."""
        self.request(StopRequest(StopMode(mode)))
        self._stream.replace(None)

    def heartbeat(self) -> float:
        """REQ HEARTBEAT; return the round trip in seconds."""
        start = time.perf_counter()
        self.request(HeartbeatRequest())
        return time.perf_counter() - start

    def set_watchdog(self, timeout_ms: int, action: WatchdogAction = WatchdogAction.HOLD) -> None:
        """REQ WATCHDOG: timeout in ms (0 disables it) and what happens when it expires."""
        self._check_open("set_watchdog")
        self._checked(WatchdogRequest(int(timeout_ms), WatchdogAction(action)))

    def set_stream_period(self, period_ticks: int) -> None:
        """Device ticks per ``step()`` (real time: REQ STREAM; lockstep: the STEP size)."""
        self._check_open("set_stream_period")
        if int(period_ticks) < 1:
            raise ConfigurationError(f"stream period must be >= 1 tick, got {period_ticks!r}")
        if not self.lockstep:
            self._checked(StreamRequest(int(period_ticks)))
        self._period_ticks = int(period_ticks)

    # ================================================================ properties
    @property
    def description(self) -> RobotDescription:
        """The robot's description."""
        return self._description

    @property
    def control_dt(self) -> float:
        """Seconds of device time per ``step()``: ``stream_period / rate_hz``."""
        return self._period_ticks / self._view.rate_hz

    @property
    def time(self) -> float:
        """Device seconds since the connection or the last ``reset()`` (changes in ``step()``)."""
        return self._read().time

    @property
    def device_time(self) -> float:
        """Device clock of the state ``read()`` returns, seconds since the device started."""
        return self._view.current.time_us * 1e-6

    @property
    def link_stats(self) -> LinkStats:
        """Counters of the device-to-host direction (CRC errors, gaps, rejected states ...)."""
        return self._link.stats

    @property
    def state_received_at(self) -> float:
        """``time.perf_counter()`` when the state ``read()`` returns arrived."""
        return self._stream.received_at

    @property
    def armed(self) -> bool:
        """True when the device accepts motion commands (as its replies and states say)."""
        return self._read().armed

    @property
    def dead(self) -> bool:
        """True once the link was declared dead (until ``reconnect()``)."""
        return self._health.dead is not None

    def __repr__(self) -> str:
        if self._closed:
            state = "closed"
        else:
            state = "dead" if self.dead else f"t={self.time:.3f}s"
        mode = "lockstep" if self.lockstep else "real time"
        return f"SerialRobot({self.port!r}, {self._description.name!r}, {mode}, {state})"
