"""Position-only servo traces: what a LeRobot episode or a JointLab log tells about each servo.

A :class:`ServoTrace` is one recording at its own rate: the goal positions the servos were
sent and the positions they reported, frame by frame. Frame ``k``'s position was read before
frame ``k``'s goal was sent (LeRobot's record loop: observation, then action), so the goal of
frame ``k`` shows from frame ``k + 1`` on. :func:`check_trace` refuses what cannot identify
anything, naming the recording and the joint.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from jointlab.identify.errors import IdentificationError
from jointlab.robots import RobotDescription

__all__ = ["MIN_FRAMES", "MOTION", "ServoTrace", "check_trace", "log_trace", "moving_joints"]

#: Fewest frames a trace needs (two seconds at 30 fps).
MIN_FRAMES = 60
#: Smallest range of goals, rad, for a joint to count as moved (1°).
MOTION = np.radians(1.0)


@dataclass(frozen=True)
class ServoTrace:
    """One recording of a servo arm (arrays in the robot's joint order).

    Attributes:
        source: Where it came from (``DATASET episode 3``, a log path), for messages.
        joints: Joint names, in the robot's order.
        fps: Frames per second (the recording's rate).
        time: Frame timestamps, ``(n,)``, s.
        goal: Goal positions sent at each frame, ``(n, dof)``, rad.
        position: Positions reported at each frame (before its goal), ``(n, dof)``, rad.
    """

    source: str
    joints: tuple[str, ...]
    fps: float
    time: np.ndarray
    goal: np.ndarray
    position: np.ndarray

    def __len__(self) -> int:
        return len(self.time)

    @property
    def frame_dt(self) -> float:
        """Seconds per frame."""
        return 1.0 / self.fps


def check_trace(trace: ServoTrace) -> ServoTrace:
    """``trace``, checked to be identifiable at all.

    Raises:
        IdentificationError: timestamps not increasing at the stated rate, too few frames,
            non-finite values, or no joint that moved (names the recording and the fix).
    """
    where = trace.source
    n = len(trace)
    dof = len(trace.joints)
    for name in ("goal", "position"):
        array = getattr(trace, name)
        if array.shape != (n, dof):
            raise IdentificationError(
                f"{where}: {name} has shape {array.shape}, expected "
                f"({n}, {dof}) for joints {list(trace.joints)}"
            )
        bad = ~np.isfinite(array)
        if bad.any():
            frame, joint = np.argwhere(bad)[0]
            raise IdentificationError(
                f"{where}: {name} of joint {trace.joints[joint]!r} is not finite at frame {frame}"
            )
    if n < MIN_FRAMES:
        raise IdentificationError(
            f"{where}: {n} frames is too short to identify a servo; record at least "
            f"{MIN_FRAMES} frames ({MIN_FRAMES / trace.fps:.1f} s at {trace.fps:g} fps)"
        )
    steps = np.diff(trace.time)
    if not np.all(steps > 0):
        frame = int(np.argmax(~(steps > 0))) + 1
        raise IdentificationError(
            f"{where}: timestamps are not increasing at frame {frame} "
            f"({trace.time[frame - 1]:.4f} s, then {trace.time[frame]:.4f} s): frames were "
            "dropped or reordered; re-record the episode"
        )
    expected = trace.frame_dt
    if np.max(np.abs(steps - expected)) > 0.25 * expected:
        frame = int(np.argmax(np.abs(steps - expected))) + 1
        raise IdentificationError(
            f"{where}: frame {frame} comes {steps[frame - 1]:.4f} s after the one before, not "
            f"1/{trace.fps:g} s: identification needs frames at the recording's rate"
        )
    if not moving_joints(trace).any():
        raise IdentificationError(
            f"{where}: no joint moved (every goal stays within {np.degrees(MOTION):.0f}°): too "
            "still to identify anything; record an episode that moves the joints"
        )
    return trace


def moving_joints(trace: ServoTrace) -> np.ndarray:
    """Mask of the joints whose goal spans at least :data:`MOTION`, ``(dof,)``."""
    span = trace.goal.max(axis=0) - trace.goal.min(axis=0)
    return span >= MOTION


def log_trace(
    path: str | os.PathLike[str], description: RobotDescription, fps: float
) -> ServoTrace:
    """The servo trace of a JointLab log, at ``fps`` frames per second.

    Each logged row holds the goal applied during a control period and the state at its end
    (``Recorder`` in a loop of apply, step, log), so frame ``k``'s position is the state
    logged just before its goal.

    Raises:
        IdentificationError: the log lacks desired or state positions, has other joints, or
            does not identify anything (:func:`check_trace`).
    """
    from jointlab.recording import load_log

    log = load_log(path)
    for key in ("desired.position", "state.position"):
        if key not in log:
            raise IdentificationError(
                f"{path}: the log has no {key!r} column; servo "
                "identification needs goals and positions"
            )
    goal = np.asarray(log["desired.position"], dtype=np.float64)
    state = np.asarray(log["state.position"], dtype=np.float64)
    time = np.asarray(log.time, dtype=np.float64)
    if goal.ndim != 2 or goal.shape[1] != description.dof:
        raise IdentificationError(
            f"{path}: {goal.shape[-1]} joints logged; robot "
            f"{description.name!r} has {description.dof}"
        )
    # The first row at each 1/fps instant (a quarter frame early counts: logged times carry
    # rounding), from the second row on (each frame needs the state logged before it).
    instants = np.arange(time[1], time[-1] + 0.5 / fps, 1.0 / fps) if len(time) > 1 else np.zeros(0)
    rows = np.unique(np.searchsorted(time, instants - 0.25 / fps))
    rows = rows[(rows >= 1) & (rows < len(time))]
    goal = np.where(np.isfinite(goal), goal, state)  # no goal: it held where it was
    trace = ServoTrace(
        source=str(path),
        joints=description.joint_names,
        fps=float(fps),
        time=time[rows],
        goal=goal[rows],
        position=state[rows - 1],
    )
    return check_trace(trace)
