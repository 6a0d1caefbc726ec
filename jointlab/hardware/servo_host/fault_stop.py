"""How a servo bus robot stops on a fault, at the bus rate (a base of ``ServoBusRobot``).

:class:`FaultStop` checks every bus cycle's state while the robot is armed: a servo's
hardware-error bits (its protection cut its torque) or a joint the stall guard finds stalled
stop the robot (:meth:`FaultStop._stop`: the other joints held one bus cycle, every torque
off, disarmed, the :class:`~jointlab.errors.DeviceFault` raised). The messages are
:mod:`.fault_report`'s.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from jointlab.errors import DeviceFault, JointLabError, LinkError
from jointlab.hardware.servo.control_table import ServoModel
from jointlab.hardware.servo.vendor import Vendor
from jointlab.hardware.servo_host.commands import ServoCommands
from jointlab.hardware.servo_host.cycle import BusCycle
from jointlab.hardware.servo_host.driver import ServoDriver
from jointlab.hardware.servo_host.fault_report import hardware_fault, stalled
from jointlab.hardware.servo_host.stall import StallGuard
from jointlab.holding import hold_action
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.description import RobotDescription

__all__ = ["FaultStop"]


class FaultStop:
    """The fault checks and the stop of a servo bus robot (see the module docstring)."""

    _description: RobotDescription
    _ids: list[int]
    _models: list[ServoModel]
    _vendor: Vendor
    _driver: ServoDriver
    _commands: ServoCommands
    _cycle_io: BusCycle
    _guard: StallGuard
    _state: ArrayState
    _action: NJointAction
    _armed: bool
    fault: DeviceFault | None
    _hold_zero: Callable[[], None]

    def _joint_of(self, servo_id: int | None) -> str | None:
        if servo_id not in self._ids:
            return None
        return self._description.joint_names[self._ids.index(servo_id)]

    def _error_bits(self, index: int, status: int) -> int:
        """Servo ``index``'s hardware-error bits.

        Read from its Hardware Error Status where the status byte only says there is one
        (Dynamixel's Alert bit).
        """
        table = self._models[index].table
        if "shutdown" not in table:
            return int(status)
        try:
            return self._driver.read(self._ids[index], table["hardware_error_status"])
        except LinkError:
            return int(status)

    def _check_faults(self, state: ArrayState) -> None:
        """Stop on a servo's hardware error or a stalled joint (see the module docstring)."""
        errors = state.extras["hardware_error"]
        if errors.any():
            k = int(np.flatnonzero(errors)[0])
            bits = self._error_bits(k, int(errors[k]))
            joint = self._description.joint_names[k]
            self._stop(hardware_fault(self._vendor, self._ids[k], joint, self._models[k], bits))
        goal = self._action.position
        stalled_now = self._guard.update(state.current, goal, state.position)
        if stalled_now.any():
            k = int(np.flatnonzero(stalled_now)[0])
            error = abs(float(goal[k] - state.position[k]))
            self._stop(
                stalled(
                    self._ids[k],
                    self._description.joint_names[k],
                    float(self._guard.stalled_for[k]),
                    float(state.current[k]),
                    float(np.degrees(error)),
                )
            )

    def _stop(self, error: DeviceFault, cause: BaseException | None = None) -> None:
        """Hold the other joints one bus cycle, every torque off, disarm; raise ``error``."""
        self.fault = error
        try:
            hold = self._commands.fold_torque(hold_action(self._description, self._state.position))
            self._goals = self._commands.plan(hold)
            self._cycle_io.write_goals(self._goals, self._state)
            self._cycle_io.wait()
        except JointLabError:
            pass  # a dead link: straight to torque off
        self._cycle_io.torque_off_everywhere()
        self._armed = False
        self._hold_zero()
        raise error from cause
