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

The shared checks are the :class:`~jointlab.interface.Robot` base's, so refusals carry the
same types and reasons as on ``sim://`` and ``emulated://`` (``closed``, ``unpowered``,
``disarmed``; lengths naming the field given; ``ConfigurationRefused`` for settings). What
is servo-specific comes on top: ``unsupported_by_device`` (a torque on a position-only servo,
brakes a robot file declares), ``uncalibrated`` (``arm()`` without a calibration),
``out_of_limits`` and ``out_of_range`` (a target outside the calibrated range, gains beyond
the registers).

Differences from ``SimRobot``, by design: ``reset(q)`` is a move (a servo arm cannot
teleport); ``brakes(True)`` is refused (``no_brakes``, as on every robot without brakes); the
zero action holds the present position on position servos (they have no zero-torque command;
``disarm()`` makes them limp); ``arm()`` needs a calibration. Temperature, voltage and the
hardware-error bits are in ``state.extras``; a servo's hardware error shows as STALLED; a
fired Dynamixel Bus Watchdog shows as ``state.watchdog`` (:mod:`.cycle`).

**Faults** (the one rule of :mod:`jointlab.faults`, kept here at the bus rate). While armed,
a servo whose status reports a hardware error (its protection cut its torque: overload,
heat, voltage), a servo silent for ``lost_cycles`` cycles, or a joint the host's stall guard
(:mod:`.stall`, on for grippers by default) finds stalled, stops the robot at once: the
other joints hold where they are for one bus cycle, every servo's torque goes off, the robot
disarms, and ``step()`` raises a :class:`~jointlab.errors.DeviceFault` (``DeviceLost`` for
the silent servo) naming the servo, its joint, each error bit and the fix
(:mod:`.fault_stop`, :mod:`.fault_report`); ``fault`` keeps it. ``arm()`` refuses a
Dynamixel still reporting an error. Recovery is the one arming path: clear the error
(``reboot(joint)`` on Dynamixel, arming itself on Feetech), then ``arm()`` holds the
present pose.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.contract import Readiness, Robot
from jointlab.errors import (
    CommandRefused,
    ConfigurationError,
    DeviceFault,
    JointLabError,
    LinkError,
)
from jointlab.hardware.host.reset_move import minimum_jerk_move, reset_target
from jointlab.hardware.servo_host.bus_state import check_servos
from jointlab.hardware.servo_host.calibration import Calibration, calibration_path, load_calibration
from jointlab.hardware.servo_host.commands import ServoCommands
from jointlab.hardware.servo_host.cycle import BusCycle
from jointlab.hardware.servo_host.driver import ServoDriver, make_driver
from jointlab.hardware.servo_host.fault_report import hardware_fault, lost_servo
from jointlab.hardware.servo_host.fault_stop import FaultStop
from jointlab.hardware.servo_host.stall import StallGuard, StallLimits, stall_limits
from jointlab.hardware.vendors import bus_models, vendor
from jointlab.holding import hold_action
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots import ArrayGeometry, RobotDescription, load_robot

__all__ = ["ServoBusRobot"]


