"""Bus cycles: goals out, state in, at the bus rate; torque enable and the bus watchdog.

:class:`BusCycle` is what :class:`~jointlab.hardware.servo_host.robot.ServoBusRobot` does on the
wire. One **bus cycle** is one exchange of goals (one Sync or Bulk Write, no status packets)
and one of state (one Sync Read of every servo's ``READ_SPAN``); cycles are paced to
``1 / bus.rate`` of wall-clock time, or, on a lockstep emulated bus, to its virtual clock
(``advance``).

**The Dynamixel Bus Watchdog** (register 98, in 20 ms units) is set while the robot is armed:
a servo that hears no instruction for that long stops where it is, sets the register to -1
and refuses goals until it is cleared (written 0). The host finds out in two ways: after a
gap longer than the watchdog period between its own exchanges (the host was silent, e.g. a
program that stopped calling ``step()``), and by a one-byte Sync Read of the register once
every watchdog period (instructions lost on the line). A servo found so is cleared and its
watchdog set again at once, so the goals written in the same cycle take effect ("the next
command clears it", as on a JointLab device), and that cycle's state has ``watchdog`` True.
Feetech servos have no such register.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from jointlab.errors import CommandRefused, LinkError
from jointlab.hardware.servo.control_table import ServoModel
from jointlab.hardware.servo_host.bus_state import READ_SPAN, StateDecoder
from jointlab.hardware.servo_host.commands import Goals, ServoCommands
from jointlab.hardware.servo_host.driver import ServoDriver
from jointlab.interface import ArrayState
from jointlab.robots.bus import BusSpec
from jointlab.robots.transmission import TransmissionArray

__all__ = ["WATCHDOG_UNIT", "BusCycle"]

#: Seconds per unit of the Dynamixel Bus Watchdog register.
WATCHDOG_UNIT = 0.02


class BusCycle:
    """The bus side of a servo robot (see the module docstring).

    Args:
        driver: The opened SDK driver.
        bus: The robot file's ``bus`` section.
        models: Each joint's servo model.
        commands: Turns actions into goals and writes them.
        transmissions: Motor space <-> joint space (calibrated).
        watchdog_ms: Dynamixel Bus Watchdog while armed, ms (0: off).
        advance: Lockstep: called as ``advance(seconds, bytes_written)`` instead of waiting
            for the end of each cycle.
    """

    def __init__(
        self,
        driver: ServoDriver,
        bus: BusSpec,
        models: list[ServoModel],
        commands: ServoCommands,
        transmissions: TransmissionArray,
        watchdog_ms: int,
        advance: Callable[[float, int], Any] | None,
    ) -> None:
        self.driver = driver
        self.ids = list(bus.ids)
        self.models = models
        self.protocol = bus.protocol.value
        #: Seconds per bus cycle.
        self.dt = 1.0 / bus.rate
        #: Cycles run since the bus was opened.
        self.count = 0
        self._commands = commands
        self._transmissions = transmissions
        self._span = models[0].table.span(*READ_SPAN[self.protocol])
        self._decoder = StateDecoder(models, self._span[0])
        self._advance = advance
        self._gains: tuple[Any, Any] = (None, None)
        self._next = self._last = time.perf_counter()
        self._watched = [i for i, m in enumerate(models) if "bus_watchdog" in m.table]
        units = max(1, round(int(watchdog_ms) / 1000.0 / WATCHDOG_UNIT)) if watchdog_ms else 0
        self._watchdog_units = units if self._watched else 0
        #: Cycles between two reads of the watchdog registers (0: never).
        self._check_every = max(1, math.floor(units * WATCHDOG_UNIT / self.dt)) if units else 0
        self._since_check = 0

    # ================================================================ torque
    def torque(self, on: bool) -> None:
        """Torque Enable on every servo, each acknowledged; the watchdog follows it.

        Raises:
            CommandRefused: a Dynamixel servo answered with an error (reason ``refused``).
            LinkError: a servo did not answer.
        """
        for i in self._watched:
            if not on:
                self._write_watchdog(i, 0)
        for servo_id, model in zip(self.ids, self.models, strict=True):
            error = self.driver.write(servo_id, model.table["torque_enable"], int(on))
            if error & 0x7F and self.protocol == "dynamixel":
                raise CommandRefused(
                    f"servo id {servo_id} refused Torque Enable = {int(on)} (status error "
                    f"{error:#04x})",
                    reason="refused",
                )
        if on:
            for i in self._watched:
                self._write_watchdog(i, self._watchdog_units)
            self._since_check = 0

    def torque_off_everywhere(self) -> list[int]:
        """Torque Enable 0 on every servo that answers (after a fault); the ids that did not.

        Never raises: a lost servo must not keep the others' torque on.
        """
        silent = []
        for servo_id, model in zip(self.ids, self.models, strict=True):
            try:
                self.driver.write(servo_id, model.table["torque_enable"], 0)
            except LinkError:
                silent.append(servo_id)
        return silent

    def _write_watchdog(self, index: int, units: int) -> None:
        register = self.models[index].table["bus_watchdog"]
        self.driver.write(self.ids[index], register, units)

    def watchdog_fired(self) -> bool:
        """Whether a servo's Bus Watchdog fired (see the module docstring); clears it.

        Called by an armed robot before it writes its goals.
        """
        if not self._watchdog_units:
            return False
        self._since_check += 1
        silent = time.perf_counter() - self._last
        if self._since_check < self._check_every and (
            self._advance is not None or silent <= self._watchdog_units * WATCHDOG_UNIT
        ):
            return False
        self._since_check = 0
        ids = [self.ids[i] for i in self._watched]
        register = self.models[self._watched[0]].table["bus_watchdog"]
        values = register.decode(self.driver.sync_read(register.address, 1, ids)[:, 0])
        fired = [i for i, value in zip(self._watched, values, strict=True) if value < 0]
        for i in fired:
            self._write_watchdog(i, 0)
            self._write_watchdog(i, self._watchdog_units)
        return bool(fired)

    # ================================================================ one cycle
    def write_goals(self, goals: Goals, state: ArrayState) -> None:
        """One Sync/Bulk Write of ``goals`` (gain registers only when they change)."""
        self._gains = self._commands.write(self.driver, goals, state, self._gains)

    def check_goals(self, goals: Goals, state: ArrayState) -> None:
        """Read Goal Position back from every position servo: it must be what was written.

        Called between writing the hold and Torque Enable: a Sync Write has no status packet,
        so only reading the register back shows that every servo took the goal it is about to
        hold (as LeRobot and the vendors' manuals advise before enabling torque).

        Raises:
            LinkError: a servo holds another goal (torque stays off), or did not answer.
        """
        expected = self._commands.goal_ticks(goals, state)
        for k, (servo_id, model) in enumerate(zip(self.ids, self.models, strict=True)):
            if np.isnan(expected[k]):
                continue  # a current-mode servo: no goal position to hold
            value = self.driver.read(servo_id, model.table["goal_position"])
            if value != int(expected[k]):
                raise LinkError(
                    f"servo id {servo_id}: Goal Position reads {value} after {int(expected[k])} "
                    "was written (the hold of the present position); torque stays off"
                )

    def wait(self) -> None:
        """Wait for the end of this cycle (lockstep: advance the emulated bus by one)."""
        self.count += 1
        if self._advance is not None:
            self._advance(self.dt, self.driver.bytes_written)
            return
        self._next += self.dt
        delay = self._next - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        elif delay < -self.dt:  # late by more than a period: slip, do not burst
            self._next = time.perf_counter()

    def read(
        self,
        previous: ArrayState | None,
        t: float,
        powered: bool,
        armed: bool,
        watchdog: bool = False,
    ) -> ArrayState:
        """One Sync Read: the state at time ``t`` with the given flags."""
        address, length = self._span
        block = self.driver.sync_read(address, length, self.ids)
        self._last = time.perf_counter()
        errors = np.array([self.driver.error_bits.get(i, 0) for i in self.ids])
        position, velocity, torque, current, flags, extras = self._decoder.decode(
            block, errors, self._transmissions
        )
        accel = (
            np.zeros_like(position)
            if previous is None
            else (velocity - previous.velocity) / self.dt
        )
        return ArrayState(
            t,
            position,
            velocity,
            accel,
            torque,
            current,
            flags,
            powered,
            armed,
            watchdog=watchdog,
            extras=extras,
        )
