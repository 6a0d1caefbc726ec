"""Range-of-motion calibration, LeRobot's method: a middle pose, then one sweep of every joint.

Two phases on a limp arm (a :class:`~jointlab.hardware.servo_host.robot.ServoBusRobot` connected
without a calibration), each ended by the person once (one Enter per phase, not per joint):

1. **Middle pose.** The person puts every joint in the middle of its range (the middle of the
   robot file's ``min``/``max``). Each servo's Homing Offset register is written so that it
   now reads half a turn (2047 of 4096 ticks): every joint's range then lies inside one turn,
   away from the encoder's wrap. (Feetech: ``present = actual - homing``; Dynamixel:
   ``present = actual + homing``.)
2. **Range of motion.** The person moves every joint through its whole range, to both hard
   stops, while each bus cycle updates the minimum and maximum reading per joint (the CLI
   shows them in a live table). The extremes become the calibrated range and are written to
   the servos' Min/Max Position Limit registers, as LeRobot does.

The joint zero (``offset``, ticks at joint angle 0) comes from *both* ends of the sweep, not
from the placement: the middle of the recorded range is the middle of the file's range, so
a middle pose placed a few degrees off shifts nothing. The direction is the robot file's
transmission sign (reversed by Dynamixel Drive Mode bit 0). A joint whose sweep covered less
than ``min_fraction`` of the file's range is refused, naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.hardware.servo_host.calibration import Calibration, JointCalibration
from jointlab.robots.description import RobotDescription
from jointlab.robots.kinematics import forward_kinematics

__all__ = [
    "RangeTable",
    "calibrate_range_of_motion",
    "half_turn_homing",
    "middle_pose",
    "sweep_poses",
    "write_limits",
]

#: A sweep shorter than this fraction of the robot file's range is refused.
MIN_FRACTION = 0.8
#: Height above the table (world z = 0) that :func:`sweep_poses` keeps every frame at, m.
CLEARANCE = 0.04
#: Values per joint that :func:`sweep_poses` tries for the joints it does not sweep.
GRID = 5


@dataclass(frozen=True)
class RangeTable:
    """What the live table shows during the sweep, per joint (ticks, Present Position).

    Attributes:
        joints: Joint names.
        ids: Servo ids.
        position: Latest reading.
        low: Smallest reading so far.
        high: Largest reading so far.
    """

    joints: tuple[str, ...]
    ids: tuple[int, ...]
    position: tuple[int, ...]
    low: tuple[int, ...]
    high: tuple[int, ...]


def middle_pose(description: RobotDescription) -> np.ndarray:
    """The middle of every joint's range (rad or m): the pose of phase 1."""
    return (np.asarray(description.lower) + np.asarray(description.upper)) / 2.0


def sweep_poses(description: RobotDescription, clearance: float = CLEARANCE) -> list[np.ndarray]:
    """A sweep a person could make: each joint to both ends, the arm kept off the table.

    For each joint and each end of its range, in joint order, the pose with that joint there
    and the others at the middle pose; where that pose would put a joint or tool frame less
    than ``clearance`` above the table (world z = 0; e.g. the SO-101's shoulder at its front
    stop with the elbow at its middle), the others take the nearest values (of ``GRID`` per
    joint) that keep the arm clear, as a person folds the elbow to swing the shoulder. Used
    by the tests' scripted person and the documentation's example.
    """
    middle = middle_pose(description)
    lower, upper = np.asarray(description.lower), np.asarray(description.upper)
    grids = np.linspace(lower, upper, GRID)  # (GRID, dof), the middle in the centre row
    poses = []
    for j in range(description.dof):
        others = [k for k in range(description.dof) if k != j]
        for end in (lower[j], upper[j]):
            pose = middle.copy()
            pose[j] = end
            if _lowest(description, pose[None])[0] < clearance:
                index = np.stack(np.meshgrid(*[range(GRID)] * len(others)), -1)
                index = index.reshape(-1, len(others))
                candidates = np.repeat(pose[None], len(index), axis=0)
                candidates[:, others] = grids[index, others]
                clear = _lowest(description, candidates) >= clearance
                if not clear.any():
                    raise ConfigurationError(
                        f"no pose puts joint {description.joint_names[j]!r} at {end:+.3f} with "
                        f"the arm {clearance} m above the table"
                    )
                cost = np.abs(candidates - middle).sum(axis=1)
                pose = candidates[np.flatnonzero(clear)[np.argmin(cost[clear])]]
            poses.append(pose)
    return poses


def _lowest(description: RobotDescription, q: np.ndarray) -> np.ndarray:
    """Lowest world z of the element and tool frames at poses ``q``, shape ``(batch,)``.

    The first element's frame is left out: it stands on the base, at or near the table.
    """
    kinematics = forward_kinematics(description, q)
    heights = [kinematics.frames[..., 1:, 2, 3].min(axis=-1)]
    heights += [frame[..., 2, 3] for frame in kinematics.tools.values()]
    return np.min(heights, axis=0)


