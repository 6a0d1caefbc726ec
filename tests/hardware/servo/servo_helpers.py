"""Helpers of the servo-bus tests: emulated buses opened with the vendors' SDKs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jointlab.hardware.servo_emulator.emulator_process import BusEmulatorProcess

#: Extra status timeout (ms) for SDK calls against an emulator on a loaded machine.
PATIENT_MS = 1000.0


@contextmanager
def emulated_bus(robot: str, **options: Any) -> Iterator[BusEmulatorProcess]:
    """An emulated servo bus process that is always stopped, and checked to be gone."""
    emulator = BusEmulatorProcess(robot, **options)
    try:
        yield emulator
    finally:
        emulator.close()
        assert not emulator.alive


@contextmanager
def sdk_port(sdk: Any, path: str, baud: int = 1_000_000) -> Iterator[Any]:
    """The vendor SDK's PortHandler on ``path``, patient with a loaded machine."""

    class Patient(sdk.PortHandler):  # type: ignore[misc, name-defined]
        def setPacketTimeout(self, packet_length: int) -> None:
            super().setPacketTimeout(packet_length)
            self.packet_timeout += PATIENT_MS

    port = Patient(path)
    assert port.openPort() and port.setBaudRate(baud)
    try:
        yield port
    finally:
        port.closePort()
