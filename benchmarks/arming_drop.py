"""What arming does to an arm resting under gravity, on every backend.

Each backend's arm6 (and the SO-101 on its emulated servo bus) is settled at a loaded pose,
disarmed and armed again with no time between, then left without a command for 500 ms, as
an arm is while a program's controller starts. Printed per backend: the largest joint
deviation (mrad) and the time any joint's torque spent at its effort limit (ms). Run it on
two checkouts to compare them (the emulated backends run in lockstep: the figures are
exact, not timings).

    PYTHONPATH=. python benchmarks/arming_drop.py
"""

from __future__ import annotations

import numpy as np

import jointlab
from jointlab.hardware import EmulatorProcess, SerialRobot
from jointlab.interface import NJointAction
from jointlab.sim import SimRobot

PATIENT = {"request_timeout": 2.0, "dead_ms": 8000, "connect_timeout": 15.0}


def loaded_pose(robot) -> np.ndarray:
    d = robot.description
    if d.name == "arm6":
        target = d.home + np.array([0.3, 0.5, -0.6, 0.0, 0.4, 0.0])
    else:
        target = d.home.copy()
        target[1:3] += np.array([0.4, -0.5])
    return np.clip(target, d.lower, d.upper)


def measure(robot, seconds: float = 0.5) -> tuple[float, float]:
    robot.arm()
    robot.apply(NJointAction.Position(loaded_pose(robot)))
    for _ in range(round(1.0 / robot.control_dt)):
        robot.step()
    start = robot.read().position.copy()
    robot.disarm()
    robot.arm()
    limit = robot.description.effort_limit
    deviation, saturated = 0.0, 0
    for _ in range(round(seconds / robot.control_dt)):
        robot.step()
        state = robot.read()
        deviation = max(deviation, float(np.abs(state.position - start).max()))
        saturated += bool((np.abs(state.torque) >= 0.999 * limit).any())
    return deviation * 1e3, saturated * robot.control_dt * 1e3


def main() -> None:
    rows = []
    for engine in ("pybullet", "mujoco"):
        with SimRobot("arm6", engine=engine) as robot:
            rows.append((f"sim://arm6 ({engine})", *measure(robot)))
    with EmulatorProcess("arm6", lockstep=True) as emulator:
        with SerialRobot(emulator.path, "arm6", lockstep=True, **PATIENT) as robot:
            rows.append(("emulated://arm6 (lockstep)", *measure(robot)))
    with jointlab.connect("emulated://so101?lockstep=1") as robot:
        rows.append(("emulated://so101 servo bus (lockstep)", *measure(robot)))
    print(f"{'backend':40} {'largest deviation, mrad':>24} {'saturated, ms':>14}")
    for name, deviation, saturated in rows:
        print(f"{name:40} {deviation:24.2f} {saturated:14.1f}")


if __name__ == "__main__":
    main()
