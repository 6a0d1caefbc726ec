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

import importlib
from typing import Any

#: Public name -> module, imported on first use (``python -m`` stays light).
_EXPORTS = {
    "AppliedCommand": "queue",
    "Device": "device",
    "Emulator": "emulator",
    "EmulatorProcess": "process",
    "EmulatorReport": "faults",
    "Faults": "faults",
    "main": "command_line",
    "realtime_priority": "process",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'jointlab.hardware.emulator' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"jointlab.hardware.emulator.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
