"""Helpers of the servo-bus tests: emulated buses opened with the vendors' SDKs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from jointlab.hardware.servo_emulator.emulator_process import BusEmulatorProcess
from jointlab.robots import load_robot, with_limits

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


def wait_servo_time(emulator: BusEmulatorProcess, seconds: float) -> None:
    """Until the servos ran ``seconds`` of their own 1 kHz ticks (the reports are not on the
    bus). A wall-clock sleep raced the emulator: descheduled meanwhile, it ticks less."""
    start = emulator.report().ticks
    while emulator.report().ticks - start < seconds * 1000:
        time.sleep(0.02)


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


def with_cube(name: str):
    """``name`` with a cube between its gripper's jaws: the travel stops half way to its end.

    The gripper's wider side (from its centre to min or max) is cut at its middle: there the
    jaw meets the cube (a hard stop, as the simulator enforces joint limits). Returns the
    emulated arm's description, the stop (rad), the pose with the jaw on the cube and the
    closed position the host commands (the original end, beyond the cube).
    """
    description = load_robot(name)
    g = description.joint_names.index("gripper")
    centre = description.actuators[g].centre
    lower, upper = description.lower.copy(), description.upper.copy()
    pose = np.zeros(description.dof)
    if centre - lower[g] > upper[g] - centre:
        closed, stop = lower[g], centre - 0.5 * (centre - lower[g])
        lower[g] = stop
        cube = with_limits(description, min_position=lower)
    else:
        closed, stop = upper[g], centre + 0.5 * (upper[g] - centre)
        upper[g] = stop
        cube = with_limits(description, max_position=upper)
    pose[g] = stop
    return cube, float(stop), pose, float(closed)
