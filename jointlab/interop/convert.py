"""Convert between JointLab logs and LeRobot datasets, both ways.

* :func:`logs_to_dataset`: each JointLab log (``jointlab run``/``demo``/``record`` and
  :class:`~jointlab.recording.Recorder` output) becomes one episode. A frame is taken every
  ``1 / fps`` seconds of log time: the logged state and the desired joint positions (the
  measured position where the desired action had none, e.g. a torque action). Cameras are
  rendered from the logged positions on a simulated twin of the robot.
* :func:`episode_to_log`: one dataset episode becomes a JointLab log (``desired``: position
  actions of its targets; ``state``: its positions, velocities and efforts), which
  ``jointlab replay``, ``jointlab plot`` and the identification tools read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.interface import ArrayState, NJointAction
from jointlab.interop.cameras import SimCamera
from jointlab.interop.dataset import DatasetWriter, load_episode
from jointlab.interop.record import DatasetRecorder
from jointlab.robots import RobotDescription, load_robot

__all__ = ["episode_to_log", "logs_to_dataset", "measured_state", "record_policy"]


def _log_frames(log: object, description: RobotDescription, fps: float) -> list[int]:
    """Rows of ``log`` at each ``1 / fps`` instant from its first row.

    A row a quarter frame early counts (logged times carry rounding).
    """
    time = np.asarray(log.time, dtype=np.float64)  # type: ignore[attr-defined]
    if len(time) == 0:
        return []
    instants = np.arange(time[0], time[-1] + 0.5 / fps, 1.0 / fps)
    rows = np.searchsorted(time, instants - 0.25 / fps)  # the first row at each instant
    return sorted(set(int(r) for r in rows if r < len(time)))


def logs_to_dataset(
    logs: Sequence[str | Path],
    root: str | Path,
    robot: RobotDescription | str,
    task: str,
    fps: float | None = None,
    cameras: Sequence[str] = (),
    size: tuple[int, int] = (128, 96),
) -> int:
    """Write the JointLab ``logs`` as the episodes of a new LeRobot dataset at ``root``.

    Args:
        logs: Log files (one episode each).
        root: The new dataset folder (must not exist).
        robot: The robot the logs were recorded on.
        task: The task text of every episode.
        fps: Frames per second (default: one frame per logged period of the first log).
        cameras: Camera names rendered on a simulated twin.
        size: Image (width, height), pixels.

    Returns:
        Episodes written.

    Raises:
        ConfigurationError: a log of another joint count, or without states.
    """
    from jointlab.recording import load_log

    description = load_robot(robot)
    loaded = [load_log(path) for path in logs]
    if not loaded:
        raise ConfigurationError("no logs to convert")
    for log in loaded:
        key = "state.position"
        if key not in log:
            raise ConfigurationError(
                f"{log.source}: no {key} channel; it holds {list(log.channels)}"
            )
        if np.asarray(log[key]).reshape(len(log), -1).shape[1] != description.dof:
            raise ConfigurationError(
                f"{log.source}: its states have another joint count than robot "
                f"{description.name!r} ({description.dof} joints)"
            )
    if fps is None:
        period = loaded[0].metadata.dt
        if not period:
            raise ConfigurationError(f"{loaded[0].source}: no period in its metadata; give fps")
        fps = 1.0 / period
    sources = [SimCamera(name, description, *size) for name in cameras]
    try:
        sizes = {c.name: (c.height, c.width) for c in sources}
        origin = f"converted from {len(loaded)} JointLab log(s)"
        with DatasetWriter(root, description, fps, sizes, url=origin) as writer:
            for log in loaded:
                recorder = DatasetRecorder(writer, task, sources)
                for row in _log_frames(log, description, fps):
                    state = _state(log, row, description.dof)
                    target = state.position.copy()
                    if "desired.position" in log:
                        desired = np.asarray(log["desired.position"][row], dtype=np.float64)
                        target[np.isfinite(desired)] = desired[np.isfinite(desired)]
                    recorder.frame(state, target)
                writer.save_episode()
    finally:
        for source in sources:
            source.close()
    return len(loaded)


def measured_state(
    time: float, position: np.ndarray, velocity: np.ndarray, torque: np.ndarray
) -> ArrayState:
    """A recorded state (no acceleration or current: zeros), armed and powered."""
    dof = len(position)
    return ArrayState(
        time=float(time),
        position=np.asarray(position, dtype=np.float64),
        velocity=np.asarray(velocity, dtype=np.float64),
        acceleration=np.zeros(dof),
        torque=np.asarray(torque, dtype=np.float64),
        current=np.zeros(dof),
        actuator_state=np.ones(dof, dtype=np.uint8),
        motor_power=True,
        armed=True,
    )


def _state(log: object, row: int, dof: int) -> ArrayState:
    def field(name: str) -> np.ndarray:
        key = f"state.{name}"
        if key not in log:  # type: ignore[operator]
            return np.zeros(dof)
        return np.nan_to_num(np.asarray(log[key][row], dtype=np.float64))  # type: ignore[index]

    time = float(log.time[row])  # type: ignore[attr-defined]
    return measured_state(time, field("position"), field("velocity"), field("torque"))


def episode_to_log(
    root: str | Path, episode: int, path: str | Path, robot: RobotDescription | str | None = None
) -> Path:
    """Write episode ``episode`` of the dataset at ``root`` as a JointLab log at ``path``.

    Args:
        root: A LeRobot dataset folder.
        episode: Episode index.
        path: The log file (``.npz``, ``.csv`` or ``.parquet``).
        robot: When given, the dataset's joints must be this robot's.

    Returns:
        The log's path.
    """
    from jointlab.recording import LogMetadata, Recorder

    description = None if robot is None else load_robot(robot)
    data = load_episode(root, episode, description)
    extra = {"dataset": str(root), "episode": int(episode), "task": data.task}
    if description is not None:
        metadata = LogMetadata.from_description(description, dt=1.0 / data.fps, **extra)
    else:
        metadata = LogMetadata(dt=1.0 / data.fps, extra=extra)
    with Recorder(path, metadata=metadata) as recorder:
        for k in range(len(data)):
            state = measured_state(
                data.time[k],
                data.position[k],
                np.nan_to_num(data.velocity[k]),
                np.nan_to_num(data.effort[k]),
            )
            recorder.log(
                float(data.time[k]), desired=NJointAction.Position(data.target[k]), state=state
            )
    return Path(path)


def record_policy(
    policy: Any,
    url: str,
    root: str | Path,
    task: str,
    episodes: int,
    *,
    seed: int = 0,
    env_id: str | None = None,
    env_kwargs: dict | None = None,
    fps: float | None = None,
    cameras: Sequence[str] = (),
) -> int:
    """Record ``episodes`` episodes of a trained ``policy`` on ``url`` (seeds ``seed``, ...).

    Each episode runs as ``jointlab record`` runs one (:func:`jointlab.envs.episodes.
    record_episode`, a JointLab log), then the logs become the dataset's episodes
    (:func:`~jointlab.interop.convert.logs_to_dataset`; cameras rendered on a twin).

    Returns:
        Episodes written.
    """
    import tempfile

    from jointlab.envs.episodes import record_episode
    from jointlab.interop.dataset import check_new_folder
    from jointlab.recording import load_log
    from jointlab.robots import load_robot

    check_new_folder(Path(root).expanduser())
    with tempfile.TemporaryDirectory(prefix="jointlab-policy-") as folder:
        logs = []
        for k in range(episodes):
            path = Path(folder) / f"episode{k}.npz"
            record_episode(policy, url, path, env_id=env_id, env_kwargs=env_kwargs, seed=seed + k)
            logs.append(path)
        robot = load_log(logs[0]).metadata.robot
        return logs_to_dataset(logs, root, load_robot(robot), task, fps, cameras)
