"""The JointLab device emulator: firmware around a simulated plant, on a byte link.

* :mod:`~jointlab.hardware.emulator.device`: :class:`Device`, the firmware logic (no I/O),
  dispatched through the message table; :mod:`~jointlab.hardware.emulator.player` (Player
  commands), :mod:`~jointlab.hardware.emulator.setpoints` (their setpoint generators),
  :mod:`~jointlab.hardware.emulator.gate` (refusals), :mod:`~jointlab.hardware.emulator.queue`
  (accepted commands);
* :mod:`~jointlab.hardware.emulator.emulator`: :class:`Emulator`, a device on a link with
  fault injection; :mod:`~jointlab.hardware.emulator.loop`, its real-time and lockstep
  clocks; :mod:`~jointlab.hardware.emulator.links`, the pty and TCP links;
* :mod:`~jointlab.hardware.emulator.process`: :class:`EmulatorProcess`, the emulator in its
  own process; :mod:`~jointlab.hardware.emulator.faults`, :class:`Faults` and the control
  messages.

``python -m jointlab.hardware.emulator ROBOT`` serves one from a shell.
"""

from __future__ import annotations

from jointlab.hardware.emulator.command_line import main
from jointlab.hardware.emulator.device import Device
from jointlab.hardware.emulator.emulator import Emulator
from jointlab.hardware.emulator.faults import EmulatorReport, Faults
from jointlab.hardware.emulator.process import EmulatorProcess, realtime_priority
from jointlab.hardware.emulator.queue import AppliedCommand

__all__ = [
    "AppliedCommand",
    "Device",
    "Emulator",
    "EmulatorProcess",
    "EmulatorReport",
    "Faults",
    "main",
    "realtime_priority",
]
