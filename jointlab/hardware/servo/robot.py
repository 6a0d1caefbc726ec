"""``ServoBusRobot``: the :class:`~jointlab.interface.Robot` interface on a servo bus.

The robot file's ``bus`` section says which servo drives which joint; the vendor's SDK
(:mod:`.driver`) talks to them. Connecting checks every servo **before any motion**: it must
answer (else ``LinkError`` naming its id, or the baud rate when none answers), report the
model of the robot file and run the operating mode of its ``mode`` (else
``ConfigurationError`` naming the id and the fix; ``configure=True`` writes the mode and a
zero return delay). Connecting turns every servo's torque off: a servo robot starts disarmed.

Time semantics (the ``Robot`` contract on a bus): the host runs **bus cycles** at
``bus.rate`` Hz, each one exchange of goals (one Sync or Bulk Write) and one of state (one Sync
Read of every servo); ``step()`` runs ``control_dt · rate`` cycles. ``apply(a)`` checks and
converts ``a`` at once (refusals are raised by ``apply``) and it is written at the start of the
next cycle and of every cycle after it until the next ``apply``; the law of ``current``-mode
joints is recomputed each cycle from the last state read (the law runs on the host at the bus
rate). ``read()`` is the state of the last cycle's Sync Read; ``time`` is cycles times the bus
period since connecting or ``reset()``.

Differences from ``SimRobot``, by design: ``reset(q)`` is a move (a servo arm cannot
teleport); ``brakes(True)`` is refused (``unsupported_by_device``: servos have none); the zero
action holds the present position on position servos (they have no zero-torque command;
``disarm()`` makes them limp); ``arm()`` needs a calibration. Temperature, voltage and the
hardware-error bits are in ``state.extras``; a servo's hardware error shows as STALLED.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ActionError, CommandRefused, ConfigurationError, JointLabError
from jointlab.hardware.reset_move import minimum_jerk_move, reset_target
from jointlab.hardware.servo.bus_state import READ_SPAN, StateDecoder, check_servos
from jointlab.hardware.servo.calibration import Calibration, calibration_path
from jointlab.hardware.servo.commands import ServoCommands
from jointlab.hardware.servo.driver import ServoDriver
from jointlab.hardware.servo.models import bus_models
from jointlab.interface import ArrayState, NJointAction, Robot
from jointlab.robots import ArrayGeometry, RobotDescription, load_robot

__all__ = ["READ_SPAN", "ServoBusRobot", "make_driver"]


def make_driver(protocol: str, port: str, baud: int, names: dict[int, str], retries: int = 2,
                extra_timeout_ms: float = 0.0) -> ServoDriver:  # fmt: skip
    """The SDK driver of ``protocol`` (``"dynamixel"`` or ``"feetech"``)."""
    if protocol == "dynamixel":
        from jointlab.hardware.dynamixel.driver import DynamixelDriver

        return DynamixelDriver(port, baud, names, retries, extra_timeout_ms)
    from jointlab.hardware.feetech.driver import FeetechDriver

    return FeetechDriver(port, baud, names, retries, extra_timeout_ms)


class ServoBusRobot(Robot):
    """A servo arm on a Dynamixel or Feetech bus (see the module docstring).

    Args:
        port: Device path (``/dev/ttyUSB0``) or a pty.
        description: Description, built-in name or robot file with a ``bus`` section.
        baud: Line rate (default: ``bus.baud``).
        calibration: A :class:`Calibration`, a calibration file, None for the file at
            :func:`calibration_path` (if any), or False for none. Without one the robot
            refuses to arm.
        control_dt: Seconds per ``step()``, a whole number of bus periods (default: one).
        retries: Extra attempts per bus exchange before a ``LinkError``.
        timeout_ms: Added to the SDK's status-packet timeout (wire time + 34 ms).
        watchdog_ms: Dynamixel Bus Watchdog while armed, ms (0: off); a servo that hears
            nothing for that long stops.
        configure: Write the robot file's operating modes and a zero return delay (torque
            off) instead of refusing servos configured otherwise.
        advance: Lockstep emulation: called as ``advance(seconds, bytes_written)`` instead of
            waiting for the end of each bus cycle (an emulated bus's clock).
        on_close: Called once by ``close()`` after the port is closed.
    """

    realtime = True

    def __init__(
        self,
        port: str,
        description: RobotDescription | str | Path,
        *,
        baud: int | None = None,
        calibration: Calibration | str | Path | bool | None = None,
        control_dt: float | None = None,
        retries: int = 2,
        timeout_ms: float = 0.0,
        watchdog_ms: int = 100,
        configure: bool = False,
        advance: Callable[[float, int], Any] | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self._closed = True
        self._on_close = on_close
        self._description = load_robot(description)
        self._bus, self._models = bus_models(self._description)
        self.port = port
        self._ids = list(self._bus.ids)
        names = {s.id: s.joint for s in self._bus.servos}
        self._driver = make_driver(
            self._bus.protocol.value, port, baud or self._bus.baud, names, retries, timeout_ms
        )  # fmt: skip
        self._advance = advance
        self._watchdog_ms = int(watchdog_ms)
        self._bus_dt = 1.0 / self._bus.rate
        self._set_control_dt(self._bus_dt if control_dt is None else float(control_dt))
        self._calibration = self._load_calibration(calibration)
        self._current = np.array([s.mode.value == "current" for s in self._bus.servos])
        transmissions = (self._description.transmissions if self._calibration is None
                         else self._calibration.transmissions(self._description))  # fmt: skip
        self._transmissions = transmissions
        ticks = None if self._calibration is None else self._calibration.tick_range()
        self._commands = ServoCommands(self._description, self._models, self._current,
                                       transmissions, ticks)  # fmt: skip
        table = self._models[0].table
        self._span = table.span(*READ_SPAN[self._bus.protocol.value])
        self._decoder = StateDecoder(self._models, self._span[0])
        self._config_speed = np.array(self._description.config_speed)
        self._config_accel = np.array(self._description.acceleration_limit)
        self._zero = NJointAction.Zero(self._description.dof)
        self._powered, self._armed = True, False
        try:
            self._driver.open()
            self._closed = False
            self._check_servos(configure)
            self._torque(False)
            self._action, self._goals = self._zero, self._commands.plan(self._zero)
            self._gains = (None, None)
            self._cycles = self._t0 = 0
            self._next = time.perf_counter()
            self._state = self._read_state(None)
        except BaseException:
            self._closed = False
            self._shutdown()
            raise

    # ================================================================ set-up
    def _set_control_dt(self, control_dt: float) -> None:
        ratio = control_dt / self._bus_dt
        if not np.isfinite(ratio) or round(ratio) < 1 or abs(ratio - round(ratio)) > 1e-6:
            raise ConfigurationError(
                f"control_dt must be a whole number of bus periods of {self._bus_dt} s "
                f"(bus.rate {self._bus.rate} Hz), got {control_dt!r} s"
            )
        self._cycles_per_step = round(ratio)
        self._control_dt = self._cycles_per_step * self._bus_dt

    def _load_calibration(self, given: Any) -> Calibration | None:
        if given is False:
            return None
        if given is None:
            path = calibration_path(self._description)
            if not path.is_file():
                return None
            given = path
        calibration = given if isinstance(given, Calibration) else Calibration.load(given)
        calibration.check(self._description)
        return calibration

    def _check_servos(self, configure: bool) -> None:
        check_servos(self._driver, self._bus, self._models, self.port, configure)

    # ================================================================ bus cycles
    def _torque(self, on: bool) -> None:
        table = self._models[0].table
        for servo_id, model in zip(self._ids, self._models, strict=True):
            if "bus_watchdog" in model.table and not on:
                self._driver.write(servo_id, model.table["bus_watchdog"], 0)
            error = self._driver.write(servo_id, table["torque_enable"], int(on))
            if error & 0x7F and self._bus.protocol.value == "dynamixel":
                raise CommandRefused(
                    f"servo id {servo_id} refused Torque Enable = {int(on)} (status error "
                    f"{error:#04x})", reason="refused",
                )  # fmt: skip
        if on and self._watchdog_ms > 0:
            for servo_id, model in zip(self._ids, self._models, strict=True):
                if "bus_watchdog" in model.table:
                    self._driver.write(servo_id, model.table["bus_watchdog"],
                                       max(1, round(self._watchdog_ms / 20)))  # fmt: skip

    def _write_goals(self) -> None:
        self._gains = self._commands.write(self._driver, self._goals, self._state, self._gains)

    def _wait(self) -> None:
        self._cycles += 1
        if self._advance is not None:
            self._advance(self._bus_dt, self._driver.bytes_written)
            return
        self._next += self._bus_dt
        delay = self._next - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        elif delay < -self._bus_dt:  # late by more than a period: slip, do not burst
            self._next = time.perf_counter()

    def _read_state(self, previous: ArrayState | None) -> ArrayState:
        address, length = self._span
        block = self._driver.sync_read(address, length, self._ids)
        errors = np.array([self._driver.error_bits.get(i, 0) for i in self._ids])
        position, velocity, torque, current, flags, extras = self._decoder.decode(
            block, errors, self._transmissions
        )
        accel = (np.zeros(self.dof) if previous is None
                 else (velocity - previous.velocity) / self._bus_dt)  # fmt: skip
        return ArrayState((self._cycles - self._t0) * self._bus_dt, position, velocity, accel,
                          torque, current, flags, self._powered, self._armed,
                          extras=extras)  # fmt: skip

    def _cycle(self) -> None:
        self._write_goals()
        self._wait()
        self._state = self._read_state(self._state)

    # ================================================================ Robot API
    @property
    def description(self) -> RobotDescription:
        """The robot's description."""
        return self._description

    @property
    def control_dt(self) -> float:
        """Seconds per ``step()``: a whole number of bus periods."""
        return self._control_dt

    @property
    def torque_capable(self) -> np.ndarray:
        """Joints whose servo runs in ``current`` mode (the others take no torque), ``(dof,)``."""
        return self._current.copy()

    @property
    def bus_dt(self) -> float:
        """Seconds per bus cycle (``1 / bus.rate``)."""
        return self._bus_dt

    @property
    def time(self) -> float:
        """Bus cycles times the bus period since connecting or the last ``reset()``."""
        return (self._cycles - self._t0) * self._bus_dt

    @property
    def last_action(self) -> NJointAction:
        """The action most recently accepted by ``apply`` (Zero after arm and disarm)."""
        return self._action

    @property
    def armed(self) -> bool:
        """True when the servos' torque is on and motion commands are accepted."""
        return self._armed

    @property
    def calibration(self) -> Calibration | None:
        """The calibration in use (None: the robot refuses to arm)."""
        return self._calibration

    @property
    def driver(self) -> ServoDriver:
        """The SDK driver (bus statistics in ``driver.stats``)."""
        return self._driver

    @property
    def config_speed(self) -> np.ndarray:
        """Configured speeds, shape ``(dof,)``, rad/s."""
        return self._config_speed.copy()

    @property
    def config_accel(self) -> np.ndarray:
        """Configured accelerations, shape ``(dof,)``, rad/s²."""
        return self._config_accel.copy()

    def read(self) -> ArrayState:
        """The state of the last bus cycle's Sync Read."""
        return self._state

    def apply(self, action: NJointAction) -> None:
        """Check and convert ``action``; it is written from the next bus cycle on.

        Raises:
            ActionError: not an NJointAction, or its length is not ``dof``.
            CommandRefused: disarmed or unpowered (and not zero), a torque on a position-only
                servo or a position joint without target (``unsupported_by_device``), a
                target outside the calibrated range (``out_of_limits``), gains beyond the
                registers (``out_of_range``).
        """
        if not isinstance(action, NJointAction):
            raise ActionError(f"apply() takes an NJointAction, got {type(action).__name__}")
        if action.dof != self.dof:
            raise ActionError(
                f"NJointAction.torque has length {action.dof}, expected {self.dof} (one per "
                f"joint of robot {self._description.name!r})"
            )
        self._check_open()
        if not action.is_zero and not self._armed:
            reason = "unpowered" if not self._powered else "disarmed"
            raise CommandRefused(
                f"robot {self._description.name!r} on {self.port!r} is {reason}: only a zero "
                "action is accepted; call "
                + ("power(True) and " if not self._powered else "")
                + "arm() first",
                reason=reason,
            )
        self._goals = self._commands.plan(action)
        self._action = action

    def step(self) -> None:
        """Run ``control_dt / bus_dt`` bus cycles (see the module docstring)."""
        self._check_open()
        for _ in range(self._cycles_per_step):
            self._cycle()

    def reset(self, q: np.ndarray | None = None, qd: np.ndarray | None = None) -> ArrayState:
        """Move to ``q`` (default: home) with a minimum-jerk move and hold; restart time.

        Raises:
            ConfigurationError: ``q`` is not ``dof`` finite values within the joint limits.
            CommandRefused: the robot must move but is disarmed.
        """
        target = reset_target(self._description, q, qd)
        self._check_open()
        if not minimum_jerk_move(self, target):
            self._cycle()
        self._t0 = self._cycles
        return self.read()

    def power(self, on: bool) -> None:
        """``power(False)``: torque off on every servo, disarmed; ``power(True)``: allow arming."""
        self._check_open()
        if not on:
            self._torque(False)
            self._armed = False
            self._action, self._goals = self._zero, self._commands.plan(self._zero)
        self._powered = bool(on)
        self._state = self._read_state(self._state)

    def brakes(self, on: bool) -> None:
        """Servos have no brakes: engaging them is refused (``unsupported_by_device``)."""
        self._check_open()
        if on:
            raise CommandRefused(
                f"robot {self._description.name!r}: servos have no brakes; hold a position "
                "with a Position action instead",
                reason="unsupported_by_device",
            )

    def arm(self) -> None:
        """Torque on with acknowledgement, holding the present positions.

        Raises:
            CommandRefused: no calibration (reason ``uncalibrated``, saying how to make one),
                or unpowered (reason ``unpowered``).
        """
        self._check_open()
        if self._calibration is None:
            raise CommandRefused(
                f"robot {self._description.name!r} on {self.port!r} is not calibrated, so it "
                f"will not arm: run `jointlab calibrate {self._bus.protocol.value}://{self.port}"
                f" --robot {self._description.source or self._description.name}` (it writes "
                f"{calibration_path(self._description)}), or pass calibration=",
                reason="uncalibrated",
            )
        if not self._powered:
            raise CommandRefused("motor power is off; call power(True) first", reason="unpowered")
        self._action, self._goals = self._zero, self._commands.plan(self._zero)
        self._state = self._read_state(self._state)
        self._write_goals()  # hold here before the torque comes on
        self._torque(True)
        self._armed = True
        self._state = self._read_state(self._state)

    def disarm(self) -> None:
        """Torque off with acknowledgement (the arm goes limp); only zero actions accepted."""
        self._check_open()
        self._torque(False)
        self._armed = False
        self._action, self._goals = self._zero, self._commands.plan(self._zero)
        self._state = self._read_state(self._state)

    def geometry(self) -> ArrayGeometry:
        """Player GET_GEOM: the description's geometry with the configured speeds."""
        return self._description.geometry(config_speed=self._config_speed)

    def configure_speed(self, joint: int | str, speed: float) -> None:
        """Configured speed of ``joint`` (REQ SPEED), rad/s, within its velocity limit."""
        self._configure("speed", self._config_speed, joint, speed,
                        self._description.velocity_limit)  # fmt: skip

    def configure_accel(self, joint: int | str, accel: float) -> None:
        """Configured acceleration of ``joint`` (REQ ACCEL), rad/s², within its limit."""
        self._configure("accel", self._config_accel, joint, accel,
                        self._description.acceleration_limit)  # fmt: skip

    def _configure(self, what: str, target: np.ndarray, joint: int | str, value: float,
                   limit: np.ndarray) -> None:  # fmt: skip
        try:
            index = self._description.joint_index(joint)
        except JointLabError as exc:
            raise ConfigurationError(f"configure_{what}: {exc}") from exc
        if not np.isfinite(value) or not 0 < value <= limit[index]:
            raise ConfigurationError(
                f"configure_{what}: {what} {value!r} of joint {index} "
                f"({self._description.joint_names[index]}) must be > 0 and <= {limit[index]}"
            )
        target[index] = float(value)

    def seed(self, seed: int) -> None:
        """Accept a seed, as ``SimRobot.seed`` does (a real arm has no randomness to seed).

        Environments reseed their robot at every reset; taking the seed here keeps their
        random streams, and so their episodes, the same as in simulation.
        """
        self._seed = int(seed)

    def set_stream_period(self, cycles: int) -> None:
        """One ``step()`` every ``cycles`` bus cycles (what evaluation tools call a period)."""
        if int(cycles) < 1:
            raise ConfigurationError(f"the period must be >= 1 bus cycle, got {cycles!r}")
        self._set_control_dt(int(cycles) * self._bus_dt)

    # ================================================================ servo access
    @property
    def servo_ids(self) -> list[int]:
        """Servo ids in joint order."""
        return list(self._ids)

    @property
    def models(self) -> list[Any]:
        """Each joint's :class:`~jointlab.hardware.servo.control_table.ServoModel`."""
        return list(self._models)

    def write_register(self, joint: int | str, name: str, value: int) -> int:
        """Write register ``name`` of ``joint``'s servo (with status); return its error byte."""
        index = self._description.joint_index(joint)
        return self._driver.write(self._ids[index], self._models[index].table[name], int(value))

    def read_register(self, joint: int | str, name: str) -> int:
        """Read register ``name`` of ``joint``'s servo."""
        index = self._description.joint_index(joint)
        return self._driver.read(self._ids[index], self._models[index].table[name])

    def idle_cycle(self) -> ArrayState:
        """One bus cycle that writes no goals: wait for the period, Sync Read; the new state."""
        self._check_open()
        self._wait()
        self._state = self._read_state(self._state)
        return self._state

    def reboot(self, joint: int | str) -> None:
        """Reboot one servo (clears its hardware error; it comes back limp, so disarmed)."""
        index = self._description.joint_index(joint)
        self._driver.reboot(self._ids[index])
        time.sleep(0.05)
        self._armed = False
        self._action, self._goals = self._zero, self._commands.plan(self._zero)

    # ================================================================ lifetime
    def _check_open(self) -> None:
        if self._closed:
            raise ConfigurationError(f"ServoBusRobot on {self.port!r} is closed")

    def _shutdown(self) -> None:
        self._closed = True
        self._driver.close()
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()

    def close(self) -> None:
        """Torque off (best effort), close the port, then run ``on_close``; safe twice."""
        if self._closed:
            return
        try:
            self._torque(False)
        except JointLabError:
            pass
        self._shutdown()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"t={self.time:.3f}s"
        return f"ServoBusRobot({self.port!r}, {self._description.name!r}, {state})"
