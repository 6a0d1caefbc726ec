"""Serial hardware backend: wire protocol, SSL ControlMessage, SerialRobot, device emulator.

Layers, bottom up (pyserial's ``serial.threaded`` model):

* :mod:`~jointlab.hardware.transport`: a pyserial port, a write lock, a reader thread;
* :mod:`~jointlab.hardware.protocol`: frames (COBS, CRC) and typed messages;
* :mod:`~jointlab.hardware.host_link`: replies matched to requests, the latest state;
* :class:`SerialRobot`: the :class:`~jointlab.interface.Robot` interface on a device.

The device side: :class:`Device` (firmware logic around a ``SimRobot``), :class:`Emulator`
(that firmware on a pseudo-terminal at 1 kHz, with :class:`Faults`) and
:class:`EmulatorProcess` (the emulator in its own process). :class:`SSLRobotLink` drives the
``ssl_robot`` description from RoboCup SSL :class:`ControlMessage` commands.
docs/protocol.md specifies the wire protocol; docs/hardware.md explains the rest.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> module. Imported on first use: ``import jointlab.hardware`` stays light, and
#: ``python -m jointlab.hardware.emulator`` does not import the emulator twice.
_EXPORTS = {
    "AppliedCommand": "device",
    "ConfigurationRefused": "serial_robot",
    "ControlMessage": "ssl",
    "Device": "device",
    "EmulatedRobot": "urls",
    "Emulator": "emulator",
    "EmulatorProcess": "emulator",
    "EmulatorReport": "faults",
    "Faults": "faults",
    "Mode": "ssl",
    "SSLRobotLink": "ssl_link",
    "SerialRobot": "serial_robot",
    "SerialTransport": "transport",
    "ShootMode": "ssl",
    "Team": "ssl",
    "TriggerMode": "ssl",
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
