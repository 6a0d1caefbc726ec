"""An emulated servo bus in its own process, and its control pipe.

:class:`BusEmulatorProcess` runs
``python -m jointlab.hardware.servo_emulator.emulator --control-fd N`` with the JointLab
device emulator's process machinery (:class:`EmulatorProcess` and its child side,
``serve_control``) and talks to it with :class:`BusRequest` / :class:`BusReport`: fault
injection, hardware errors, moving the limp arm by hand (for manual calibration), lockstep
``advance``.
"""

from __future__ import annotations

from typing import Any

from jointlab.errors import ConfigurationError, LinkError
from jointlab.hardware.emulator.command_line import serve_control as serve_emulator_control
from jointlab.hardware.emulator.faults import Failed
from jointlab.hardware.emulator.process import EmulatorProcess
from jointlab.hardware.servo_emulator.bus_control import BusControl, BusRequest, handle_control
from jointlab.hardware.servo_emulator.emulator import BusEmulator, BusFaults, BusReport

__all__ = ["BusControl", "BusEmulatorProcess", "BusRequest", "handle_control", "serve_control"]


class BusEmulatorProcess(EmulatorProcess):
    """A :class:`BusEmulator` in its own process; ``path`` is its pty.

    Args:
        robot: Description, built-in name or robot file with a ``bus`` section.
        start_timeout: Seconds to wait for the process to report its pty.
        **options: :class:`BusEmulator` keyword arguments (``seed``, ``lockstep``,
            ``offsets``, ``baud``, ``faults``).

    Raises:
        LinkError: the process did not start (names the robot and the reason).
    """

    module = "jointlab.hardware.servo_emulator.emulator"

    def report(self) -> BusReport:  # type: ignore[override]
        """The bus counters and the arm's joint positions."""
        return self._ask(BusRequest(BusControl.REPORT))

    def set_faults(self, faults: BusFaults | None = None, **changes: Any) -> BusReport:  # type: ignore[override]
        """Replace the fault injection: ``BusFaults(...)`` or its fields as keywords."""
        return self._ask(BusRequest(BusControl.FAULTS, faults=faults or BusFaults(**changes)))

    def inject(self, servo_id: int, bits: int) -> BusReport:
        """Set hardware error ``bits`` on servo ``servo_id`` (it turns its torque off)."""
        return self._ask(BusRequest(BusControl.INJECT, servo_id=int(servo_id), bits=int(bits)))

    def move(self, position: Any) -> BusReport:
        """Put the limp arm at joint ``position`` (rad), as a person moving it by hand.

        Raises:
            ConfigurationError: the emulator refused the position (outside a joint's limits).
        """
        answer = self._ask(BusRequest(BusControl.MOVE, position=tuple(float(v) for v in position)))
        if isinstance(answer, Failed):
            raise ConfigurationError(f"emulated bus {self.path}: move refused: {answer.error}")
        return answer

    def advance(self, seconds: float, rx_bytes: int) -> BusReport:
        """Lockstep: act on the host's first ``rx_bytes`` bytes, then run ``seconds``.

        Raises:
            LinkError: the emulator could not (its reason).
        """
        answer = self._ask(
            BusRequest(BusControl.ADVANCE, seconds=float(seconds), rx_bytes=int(rx_bytes))
        )
        if isinstance(answer, Failed):
            raise LinkError(f"emulated bus {self.path}: {answer.error}")
        return answer


def serve_control(fd: int) -> int:
    """Child side of :class:`BusEmulatorProcess` (the device emulator's, with a bus)."""
    return serve_emulator_control(fd, BusEmulator)
