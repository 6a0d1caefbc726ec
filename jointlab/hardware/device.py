"""The firmware of the JointLab device emulator: protocol sections 8-10 without any I/O.

:class:`Device` is what a microcontroller runs, written against a
:class:`~jointlab.sim.SimRobot` instead of motors: :meth:`Device.handle` takes one decoded
frame and returns the replies to send (requests are answered at once, commands are checked
at once and queued), :meth:`Device.tick` runs one control tick and returns the DATA STATE
when one is due. The emulator (:mod:`jointlab.hardware.emulator`) adds the pseudo-terminal,
the wall-clock pacing and the fault injection; tests drive a :class:`Device` directly when
they need exact tick counts.

Within a tick (docs/protocol.md section 10.1) the device: makes the commands accepted since
the previous tick the command in force, checks the watchdog, computes the action of the
tick (an NJOINT as sent, or the setpoints of the Player moves), runs **one** physics step of
the simulator (``dt`` = one tick, the simulator's own PD law and effort clamp), and, every
``stream_period`` ticks, reports the state at the end of the tick.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from jointlab.errors import ActionError
from jointlab.hardware.player_commands import PlayerCommandsMixin, Refusal
from jointlab.hardware.protocol import (
    PROTOCOL_VERSION,
    AccelRequest,
    Ack,
    ArmRequest,
    BrakesRequest,
    CurrentCommand,
    DisarmRequest,
    Frame,
    GeometryReply,
    GeometryRequest,
    HeartbeatRequest,
    HelloReply,
    HelloRequest,
    HomeCommand,
    Message,
    MessageClass,
    MultiCurrentCommand,
    MultiPositionCommand,
    MultiSpeedCommand,
    Nack,
    NackReason,
    NJointCommand,
    PositionCommand,
    PowerRequest,
    SpeedCommand,
    SpeedRequest,
    StateData,
    StopMode,
    StopRequest,
    StreamRequest,
    Unparsed,
    WatchdogAction,
    WatchdogRequest,
)
from jointlab.hardware.setpoints import Setpoints
from jointlab.interface import NJointAction

__all__ = ["AppliedCommand", "Device", "Refusal"]

#: Accepted commands remembered for :attr:`Device.applied` (about 20 s at 1 kHz).
APPLIED_LOG = 20_000


@dataclass(frozen=True)
class AppliedCommand:
    """A command the device accepted, for tests and fault-injection reports."""

    #: Tick from which it was in force.
    tick: int
    #: Host sequence number of the frame.
    seq: int
    #: Header type byte (a ``CmdType``).
    msg_type: int
    #: The payload as received.
    payload: bytes
    #: ``time.perf_counter()`` when its bytes were read (0.0 when the caller did not say).
    received: float = 0.0


class Device(PlayerCommandsMixin):
    """Device firmware around a simulator (docs/protocol.md sections 9 and 10).

    Args:
        robot: A ``SimRobot`` with ``control_dt`` equal to one tick (``1 / rate_hz``).
        rate_hz: Tick rate in Hz.
        watchdog_ms: Initial watchdog timeout in ms (0 disables it).
        watchdog_action: Initial watchdog action.
        stream_period: Initial DATA STATE period in ticks (0: not streaming).
    """

    def __init__(
        self,
        robot: object,
        *,
        rate_hz: int = 1000,
        watchdog_ms: int = 100,
        watchdog_action: WatchdogAction = WatchdogAction.HOLD,
        stream_period: int = 1,
    ) -> None:
        self.robot = robot
        self.description = robot.description  # type: ignore[attr-defined]
        self.rate_hz = int(rate_hz)
        self._defaults = (int(watchdog_ms), WatchdogAction(watchdog_action), int(stream_period))
        description = self.description
        self.dof = description.dof
        self._digest = bytes.fromhex(description.digest)
        self._has_brakes = bool(description.has_brakes.any())
        motors = [joint.motor for joint in description.joints]
        self._torque_per_amp = np.array([m.torque_constant * m.gear_ratio for m in motors])
        self._max_current = np.array([m.max_current for m in motors])
        self.setpoints = Setpoints(description, 1.0 / self.rate_hz)
        self._zero = NJointAction.Zero(self.dof)
        self.applied: deque[AppliedCommand] = deque(maxlen=APPLIED_LOG)
        self.commands_refused = 0
        #: ``time.perf_counter()`` when the frames being handled were read (set by the I/O).
        self.received_at = 0.0
        self._handlers: dict[type, Callable[[Frame, Message], Message | None]] = {
            NJointCommand: self._njoint,
            PositionCommand: self._position,
            MultiPositionCommand: self._multi_position,
            HomeCommand: self._home,
            SpeedCommand: self._speed,
            MultiSpeedCommand: self._multi_speed,
            CurrentCommand: self._current,
            MultiCurrentCommand: self._multi_current,
            PowerRequest: self._power,
            BrakesRequest: self._brakes,
            GeometryRequest: self._geometry,
            SpeedRequest: self._configure,
            AccelRequest: self._configure,
            HelloRequest: self._hello,
            ArmRequest: self._arm,
            DisarmRequest: self._disarm,
            StopRequest: self._stop,
            HeartbeatRequest: lambda frame, msg: None,
            WatchdogRequest: self._watchdog,
            StreamRequest: self._stream,
        }
        self.reset()

    # ================================================================ lifetime
    def reset(self) -> None:
        """Power-up state (section 9): powered, disarmed, brakes released, defaults."""
        robot = self.robot
        robot.power(True)  # type: ignore[attr-defined]
        robot.arm()  # type: ignore[attr-defined]  # the plant stays armed; the device gates motion
        robot.brakes(False)  # type: ignore[attr-defined]
        robot.reset()  # type: ignore[attr-defined]
        self.tick_count = 0
        #: Ticks at which a newly accepted command took effect (1 per tick in a 1 kHz loop).
        self.command_ticks = 0
        self.powered, self.armed, self.brakes_requested = True, False, False
        self.watchdog_ms, self.watchdog_action, self.stream_period = self._defaults
        self.watchdog_engaged = False
        #: Tick at which the watchdog last engaged (-1: never since reset).
        self.watchdog_tick = -1
        self._last_command_tick = 0
        self._pending: list[Callable[[], None]] = []
        self._base = self._zero
        self.setpoints.clear()
        self.config_accel = np.array(self.description.acceleration_limit)
        self.applied.clear()

    @property
    def time_us(self) -> int:
        """Device time at the end of the last tick, in µs."""
        return self.tick_count * 1_000_000 // self.rate_hz

    @property
    def braked(self) -> bool:
        """True when motion commands are refused with BRAKED."""
        return self.brakes_requested and self._has_brakes

    # ================================================================ frames
    def handle(self, frame: Frame) -> Message | None:
        """Act on one received frame; return the reply to send (None for none)."""
        message = frame.message
        if isinstance(message, Unparsed):
            if message.msg_class not in (MessageClass.CMD, MessageClass.REQ):
                return None
            detail = PROTOCOL_VERSION if message.reason is NackReason.VERSION_MISMATCH else -1
            self.commands_refused += message.msg_class == MessageClass.CMD
            return Nack.reply_to(frame, reason=message.reason, detail=detail)
        handler = self._handlers.get(type(message))
        if handler is None:  # DATA, ACK and NACK frames are never answered
            return None
        try:
            reply = handler(frame, message)
        except Refusal as refusal:
            self.commands_refused += message.msg_class == MessageClass.CMD
            return Nack.reply_to(frame, reason=refusal.reason, detail=refusal.detail)
        if message.msg_class == MessageClass.REQ and reply is None:
            return Ack.reply_to(frame)
        return reply

    def tick(self) -> StateData | None:
        """Run one tick; return the DATA STATE if one is due this tick."""
        self.tick_count += 1
        if self._pending:
            self.command_ticks += 1
            for apply in self._pending:
                apply()
            self._pending.clear()
        if (
            self.armed
            and self.watchdog_ms
            and not self.watchdog_engaged
            and (self.tick_count - self._last_command_tick) * 1000 > self.watchdog_ms * self.rate_hz
        ):
            self._engage_watchdog()
        robot = self.robot
        if self.brakes_requested or not self.powered:
            action = self._zero  # the plant refuses motion while braked or unpowered
        elif self.setpoints.active:
            state = robot.read()  # type: ignore[attr-defined]
            action = self.setpoints.action(self._base, state.position, state.velocity)
        else:
            action = self._base
        robot.apply(action)  # type: ignore[attr-defined]
        robot.step()  # type: ignore[attr-defined]
        if self.stream_period and self.tick_count % self.stream_period == 0:
            return self.state()
        return None

    def state(self) -> StateData:
        """The DATA STATE describing the end of the last tick."""
        s = self.robot.read()  # type: ignore[attr-defined]
        return StateData.from_arrays(
            self.time_us,
            s.position,
            s.velocity,
            s.acceleration,
            s.current,
            s.torque,
            s.actuator_state,
            motor_power=self.powered,
            armed=self.armed,
            brakes=s.brakes,
            watchdog=self.watchdog_engaged,
        )

    # ================================================================ helpers
    def _motion_allowed(self) -> None:
        if not self.powered:
            raise Refusal(NackReason.UNPOWERED)
        if not self.armed:
            raise Refusal(NackReason.DISARMED)
        if self.braked:
            raise Refusal(NackReason.BRAKED)

    def _accept(self, frame: Frame, message: Message, apply: Callable[[], None]) -> None:
        """Queue an accepted command: in force from the next tick on."""
        tick = self.tick_count + 1
        payload, received = message.pack(), self.received_at

        def take_effect() -> None:
            self.watchdog_engaged = False
            apply()
            self.applied.append(
                AppliedCommand(tick, frame.seq, message.msg_type, payload, received)
            )

        self._pending.append(take_effect)
        self._last_command_tick = self.tick_count

    def _set_base(self, action: NJointAction) -> None:
        self._base = action
        self.setpoints.clear()

    def _hold_here(self) -> None:
        q = self.robot.read().position  # type: ignore[attr-defined]
        self._set_base(NJointAction.Position(q, velocity=np.zeros(self.dof)))

    def _engage_watchdog(self) -> None:
        self.watchdog_engaged = True
        self.watchdog_tick = self.tick_count
        if self.watchdog_action is WatchdogAction.BRAKE:
            self.brakes_requested = True
            self.robot.brakes(True)  # type: ignore[attr-defined]
            self._set_base(self._zero)
        else:
            self._hold_here()

    def _zero_drive(self) -> None:
        self._pending.clear()
        self._set_base(self._zero)

    # ================================================================ commands
    def _njoint(self, frame: Frame, message: NJointCommand) -> None:
        if message.dof != self.dof:
            raise Refusal(NackReason.BAD_LENGTH, self.dof)
        try:
            action = message.to_action()
        except ActionError as exc:
            bad = ~np.isfinite(message.torque) | np.isinf(message.values).any(axis=0)
            bad |= (message.position_kp < 0) | (message.position_kd < 0)
            raise Refusal(
                NackReason.INVALID_VALUE, int(np.argmax(bad)) if bad.any() else -1
            ) from exc
        if not action.is_zero:
            self._motion_allowed()
        self._accept(frame, message, lambda: self._set_base(action))

    # ================================================================ requests
    def _power(self, frame: Frame, message: PowerRequest) -> None:
        self.powered = message.on
        if not message.on:
            self.armed = False
            self.watchdog_engaged = False
            self._zero_drive()
        self.robot.power(message.on)  # type: ignore[attr-defined]
        if message.on:
            self.robot.arm()  # type: ignore[attr-defined]  # power-off disarmed the plant

    def _brakes(self, frame: Frame, message: BrakesRequest) -> None:
        if not message.on and not self.powered:
            raise Refusal(NackReason.UNPOWERED)
        self.brakes_requested = message.on
        if message.on:
            self._zero_drive()
        self.robot.brakes(message.on)  # type: ignore[attr-defined]

    def _geometry(self, frame: Frame, message: GeometryRequest) -> GeometryReply:
        return GeometryReply.from_geometry(self.robot.geometry(), frame.seq)  # type: ignore[attr-defined]

    def _configure(self, frame: Frame, message: SpeedRequest | AccelRequest) -> None:
        joint = message.joint
        self._joint(joint)
        speed = isinstance(message, SpeedRequest)
        value = self._finite(message.speed if speed else message.accel, joint)
        limit = self.description.velocity_limit if speed else self.description.acceleration_limit
        if not 0 < value <= limit[joint] * (1 + 1e-6):  # float32 rounding of the limit itself
            raise Refusal(NackReason.OUT_OF_RANGE, joint)
        value = min(value, float(limit[joint]))
        if speed:
            self.robot.configure_speed(joint, value)  # type: ignore[attr-defined]
        else:
            self.config_accel[joint] = value
            self.robot.configure_accel(joint, value)  # type: ignore[attr-defined]

    def _hello(self, frame: Frame, message: HelloRequest) -> HelloReply:
        self._disarm(frame, message)
        return HelloReply.reply_to(
            frame,
            version=PROTOCOL_VERSION,
            dof=self.dof,
            rate_hz=self.rate_hz,
            watchdog_ms=self.watchdog_ms,
            stream_period=self.stream_period,
            digest=self._digest,
        )

    def _arm(self, frame: Frame, message: ArmRequest) -> None:
        if not self.powered:
            raise Refusal(NackReason.UNPOWERED)
        if not self.armed:
            self.armed = True
            self._zero_drive()
        self._last_command_tick = self.tick_count

    def _disarm(self, frame: Frame, message: Message) -> None:
        self.armed = False
        self.watchdog_engaged = False
        self._zero_drive()

    def _stop(self, frame: Frame, message: StopRequest) -> None:
        if not self.armed or self.braked:
            return
        self._pending.clear()
        if message.mode is StopMode.IMMEDIATE:
            self._hold_here()
        else:
            self._run(np.ones(self.dof, bool), np.zeros(self.dof))

    def _watchdog(self, frame: Frame, message: WatchdogRequest) -> None:
        self.watchdog_ms = message.timeout_ms
        self.watchdog_action = message.action

    def _stream(self, frame: Frame, message: StreamRequest) -> None:
        self.stream_period = message.period_ticks
