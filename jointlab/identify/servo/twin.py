"""Replaying a recording's goals on the twin: the emulated servo bus of a robot file.

The twin of a servo arm is its robot file run by the emulated servos' firmware (the same
control law, registers and bus as the real servos, :mod:`jointlab.hardware.servo`) in
lockstep (virtual time: the same goals give the same positions, bit for bit). A replay runs
the bus as LeRobot's record loop does, one Sync Write of goals and one Sync Read per frame at
the recording's rate, from the recording's first pose, and returns what the twin reported as
a :class:`~.traces.ServoTrace` of the same frames.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from jointlab.identify.errors import IdentificationError
from jointlab.identify.servo.traces import ServoTrace
from jointlab.robots import RobotDescription, load_robot
from jointlab.robots.schema import description_from_dict
from jointlab.robots.serialize import description_to_dict
from jointlab.robots.yaml_io import dump_yaml

__all__ = ["recording_gains", "replay_on_twin", "twin_description"]


def twin_description(description: RobotDescription, fps: float) -> RobotDescription:
    """``description`` with bus cycles at whole frames of ``fps``.

    One cycle per frame, as LeRobot's loop runs a bus, when every servo runs its own position
    loop; when some servo is in ``current`` mode (the host runs its law each cycle) the
    smallest whole number of cycles per frame that is at least the file's ``bus.rate``.

    Raises:
        IdentificationError: the robot has no ``bus`` section (the twin is its servos).
    """
    if description.bus is None:
        raise IdentificationError(
            f"robot {description.name!r} has no 'bus' section: servo identification needs the "
            "servos it identifies (a Feetech or Dynamixel arm: so101, koch, or your file)"
        )
    data = description_to_dict(description)
    current = any(s.mode.value == "current" for s in description.bus.servos)
    cycles = int(np.ceil(description.bus.rate / fps - 1e-9)) if current else 1
    data["bus"]["rate"] = float(fps * cycles)
    return description_from_dict(data, source=description.source)


def recording_gains(
    description: RobotDescription, p_registers: Sequence[float] | None
) -> tuple[np.ndarray, np.ndarray]:
    """Joint P and D gains (N·m/rad, N·m·s/rad) the servos had while recording.

    Args:
        description: The robot (its bus and transmissions).
        p_registers: The P register of each servo as recorded (None: the robot file's gains,
            which JointLab's own backends write).
    """
    kp = np.asarray(description.default_kp, dtype=np.float64)
    kd = np.asarray(description.default_kd, dtype=np.float64)
    if p_registers is None:
        return kp, kd
    from jointlab.hardware.servo.gains import GainScaling
    from jointlab.hardware.vendors import bus_models

    p = np.asarray(p_registers, dtype=np.float64)
    if p.shape != (description.dof,) or np.any(p <= 0):
        raise IdentificationError(
            f"p_registers: one positive P register per joint {list(description.joint_names)}, "
            f"got {list(p_registers)}"
        )
    _, models = bus_models(description)
    t = description.transmissions
    kp, _ = GainScaling.for_models(models).joint_gains(p, np.zeros_like(p), t.scale, t.torque_ratio)
    return kp, kd


def replay_on_twin(
    description: RobotDescription | str,
    trace: ServoTrace,
    *,
    p_registers: Sequence[float] | None = None,
    seed: int = 0,
) -> ServoTrace:
    """What the twin of ``description`` reports when sent ``trace``'s goals.

    Args:
        description: The robot file to run (nominal or identified).
        trace: The recording whose goals are replayed, from its first recorded pose.
        p_registers: P register of each servo as recorded (default: the file's gains).
        seed: Emulator seed.

    Returns:
        The twin's trace: same goals and times, the twin's positions.
    """
    import jointlab
    from jointlab.interface import NJointAction

    description = twin_description(load_robot(description), trace.fps)
    if tuple(description.joint_names) != tuple(trace.joints):
        raise IdentificationError(
            f"{trace.source}: joints {list(trace.joints)} are not robot "
            f"{description.name!r}'s {list(description.joint_names)}"
        )
    kp, kd = recording_gains(description, p_registers)
    lower, upper = description.lower, description.upper
    positions = np.empty_like(trace.position)
    with tempfile.TemporaryDirectory(prefix="jointlab-twin-") as folder:
        path = Path(folder) / f"{description.name}.yaml"
        path.write_text(dump_yaml(description))
        url = f"emulated://{path}?lockstep=1&seed={seed}&control_dt={1.0 / trace.fps!r}"
        with jointlab.connect(url) as robot:
            robot.emulator.move(np.clip(trace.position[0], lower, upper))
            robot.arm()
            for k in range(len(trace)):
                positions[k] = robot.read().position
                goal = np.clip(trace.goal[k], lower, upper)
                robot.apply(NJointAction.Position(goal, kp=kp, kd=kd))
                robot.step()
            robot.disarm()
    return ServoTrace(
        source=f"the twin of {description.name!r} replaying {trace.source}",
        joints=trace.joints,
        fps=trace.fps,
        time=trace.time.copy(),
        goal=trace.goal.copy(),
        position=positions,
    )
