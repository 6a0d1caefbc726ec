"""Servo traces (:class:`~jointlab.identify.servo.traces.ServoTrace`) from LeRobot datasets.

An episode's ``action`` (the goals sent, degrees) and ``observation.state`` (the positions
read before each action, degrees) are exactly what servo identification needs; every episode
asked for is read and checked (joints of the robot, timestamps, length, motion), and an error
names the dataset, the episode and the joint.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from jointlab.identify.errors import IdentificationError
from jointlab.identify.servo.traces import ServoTrace, check_trace
from jointlab.interop.dataset import DatasetError, check_features, load_episode
from jointlab.robots import RobotDescription

__all__ = ["dataset_traces"]


def dataset_traces(
    root: str | Path, description: RobotDescription, episodes: Sequence[int] | None = None
) -> list[ServoTrace]:
    """The servo traces of ``episodes`` (default: all) of the LeRobot dataset at ``root``.

    Raises:
        IdentificationError: the dataset is another robot's (its joints differ), an episode
            is missing, too short, too still or has timestamps out of order.
    """
    root = Path(root).expanduser()
    try:
        info = check_features(root, description)
    except DatasetError as exc:
        raise IdentificationError(str(exc)) from None
    total = int(info.get("total_episodes", 0))
    chosen = list(range(total)) if episodes is None else [int(e) for e in episodes]
    if not chosen:
        raise IdentificationError(f"{root}: the dataset has no episodes")
    traces = []
    for index in chosen:
        if not 0 <= index < total:
            raise IdentificationError(
                f"{root}: no episode {index}; it has episodes 0 to {total - 1}"
            )
        episode = load_episode(root, index)
        trace = ServoTrace(
            source=f"{root} episode {index}",
            joints=description.joint_names,
            fps=episode.fps,
            time=np.asarray(episode.time, dtype=np.float64),
            goal=episode.target,
            position=episode.position,
        )
        traces.append(check_trace(trace))
    return traces
