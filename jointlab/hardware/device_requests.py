"""Requests of the serial backend: every REQ of docs/protocol.md as a method.

:class:`RequestsMixin` is half of :class:`~jointlab.hardware.serial_robot.SerialRobot` (the
other half streams commands and states). A request waits for its ACK or NACK, is retried
once on timeout (requests are idempotent, section 10.4) and then declares the link dead.
A NACK becomes :class:`~jointlab.errors.CommandRefused` with the device's reason;
a refused setting (speed, acceleration) a :class:`~jointlab.hardware.session.ConfigurationRefused`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from jointlab.errors import (
    CommandRefused,
    ConfigurationError,
    JointLabError,
    LinkError,
    PackingError,
)
from jointlab.hardware.protocol import (
    AccelRequest,
    ArmRequest,
    BrakesRequest,
    DisarmRequest,
    GeometryReply,
    GeometryRequest,
    HeartbeatRequest,
    Message,
    Nack,
    PowerRequest,
    SpeedRequest,
    StopMode,
    StopRequest,
    WatchdogAction,
    WatchdogRequest,
)
from jointlab.hardware.session import SETTING_REASONS, ConfigurationRefused, refused
from jointlab.robots import ArrayGeometry

__all__ = ["RequestsMixin"]


class RequestsMixin:
    """REQ methods; the host class provides the link, health checks and action state."""

    port: str
    _link: Any
    _request_timeout: float
    _description: Any
    _action: Any
    _zero: Any
    _zero_command: Any
    _in_force: Any
    _seen: int
    _rate_hz: int
    _config_speed: np.ndarray
    _config_accel: np.ndarray

    def _check_alive(self) -> None:
        raise NotImplementedError

    def _fail(self, why: str) -> LinkError:
        raise NotImplementedError

    def _set_period(self, rate_hz: int, period: int, *, send: bool) -> None:
        raise NotImplementedError

    def request(self, message: Message, timeout: float | None = None) -> Message:
        """Send a request, retry once on timeout, and return its ACK.

        Raises:
            CommandRefused: the device answered NACK (``reason`` is its reason).
            LinkError: no reply after the retry (the link is then dead), or a port error.
        """
        self._check_alive()
        timeout = self._request_timeout if timeout is None else float(timeout)
        for _ in range(2):  # docs/protocol.md 10.4: requests are idempotent, retry once
            try:
                reply = self._link.request(message, timeout)
            except LinkError as exc:
                raise self._fail(str(exc)) from exc
            if isinstance(reply, Nack):
                raise refused(reply)
            if reply is not None:
                with self._link.cond:  # the next step() returns a state sent after the reply
                    self._seen = self._link.state_count
                return reply
        name = type(message).__name__
        raise self._fail(f"no reply to {name} within {timeout * 1e3:.0f} ms (sent twice)")

    def _checked(self, message: Message) -> Message:
        try:
            return self.request(message)
        except PackingError as exc:
            raise ConfigurationError(str(exc)) from exc

    def power(self, on: bool) -> None:
        """REQ POWER; off also disarms the device and engages the brakes."""
        self.request(PowerRequest(bool(on)))
        if not on:
            self._action, self._in_force = self._zero, self._zero_command

    def brakes(self, on: bool) -> None:
        """REQ BRAKES; engaging them replaces the command in force by zero torque."""
        self.request(BrakesRequest(bool(on)))
        if on:
            self._action, self._in_force = self._zero, self._zero_command

    def arm(self) -> None:
        """REQ ARM: accept motion commands; the action is zero until the next ``apply``."""
        self.request(ArmRequest())
        self._action, self._in_force = self._zero, self._zero_command

    def disarm(self) -> None:
        """REQ DISARM: refuse motion commands and apply zero torque."""
        self.request(DisarmRequest())
        self._action, self._in_force = self._zero, self._zero_command

    def stop(self, mode: StopMode = StopMode.IMMEDIATE) -> None:
        """REQ STOP: hold still at once, or decelerate at the configured accelerations."""
        self.request(StopRequest(StopMode(mode)))
        self._in_force = None

    def heartbeat(self) -> float:
        """REQ HEARTBEAT; return the round trip in seconds."""
        start = time.perf_counter()
        self.request(HeartbeatRequest())
        return time.perf_counter() - start

    def set_watchdog(self, timeout_ms: int, action: WatchdogAction = WatchdogAction.HOLD) -> None:
        """REQ WATCHDOG: timeout in ms (0 disables it) and what happens when it expires."""
        self._checked(WatchdogRequest(int(timeout_ms), WatchdogAction(action)))

    def set_stream_period(self, period_ticks: int) -> None:
        """REQ STREAM: one DATA STATE (and one ``step()``) every ``period_ticks`` ticks."""
        if int(period_ticks) < 1:
            raise ConfigurationError(f"stream period must be >= 1 tick, got {period_ticks!r}")
        self._set_period(self._rate_hz, int(period_ticks), send=True)

    def geometry(self) -> ArrayGeometry:
        """REQ GET_GEOM: the device's geometry, with its configured speeds."""
        reply = self.request(GeometryRequest())
        if not isinstance(reply, GeometryReply):
            raise LinkError(f"device on {self.port!r} answered GET_GEOM with {reply!r}")
        return reply.to_geometry()

    def configure_speed(self, joint: int | str, speed: float) -> None:
        """REQ SPEED: configured speed of ``joint`` (index or name), rad/s or m/s.

        Raises:
            ConfigurationRefused: the device refused it (unknown joint, not in (0, limit]).
        """
        index = self._configure(SpeedRequest, joint, speed)
        self._config_speed[index] = float(np.float32(speed))

    def configure_accel(self, joint: int | str, accel: float) -> None:
        """REQ ACCEL: configured acceleration of ``joint``, rad/s² or m/s².

        Raises:
            ConfigurationRefused: the device refused it (unknown joint, not in (0, limit]).
        """
        index = self._configure(AccelRequest, joint, accel)
        self._config_accel[index] = float(np.float32(accel))

    def _configure(self, kind: type[Message], joint: int | str, value: float) -> int:
        if isinstance(joint, str):
            try:
                joint = self._description.joint_index(joint)
            except JointLabError as exc:
                raise ConfigurationError(f"configure: {exc}") from exc
        try:
            message = kind(int(joint), float(value))  # type: ignore[call-arg]
        except (PackingError, TypeError, ValueError) as exc:
            raise ConfigurationError(f"configure: joint {joint!r}, value {value!r}: {exc}") from exc
        try:
            self.request(message)
        except CommandRefused as exc:
            if exc.reason in {r.slug for r in SETTING_REASONS}:
                raise ConfigurationRefused(str(exc), reason=exc.reason) from exc
            raise
        return int(joint)
