"""Helpers of the serial-backend tests: emulator processes and robots that clean up.

The emulator runs in real time (1 kHz), so every test here is a few hundred milliseconds at
most. Timeouts are generous (a loaded 2-core machine must not fail them); what a test checks
is measured in device time (tick counts) wherever possible, never as a wall-clock bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from jointlab.hardware import EmulatorProcess, Faults, SerialRobot
from jointlab.interface import NJointAction

#: Options that keep a test robot from declaring the link dead on a busy machine.
PATIENT = {"request_timeout": 1.0, "dead_ms": 5000, "connect_timeout": 10.0}


@contextmanager
def emulator_process(robot: str = "arm6", **options: Any) -> Iterator[EmulatorProcess]:
    """An emulator process that is always stopped, and checked to be gone."""
    emulator = EmulatorProcess(robot, **options)
    try:
        yield emulator
    finally:
        emulator.close()
        assert not emulator.alive, f"emulator process {emulator.pid} survived close()"


@contextmanager
def serial_robot(
    emulator: EmulatorProcess, robot: str = "arm6", **options: Any
) -> Iterator[SerialRobot]:
    """A SerialRobot on a freshly reset emulator, closed afterwards."""
    emulator.reset()
    emulator.set_faults(Faults())
    settings = {**PATIENT, **options}
    with SerialRobot(emulator.path, robot, **settings) as robot_:
        yield robot_


def hold(robot: Any, steps: int, position: np.ndarray | None = None) -> None:
    """Hold ``position`` (default: home) for ``steps`` control periods."""
    target = robot.description.home if position is None else position
    action = NJointAction.Position(target)
    for _ in range(steps):
        robot.apply(action)
        robot.step()


def step_until(robot: Any, predicate: Any, max_steps: int = 2000) -> Any:
    """Step until ``predicate(robot.read())`` holds; return that state (or fail)."""
    for _ in range(max_steps):
        robot.step()
        state = robot.read()
        if predicate(state):
            return state
    raise AssertionError(f"condition not met within {max_steps} steps")
