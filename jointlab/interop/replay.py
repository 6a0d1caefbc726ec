"""Replay a dataset episode on any backend and measure how well it follows.

The robot is armed (holding its pose) and moved to the episode's first recorded position
(``reset``: a teleport in simulation, a minimum-jerk move on a device); then each frame's
action (its joint targets) is applied for one frame, ``1 / fps`` seconds, i.e. a whole number
of the robot's control periods. The replayed positions at the start of every frame are
compared with the recorded ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError
from jointlab.faults import FaultRule
from jointlab.interface import NJointAction
from jointlab.interop.dataset import Episode
from jointlab.interop.record import frame_periods

__all__ = ["ReplayReport", "replay_episode"]


@dataclass(frozen=True)
class ReplayReport:
    """How a replay followed the recording.

    Attributes:
        joint_names: Joint names.
        replayed: Replayed positions at the start of each frame, ``(n, dof)``, rad.
        recorded: Recorded positions, ``(n, dof)``, rad.
        rms: Root-mean-square of replayed - recorded per joint, ``(dof,)``, rad.
        max: Largest |replayed - recorded| per joint, ``(dof,)``, rad.
    """

    joint_names: tuple[str, ...]
    replayed: np.ndarray
    recorded: np.ndarray
    rms: np.ndarray
    max: np.ndarray

    @property
    def worst(self) -> tuple[str, float]:
        """The joint with the largest error and that error, rad."""
        index = int(np.argmax(self.max))
        return self.joint_names[index], float(self.max[index])


def replay_episode(robot: Robot, episode: Episode, *, disarm: bool = True) -> ReplayReport:
    """Replay ``episode`` on ``robot`` (see the module docstring).

    Args:
        robot: Any backend with the dataset's joints; ``1 / fps`` must be a whole number of
            its control periods.
        episode: From :func:`~jointlab.interop.dataset.load_episode`.
        disarm: Hold, then disarm at the end (a device goes limp as it started).

    Raises:
        ConfigurationError: another joint count, or a frame period the robot cannot step.
        DeviceFault: a device stopped itself; LinkError: the robot stopped answering. Either
            way after :func:`jointlab.faults.stop_after_fault` (held one period, disarmed).
    """
    if episode.position.shape[1] != robot.dof:
        raise ConfigurationError(
            f"episode {episode.index} has {episode.position.shape[1]} joints; robot "
            f"{robot.description.name!r} has {robot.dof}"
        )
    every = frame_periods(episode.fps, robot.control_dt)
    if not robot.read().armed:
        robot.arm()
    start = np.clip(episode.position[0], robot.description.lower, robot.description.upper)
    replayed = np.empty_like(episode.position)
    with FaultRule(robot):  # the robot faulted: hold, disarm, stop with the error
        robot.reset(start, np.zeros(robot.dof))
        for frame, target in enumerate(episode.target):
            replayed[frame] = robot.read().position
            target = np.clip(target, robot.description.lower, robot.description.upper)
            robot.apply(NJointAction.Position(target))
            for _ in range(every):
                robot.step()
    if disarm:
        robot.apply(NJointAction.Position(robot.read().position))
        robot.step()
        robot.disarm()
    error = replayed - episode.position
    return ReplayReport(
        tuple(robot.description.joint_names),
        replayed,
        episode.position.copy(),
        np.sqrt(np.mean(error**2, axis=0)),
        np.max(np.abs(error), axis=0),
    )
