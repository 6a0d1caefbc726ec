"""The firmware of the JointLab device emulator: protocol sections 8-10 without any I/O.

:class:`Device` is what a microcontroller runs, written against a
:class:`~jointlab.sim.SimRobot` (the *plant*) instead of motors: :meth:`Device.handle` takes
one decoded frame and returns the reply to send (requests are answered at once, commands
are checked at once and queued), :meth:`Device.tick` runs one control tick and returns the
DATA STATE when one is due. The emulator (:mod:`jointlab.hardware.emulator.emulator`) adds
the byte link, the clock (real-time or lockstep) and the fault injection; tests drive a
:class:`Device` directly when they need exact tick counts.

Frames are dispatched through the message table: the row of a message names its handler
(``"arm"`` is :meth:`Device.arm`, ``"player.position"`` is ``device.player.position``), so
every message the table sends to a device has one, and anything else (an unknown type, a
device-to-host message, a lockstep-only request on a real-time device) is answered with
NACK UNSUPPORTED. Only replies (ACK, NACK) are never answered, so two devices never answer
each other forever.

Within a tick (docs/protocol.md section 10.1) the device: makes the commands accepted since
the previous tick the commands in force (in arrival order), checks the watchdog, computes
the action of the tick (an NJOINT as sent, or the setpoints of the Player moves), runs
**one** physics step of the plant (``dt`` = one tick: the simulator's own PD law and effort
clamp), and, every ``stream_period`` ticks, reports the state at the end of the tick.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from jointlab.errors import ActionError
from jointlab.hardware.emulator.gate import MotionGate, Refusal, check_finite, check_joint
from jointlab.hardware.emulator.player import PlayerCommands
from jointlab.hardware.emulator.queue import CommandQueue
from jointlab.hardware.emulator.setpoints import Setpoints
from jointlab.hardware.emulator.settle import RestWatch, settle
from jointlab.hardware.protocol import (
    PROTOCOL_VERSION,
    TABLE,
    AccelRequest,
    Ack,
    ArmRequest,
    BrakesRequest,
    Frame,
    GeometryReply,
    GeometryRequest,
    HeartbeatRequest,
    HelloReply,
    HelloRequest,
    Message,
    MessageClass,
    Nack,
    NackReason,
    NJointCommand,
    PowerRequest,
    SetStateRequest,
    SpeedRequest,
    StateData,
    StepRequest,
    StopMode,
    StopRequest,
    StreamRequest,
    Unparsed,
    WatchdogAction,
    WatchdogRequest,
)
from jointlab.interface import NJointAction
from jointlab.robots.yaml_io import description_digest

if TYPE_CHECKING:
    from jointlab.sim import SimRobot

__all__ = ["Device", "Handler"]

#: A device handler: ``(frame, message) -> reply or None`` (None: ACK for a REQ, nothing
#: for an accepted CMD); raises :class:`~jointlab.hardware.emulator.gate.Refusal` to NACK.
Handler = Callable[[Frame, Any], "Message | None"]
_REPLIES = (MessageClass.ACK, MessageClass.NACK)
#: Slack of SET_STATE's limit check: the float32 rounding of a limit.
_LIMIT_SLACK = 1e-6
#: Most ticks one REQ STEP may ask for (a minute at 1 kHz).
MAX_STEP_TICKS = 60_000


class Device:
    """Device firmware around a simulated plant (docs/protocol.md sections 9 and 10).

    Args:
        robot: A ``SimRobot`` with ``control_dt`` equal to one tick (``1 / rate_hz``).
        rate_hz: Tick rate in Hz.
        watchdog_ms: Initial watchdog timeout in ms (0 disables it).
        watchdog_action: Initial watchdog action.
        stream_period: Initial DATA STATE period in ticks (0: not streaming).
        lockstep: Virtual time: the device ticks only when REQ STEP asks (it then never
            streams) and accepts REQ SET_STATE; otherwise both are NACKed UNSUPPORTED.

    Raises:
        TypeError: a host-to-device row of the message table names no handler here.
    """

    def __init__(
        self,
        robot: SimRobot,
        *,
        rate_hz: int = 1000,
        watchdog_ms: int = 100,
        watchdog_action: WatchdogAction = WatchdogAction.HOLD,
        stream_period: int = 1,
        lockstep: bool = False,
        settle: bool = False,
    ) -> None:
        self.robot = robot
        self.settles = bool(settle)
        self.description = robot.description
        self.dof = self.description.dof
        self.rate_hz = int(rate_hz)
        self.lockstep = bool(lockstep)
        period = 0 if self.lockstep else int(stream_period)
        self._defaults = (int(watchdog_ms), WatchdogAction(watchdog_action), period)
        self._digest = bytes.fromhex(description_digest(self.description))
        self.gate = MotionGate(bool(self.description.has_brakes.any()))
        self.queue = CommandQueue()
        self.setpoints = Setpoints(self.description, 1.0 / self.rate_hz)
        self.config_accel = np.array(self.description.acceleration_limit)
        self.player = PlayerCommands(
            robot, self.setpoints, self.gate, self.accept, self.config_accel
        )
        self._zero = NJointAction.Zero(self.dof)
        #: Commands refused with a NACK since start-up.
        self.commands_refused = 0
        #: ``time.perf_counter()`` when the frames being handled were read (set by the I/O).
        self.received_at = 0.0
        self._handlers: dict[type[Message], tuple[Handler, bool]] = {}
        for row in TABLE:
            if row.from_host:
                try:
                    handler = attrgetter(str(row.handler))(self)
                except AttributeError as exc:
                    raise TypeError(
                        f"Device has no handler {row.handler!r} for {row.msg_class.name} {row.name}"
                    ) from exc
                self._handlers[row.cls] = (handler, row.lockstep_only)
        self.reset()

    # ================================================================ lifetime
    def reset(self) -> None:
        """Power-up state (section 9): powered, disarmed, brakes released, defaults."""
        robot = self.robot
        robot.power(True)
        robot.arm()  # the plant stays armed; the device gates motion
        robot.brakes(False)
        robot.reset()
        self.tick_count = 0
        self.gate.power_up()
        self.watchdog_ms, self.watchdog_action, self.stream_period = self._defaults
        self.watchdog_engaged = False
        #: Tick at which the watchdog last engaged (-1: never since reset).
        self.watchdog_tick = -1
        self._base = self._zero
        self.setpoints.clear()
        self.config_accel[:] = self.description.acceleration_limit
        self.queue.clear()
        if self.settles:
            self._settle()

    def _settle(self) -> None:
        """The disarmed plant (zero torque) runs until it rests, as a real arm is found.

        Plant time passes; device time (``tick_count``) stays at zero.
        """
        robot, watch = self.robot, RestWatch()

        def tick() -> None:
            robot.apply(self._zero)
            robot.step()
            watch.observe(robot.read().position)

        settle(tick, lambda: watch.at_rest, 1.0 / self.rate_hz)

    @property
    def time_us(self) -> int:
        """Device time at the end of the last tick, in µs."""
        return self.tick_count * 1_000_000 // self.rate_hz

    @property
    def armed(self) -> bool:
        """True when motion commands are accepted (given power and brakes)."""
        return self.gate.armed

    @property
    def command_ticks(self) -> int:
        """Ticks at which a newly accepted command took effect."""
        return self.queue.command_ticks

    @property
    def applied(self) -> Any:
        """Accepted commands, oldest first (``AppliedCommand`` records)."""
        return self.queue.applied

    # ================================================================ frames
    def handle(self, frame: Frame) -> Message | None:
        """Act on one received frame; return the reply to send (None for none)."""
        message = frame.message
        if isinstance(message, Unparsed):
            if message.msg_class in _REPLIES:
                return None
            detail = PROTOCOL_VERSION if message.reason is NackReason.VERSION_MISMATCH else -1
            self.commands_refused += message.msg_class == MessageClass.CMD
            return Nack.reply_to(frame, reason=message.reason, detail=detail)
        entry = self._handlers.get(type(message))
        if entry is None or (entry[1] and not self.lockstep):
            if message.msg_class in _REPLIES:
                return None
            return Nack.reply_to(frame, reason=NackReason.UNSUPPORTED)
        try:
            reply = entry[0](frame, message)
        except Refusal as refusal:
            self.commands_refused += message.msg_class == MessageClass.CMD
            return Nack.reply_to(frame, reason=refusal.reason, detail=refusal.detail)
        if message.msg_class == MessageClass.REQ and reply is None:
            return Ack.reply_to(frame)
        return reply

    def tick(self) -> StateData | None:
        """Run one tick; return the DATA STATE if one is due this tick."""
        self.tick_count += 1
        self.queue.take_effect(self.tick_count)
        if (
            self.gate.armed
            and self.watchdog_ms
            and not self.watchdog_engaged
            and (self.tick_count - self.queue.last_command_tick) * 1000
            > self.watchdog_ms * self.rate_hz
        ):
            self._engage_watchdog()
        robot = self.robot
        if self.gate.brakes_requested or not self.gate.powered:
            action = self._zero  # the plant refuses motion while braked or unpowered
        elif self.setpoints.active:
            state = robot.read()
            action = self.setpoints.action(self._base, state.position, state.velocity)
        else:
            action = self._base
        robot.apply(action)
        robot.step()
        if self.stream_period and self.tick_count % self.stream_period == 0:
            return self.state()
        return None

    def state(self) -> StateData:
        """The DATA STATE describing the end of the last tick."""
        s = self.robot.read()
        return StateData.from_arrays(
            self.time_us,
            s.position,
            s.velocity,
            s.acceleration,
            s.current,
            s.torque,
            s.actuator_state,
            motor_power=self.gate.powered,
            armed=self.gate.armed,
            brakes=s.brakes,
            watchdog=self.watchdog_engaged,
        )

    # ================================================================ the command queue
    def accept(self, frame: Frame, message: Message, effect: Callable[[], None]) -> None:
        """Queue an accepted command: ``effect`` runs at the start of the next tick."""

        def take_effect() -> None:
            self.watchdog_engaged = False
            effect()

        self.queue.accept(
            frame.seq,
            int(message.msg_type),
            message.pack(),
            self.received_at,
            self.tick_count,
            take_effect,
        )

    def _set_base(self, action: NJointAction) -> None:
        self._base = action
        self.setpoints.clear()

    def _hold_here(self) -> None:
        q = self.robot.read().position
        self._set_base(NJointAction.Position(q, velocity=np.zeros(self.dof)))

    def _engage_watchdog(self) -> None:
        self.watchdog_engaged = True
        self.watchdog_tick = self.tick_count
        if self.watchdog_action is WatchdogAction.BRAKE:
            self.gate.brakes_requested = True
            if self.gate.has_brakes:  # else zero torque alone, until BRAKES 0
                self.robot.brakes(True)
            self._set_base(self._zero)
        else:
            self._hold_here()

    def _zero_drive(self) -> None:
        self.queue.drop_pending()
        self._set_base(self._zero)

    # ================================================================ commands
    def njoint(self, frame: Frame, message: NJointCommand) -> None:
        """CMD NJOINT: the action as sent, every tick."""
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
            self.gate.check()
        self.accept(frame, message, lambda: self._set_base(action))

    # ================================================================ requests
    def power(self, frame: Frame, message: PowerRequest) -> None:
        """REQ POWER: off also disarms, drops the command and engages the brakes."""
        self.gate.powered = message.on
        if not message.on:
            self.gate.armed = False
            self.watchdog_engaged = False
            self._zero_drive()
        self.robot.power(message.on)
        if message.on:
            self.robot.arm()  # power-off disarmed the plant

    def brakes(self, frame: Frame, message: BrakesRequest) -> None:
        """REQ BRAKES: engaging them replaces the command in force by zero torque.

        A device without brakes NACKs BRAKES 1 with UNSUPPORTED (the command in force stays:
        nothing would hold the arm); BRAKES 0 is accepted and changes nothing there.
        """
        if message.on and not self.gate.has_brakes:
            raise Refusal(NackReason.UNSUPPORTED)
        if not message.on and not self.gate.powered:
            raise Refusal(NackReason.UNPOWERED)
        self.gate.brakes_requested = message.on
        if message.on:
            self._zero_drive()
        self.robot.brakes(message.on)

    def geometry(self, frame: Frame, message: GeometryRequest) -> GeometryReply:
        """REQ GET_GEOM: the plant's geometry with its configured speeds."""
        return GeometryReply.from_geometry(self.robot.geometry(), frame.seq)

    def configure_speed(self, frame: Frame, message: SpeedRequest) -> None:
        """REQ SPEED: the configured speed of one joint."""
        joint, value = self._setting(message.joint, message.speed, self.description.velocity_limit)
        self.robot.configure_speed(joint, value)

    def configure_accel(self, frame: Frame, message: AccelRequest) -> None:
        """REQ ACCEL: the configured acceleration of one joint."""
        joint, value = self._setting(
            message.joint, message.accel, self.description.acceleration_limit
        )
        self.config_accel[joint] = value
        self.robot.configure_accel(joint, value)

    def _setting(self, joint: int, value: float, limit: np.ndarray) -> tuple[int, float]:
        check_joint(joint, self.dof)
        value = check_finite(value, joint)
        if not 0 < value <= limit[joint] * (1 + _LIMIT_SLACK):  # float32 rounding of a limit
            raise Refusal(NackReason.OUT_OF_LIMITS, joint)
        return joint, min(value, float(limit[joint]))

    def hello(self, frame: Frame, message: HelloRequest) -> HelloReply:
        """REQ HELLO: a new session (disarmed); answered whatever the host's version."""
        self.disarm(frame, message)
        return HelloReply.reply_to(
            frame,
            version=PROTOCOL_VERSION,
            dof=self.dof,
            rate_hz=self.rate_hz,
            watchdog_ms=self.watchdog_ms,
            stream_period=self.stream_period,
            digest=self._digest,
        )

    def arm(self, frame: Frame, message: ArmRequest) -> None:
        """REQ ARM: accept motion commands, holding the present position (refused unpowered).

        The hold is latched before torque is enabled: position = the joints' position at this
        tick, the default gains, zero target velocity; the next command replaces it.
        """
        if not self.gate.powered:
            raise Refusal(NackReason.UNPOWERED)
        if not self.gate.armed:
            self.queue.drop_pending()
            self._hold_here()
            self.gate.armed = True
        self.queue.last_command_tick = self.tick_count

    def disarm(self, frame: Frame, message: Message) -> None:
        """REQ DISARM: refuse motion commands, zero torque."""
        self.gate.armed = False
        self.watchdog_engaged = False
        self._zero_drive()

    def stop(self, frame: Frame, message: StopRequest) -> None:
        """REQ STOP: hold where the joints are, or decelerate to rest and hold."""
        if not self.gate.armed or self.gate.braked:
            return
        self.queue.drop_pending()
        if message.mode is StopMode.IMMEDIATE:
            self._hold_here()
        else:
            self.player.run_all(np.zeros(self.dof))

    def heartbeat(self, frame: Frame, message: HeartbeatRequest) -> None:
        """REQ HEARTBEAT: nothing but the ACK (it does not feed the watchdog)."""

    def watchdog(self, frame: Frame, message: WatchdogRequest) -> None:
        """REQ WATCHDOG: timeout and action."""
        self.watchdog_ms = message.timeout_ms
        self.watchdog_action = message.action

    def stream(self, frame: Frame, message: StreamRequest) -> None:
        """REQ STREAM: the DATA STATE period (a lockstep device never streams)."""
        if self.lockstep:
            raise Refusal(NackReason.UNSUPPORTED)
        self.stream_period = message.period_ticks

    # ================================================================ lockstep
    def step(self, frame: Frame, message: StepRequest) -> StateData:
        """REQ STEP (lockstep): run the ticks up to ``until``; the state after the last."""
        ticks = message.until - self.tick_count
        if ticks > MAX_STEP_TICKS:
            raise Refusal(NackReason.OUT_OF_LIMITS, MAX_STEP_TICKS)
        for _ in range(ticks):
            self.tick()
        return self.state()

    def set_state(self, frame: Frame, message: SetStateRequest) -> None:
        """REQ SET_STATE (lockstep): teleport the plant, as ``SimRobot.reset(q, qd)`` does."""
        if message.dof != self.dof:
            raise Refusal(NackReason.BAD_LENGTH, self.dof)
        bad = ~np.isfinite(message.values).all(axis=0)
        if bad.any():
            raise Refusal(NackReason.INVALID_VALUE, int(np.flatnonzero(bad)[0]))
        q, qd = message.q.astype(np.float64), message.qd.astype(np.float64)
        d = self.description
        span = _LIMIT_SLACK * np.maximum(1.0, np.abs(d.lower) + np.abs(d.upper))
        outside = (q < d.lower - span) | (q > d.upper + span)
        if outside.any():
            raise Refusal(NackReason.OUT_OF_LIMITS, int(np.flatnonzero(outside)[0]))
        self.robot.reset(np.clip(q, d.lower, d.upper), qd)
        self._zero_drive()
        self.watchdog_engaged = False
        self.queue.last_command_tick = self.tick_count