def _feetech(robot: Any, i: int) -> bool:
    return robot.models[i].vendor == "feetech"


def half_turn_homing(robot: Any, i: int, raw: int) -> int:
    """The Homing Offset that makes servo ``i`` read half a turn where it reads ``raw`` at 0."""
    half = (robot.models[i].resolution - 1) // 2
    return int(raw - half) if _feetech(robot, i) else int(half - raw)


def _unlock(robot: Any, i: int, unlocked: bool) -> None:
    """Feetech: clear (or set again) the Lock register so EEPROM writes are kept."""
    if "lock" in robot.models[i].table:
        robot.write_register(i, "lock", 0 if unlocked else 1)


def write_limits(robot: Any, homing: np.ndarray, low: np.ndarray, high: np.ndarray) -> None:
    """Write each servo's Homing Offset and Min/Max Position Limit registers (torque off)."""
    for i in range(robot.description.dof):
        _unlock(robot, i, True)
        robot.write_register(i, "homing_offset", int(homing[i]))
        robot.write_register(i, "min_position_limit", int(low[i]))
        robot.write_register(i, "max_position_limit", int(high[i]))
        _unlock(robot, i, False)


def calibrate_range_of_motion(
    robot: Any,
    middle_placed: Callable[[], object],
    sweep_done: Callable[[], bool],
    show: Callable[[RangeTable], object] | None = None,
    *,
    min_fraction: float = MIN_FRACTION,
) -> Calibration:
    """Calibrate by a middle pose and one sweep of every joint (see the module docstring).

    Args:
        robot: A connected ServoBusRobot (disarmed; it is left limp).
        middle_placed: Returns once the person has put the arm in the middle pose (the CLI
            waits for Enter).
        sweep_done: Polled once per bus cycle during the sweep; True ends it (the CLI: Enter
            was pressed).
        show: Called with the table after every bus cycle of the sweep.
        min_fraction: Smallest accepted sweep, a fraction of the file's range per joint.

    Raises:
        ConfigurationError: a joint's sweep was too short (names it, its servo id and both
            spans); the servos keep the new Homing Offsets but no calibration is returned.
    """
    if robot.armed:
        robot.disarm()
    description = robot.description
    n = description.dof
    every = range(n)
    for i in every:  # LeRobot's reset: no offset, the whole turn allowed
        robot.write_register(i, "torque_enable", 0)
    full = np.array([robot.models[i].resolution - 1 for i in every])
    write_limits(robot, np.zeros(n, dtype=int), np.zeros(n, dtype=int), full)
    drive = np.array(
        [
            robot.read_register(i, "drive_mode") if "drive_mode" in robot.models[i].table else 0
            for i in every
        ]
    )
    middle_placed()
    raw = robot.idle_cycle().extras["ticks"].astype(int)
    homing = np.array([half_turn_homing(robot, i, int(raw[i])) for i in every])
    for i in every:
        _unlock(robot, i, True)
        robot.write_register(i, "homing_offset", int(homing[i]))
        _unlock(robot, i, False)
    ticks = robot.idle_cycle().extras["ticks"].astype(int)
    low, high = ticks.copy(), ticks.copy()
    names, ids = tuple(description.joint_names), tuple(int(v) for v in robot.servo_ids)
    while True:
        if show is not None:
            show(
                RangeTable(
                    names, ids, tuple(ticks.tolist()), tuple(low.tolist()), tuple(high.tolist())
                )
            )
        if sweep_done():
            break
        ticks = robot.idle_cycle().extras["ticks"].astype(int)
        low, high = np.minimum(low, ticks), np.maximum(high, ticks)
    scale = np.abs(description.transmissions.scale)
    expected = scale * (description.upper - description.lower)
    span = high - low
    short = span < min_fraction * expected
    if short.any():
        i = int(np.flatnonzero(short)[0])
        raise ConfigurationError(
            f"joint {names[i]!r} (servo id {ids[i]}) moved through {span[i]} ticks, "
            f"{span[i] / expected[i]:.0%} of the robot file's range [{description.lower[i]}, "
            f"{description.upper[i]}] rad ({expected[i]:.0f} ticks); move every joint to both "
            "of its ends before pressing Enter"
        )
    write_limits(robot, homing, low, high)
    sign = np.sign(description.transmissions.scale) * np.where(drive & 1, -1, 1)
    middle = (description.lower + description.upper) / 2.0
    offset = (low + high) / 2.0 - sign * scale * middle
    joints = tuple(
        JointCalibration(
            joint=names[i],
            id=ids[i],
            offset=float(offset[i]),
            direction=int(sign[i]),
            min_ticks=int(low[i]),
            max_ticks=int(high[i]),
            homing_offset=int(homing[i]),
            drive_mode=int(drive[i]),
        )
        for i in every
    )
    protocol = description.bus.protocol.value
    return Calibration(
        robot=description.name,
        protocol=protocol,
        method="range_of_motion",
        joints=joints,
        created=Calibration.now(),
    )
