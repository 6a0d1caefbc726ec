"""Serial hardware backend: the wire protocol, the host, the device emulator, SSL.

The package shows the architecture:

* :mod:`~jointlab.hardware.protocol`: **one message table** (every message declared once)
  and its codec: message classes, COBS + CRC-32 framing, the streaming decoder;
* :mod:`~jointlab.hardware.host`: :class:`SerialRobot` (the ``Robot`` interface on a
  device) over a transport built on pyserial's ``ReaderThread``, and the URL schemes;
* :mod:`~jointlab.hardware.emulator`: :class:`Device` (firmware logic around a
  ``SimRobot``), :class:`Emulator` (that firmware on a pseudo-terminal, real-time or
  lockstep, with :class:`Faults`) and :class:`EmulatorProcess` (in its own process);
* :mod:`~jointlab.hardware.ssl`: the RoboCup SSL :class:`ControlMessage` codec and
  :class:`SSLRobotLink`.

docs/protocol.md specifies the wire protocol; docs/hardware.md explains the rest.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> module. Imported on first use: ``import jointlab.hardware`` stays light.
_EXPORTS = {
    "AppliedCommand": "emulator.queue",
    "ConfigurationRefused": "host.requests",
    "ControlMessage": "ssl.codec",
    "Device": "emulator.device",
    "EmulatedRobot": "host.urls",
    "Emulator": "emulator.emulator",
    "EmulatorProcess": "emulator.process",
    "EmulatorReport": "emulator.faults",
    "Faults": "emulator.faults",
    "Mode": "ssl.codec",
    "SSLRobotLink": "ssl.link",
    "SerialRobot": "host.robot",
    "SerialTransport": "host.transport",
    "ShootMode": "ssl.codec",
    "Team": "ssl.codec",
    "TriggerMode": "ssl.codec",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'jointlab.hardware' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"jointlab.hardware.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