class ServoBusRobot(FaultStop, Robot):
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
        stall_protection: The host's stall guard (:mod:`.stall`): None (default) watches the
            grippers, True every joint, False none; a dict ``{joint: StallLimits(...)}``
            those joints with those thresholds.
        lost_cycles: Bus cycles a servo may stay silent while armed (each after the
            driver's retries) before the robot stops as for a fault.
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
        stall_protection: bool | dict[str, StallLimits] | None = None,
        lost_cycles: int = 3,
        advance: Callable[[float, int], Any] | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self._closed = True
        self._on_close = on_close
        self._description = load_robot(description)
        self._bus, self._models = bus_models(self._description)
        self._vendor = vendor(self._bus.protocol.value)
        self.port = port
        self.realtime = advance is None
        self._ids = list(self._bus.ids)
        names = {s.id: s.joint for s in self._bus.servos}
        self._driver = make_driver(
            self._bus.protocol.value, port, baud or self._bus.baud, names, retries, timeout_ms
        )
        self._bus_dt = 1.0 / self._bus.rate
        self._set_control_dt(self._bus_dt if control_dt is None else float(control_dt))
        self._calibration = load_calibration(calibration, self._description)
        self._current = np.array([s.mode.value == "current" for s in self._bus.servos])
        transmissions = (
            self._description.transmissions
            if self._calibration is None
            else self._calibration.transmissions(self._description)
        )
        ticks = None if self._calibration is None else self._calibration.tick_range()
        self._commands = ServoCommands(
            self._description, self._models, self._current, transmissions, ticks
        )
        self._cycle_io = BusCycle(
            self._driver,
            self._bus,
            self._models,
            self._commands,
            transmissions,
            watchdog_ms,
            advance,
        )
        joints = list(self._description.joint_names)
        stall_current = np.array([m.stall_current for m in self._models])
        self._guard = StallGuard(
            stall_limits(joints, stall_protection), len(joints), stall_current, self._bus_dt
        )
        if int(lost_cycles) < 1:
            raise ConfigurationError(f"lost_cycles must be >= 1 bus cycle, got {lost_cycles!r}")
        self._lost_cycles = int(lost_cycles)
        self._missed = 0
        #: The fault that stopped the robot last (None: none since it was last armed).
        self.fault: DeviceFault | None = None
        self._config_speed = np.array(self._description.config_speed)
        self._config_accel = np.array(self._description.acceleration_limit)
        self._zero = NJointAction.Zero(self._description.dof)
        self._powered, self._armed = True, False
        try:
            self._driver.open()
            self._closed = False
            check_servos(self._driver, self._bus, self._models, self.port, configure)
            self._cycle_io.torque(False)
            self._hold_zero()
            self._t0 = 0
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

    # ================================================================ bus cycles
    def _hold_zero(self) -> None:
        """The zero action in force (position servos hold where they are)."""
        self._action, self._goals = self._zero, self._commands.plan(self._zero)

    def _read_state(self, previous: ArrayState | None, watchdog: bool = False) -> ArrayState:
        t = (self._cycle_io.count - self._t0) * self._bus_dt
        return self._cycle_io.read(previous, t, self._powered, self._armed, watchdog)

    def exchange(self) -> ArrayState:
        """One bus cycle without its pacing: write the goals in force, Sync Read; the state.

        What ``step()`` runs ``control_dt / bus_dt`` times with a wait after each write;
        benchmarks call it back to back.
        """
        self._check_open("exchange")
        self._cycle(wait=False)
        return self._state

    def _cycle(self, wait: bool = True) -> None:
        fired = self._armed and self._cycle_io.watchdog_fired()
        self._cycle_io.write_goals(self._goals, self._state)
        if wait:
            self._cycle_io.wait()
        try:
            state = self._read_state(self._state, fired)
        except LinkError as exc:
            if not self._armed:
                raise
            self._missed += 1
            if self._missed < self._lost_cycles:
                return  # the last state stands; the goals keep going out
            servo_id = getattr(exc, "servo_id", None)
            joint = self._joint_of(servo_id)
            self._stop(lost_servo(servo_id, joint, self._missed, str(exc)), exc)
        self._missed = 0
        self._state = state
        if self._armed:
            self._check_faults(state)

    # ================================================================ Robot hooks
    def _where(self) -> str:
        return f" on {self.port!r}"

    def _readiness(self) -> Readiness:
        return Readiness(powered=self._powered, armed=self._armed, braked=False)

    def _read(self) -> ArrayState:
        return self._state

    def _apply(self, action: NJointAction) -> None:
        """Convert ``action`` into goals (servo refusals here); written from the next cycle."""
        self._goals = self._commands.plan(action)
        self._action = action

    def _step(self) -> None:
        for _ in range(self._cycles_per_step):
            self._cycle()

    def _reset(self, q: np.ndarray | None, qd: np.ndarray | None, **options: Any) -> ArrayState:
        """A minimum-jerk move to ``q`` (default: home), then a hold; time restarts.

        A servo arm cannot teleport, even on a lockstep emulated bus: ``qd`` must be zero.

        Raises:
            ConfigurationError: ``q`` is not ``dof`` finite values within the joint limits,
                ``qd`` is not zero, or an option is given (there are none).
            CommandRefused: the robot must move but is disarmed.
        """
        if options:
            raise ConfigurationError(
                f"reset: a servo robot takes no options, got {sorted(options)}"
            )
        target, _ = reset_target(self._description, q, qd)
        if not minimum_jerk_move(self, target):
            self._cycle()
        self._t0 = self._cycle_io.count
        self._state = self._read_state(self._state)
        return self._state

    def _power(self, on: bool) -> None:
        """Off: torque off on every servo, disarmed; on: arming is allowed again."""
        if not on:
            self._cycle_io.torque(False)
            self._armed = False
            self._hold_zero()
        self._powered = on
        self._state = self._read_state(self._state)

    def _brakes(self, on: bool) -> None:
        """Servos have no brakes: engaging them is refused, releasing them is nothing."""
        if on:
            raise CommandRefused(
                f"brakes refused: robot {self._description.name!r}{self._where()}: servos "
                "have no brakes; hold a position with a Position action instead",
                reason="unsupported_by_device",
            )

    def _arm(self) -> None:
        """Torque on with acknowledgement, holding the present positions against gravity.

        The goals of :func:`jointlab.holding.hold_action` (gravity folded into the targets of
        position-only servos) are written, and Goal Position is read back from every position
        servo and checked equal to what was written, before torque is enabled.

        Raises:
            CommandRefused: no calibration (reason ``uncalibrated``, saying how to make one).
            LinkError: a servo's Goal Position reads otherwise (torque stays off).
        """
        if self._calibration is None:
            raise CommandRefused(
                f"arm refused: robot {self._description.name!r}{self._where()} is not "
                f"calibrated: run `{self.calibrate_command()}` (it writes "
                f"{calibration_path(self._description)}), or pass calibration=",
                reason="uncalibrated",
            )
        if self._armed:
            return
        self._state = self._read_state(self._state)
        latched = self._state.extras["hardware_error"] * np.array(
            ["shutdown" in m.table for m in self._models]
        )  # only a reboot clears a Dynamixel's error; arming clears a Feetech's
        if latched.any():
            k = int(np.flatnonzero(latched)[0])
            fault = hardware_fault(
                self._vendor,
                self._ids[k],
                self._description.joint_names[k],
                self._models[k],
                self._error_bits(k, int(latched[k])),
                stopped=False,
            )
            raise CommandRefused(f"arm refused: {fault}", reason="device_fault")
        self._guard.reset()
        self._missed = 0
        self.fault = None
        hold = self._commands.fold_torque(hold_action(self._description, self._state.position))
        self._action, self._goals = hold, self._commands.plan(hold)
        self._cycle_io.write_goals(self._goals, self._state)  # hold here before torque is on
        self._cycle_io.check_goals(self._goals, self._state)  # ... read back, then torque on
        self._cycle_io.torque(True)
        self._armed = True
        self._state = self._read_state(self._state)

    def calibrate_command(self) -> str:
        """The shell command that calibrates this arm (quoted where needed, ready to paste)."""
        source = self._description.source or ""
        robot = source if source and not source.startswith("<") else self._description.name
        url = f"{self._bus.protocol.value}://{self.port}"
        return f"jointlab calibrate {shlex.quote(url)} --robot {shlex.quote(robot)}"

    def _disarm(self) -> None:
        """Torque off with acknowledgement (the arm goes limp)."""
        self._cycle_io.torque(False)
        self._armed = False
        self._hold_zero()
        self._state = self._read_state(self._state)

    def _geometry(self) -> ArrayGeometry:
        return self._description.geometry(config_speed=self._config_speed)

    def _configure_speed(self, joint: int, speed: float) -> None:
        self._config_speed[joint] = speed

    def _configure_accel(self, joint: int, accel: float) -> None:
        self._config_accel[joint] = accel

    # ================================================================ properties
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
        return (self._cycle_io.count - self._t0) * self._bus_dt

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
        self._check_open("write_register")
        index = self._description.joint_index(joint)
        return self._driver.write(self._ids[index], self._models[index].table[name], int(value))

    def read_register(self, joint: int | str, name: str) -> int:
        """Read register ``name`` of ``joint``'s servo."""
        self._check_open("read_register")
        index = self._description.joint_index(joint)
        return self._driver.read(self._ids[index], self._models[index].table[name])

    def idle_cycle(self) -> ArrayState:
        """One bus cycle that writes no goals: wait for the period, Sync Read; the new state."""
        self._check_open("idle_cycle")
        self._cycle_io.wait()
        self._state = self._read_state(self._state)
        return self._state

    def reboot(self, joint: int | str) -> None:
        """Reboot one servo (clears its hardware error; it comes back limp, so disarmed)."""
        self._check_open("reboot")
        index = self._description.joint_index(joint)
        self._driver.reboot(self._ids[index])
        if self.realtime:
            time.sleep(0.05)  # the servo's boot time
        self._armed = False
        self._hold_zero()

    # ================================================================ lifetime
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
            self._cycle_io.torque(False)
        except JointLabError:
            pass
        self._shutdown()

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"t={self.time:.3f}s"
        return f"ServoBusRobot({self.port!r}, {self._description.name!r}, {state})"
