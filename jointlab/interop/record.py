"""Record LeRobot datasets: from a leader arm, from a Commander program, from any loop.

* :func:`record_teleop`: a :class:`~jointlab.teleop.Teleop` loop (leader -> follower) per
  episode, one dataset frame every ``frame_periods`` follower periods;
* :func:`record_program`: a command program (the Commander) per episode, from home;
* :class:`DatasetRecorder`: the adapter behind both, a recorder in the sense of
  :func:`jointlab.controllers.run` (``log(time, desired=..., state=...)``), so any loop that
  takes a recorder writes dataset frames.

A frame holds the state at the start of its first period and the joint targets applied from
then on (the action a policy must learn to output for that observation); images are grabbed
from the cameras at the same moment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.contract import Robot
from jointlab.errors import ConfigurationError
from jointlab.interface import ArrayState, NJointAction
from jointlab.interop.cameras import CameraSource
from jointlab.interop.dataset import DatasetWriter

__all__ = ["DatasetRecorder", "frame_periods", "record_program", "record_teleop"]


def frame_periods(fps: float, control_dt: float) -> int:
    """Follower periods per dataset frame: ``1 / fps`` as a whole number of ``control_dt``.

    Raises:
        ConfigurationError: ``1 / fps`` is not a whole multiple of ``control_dt``.
    """
    ratio = 1.0 / (float(fps) * float(control_dt))
    if round(ratio) < 1 or abs(ratio - round(ratio)) > 1e-6:
        raise ConfigurationError(
            f"--fps {fps:g}: a frame every {1 / fps:g} s is not a whole number of the "
            f"follower's {control_dt:g} s periods; pick fps = 1 / (k x {control_dt:g} s), "
            f"e.g. {1 / (max(1, round(ratio)) * control_dt):g}"
        )
    return round(ratio)


class DatasetRecorder:
    """Writes every ``every``-th logged period as a dataset frame (see the module docstring).

    Args:
        writer: The dataset.
        task: The episode's task text.
        cameras: Cameras grabbed at each frame.
        every: Periods per frame.
    """

    def __init__(
        self, writer: DatasetWriter, task: str, cameras: Sequence[CameraSource] = (), every: int = 1
    ) -> None:
        self.writer, self.task, self.cameras, self.every = writer, task, list(cameras), every
        self.count = 0
        self.frames = 0

    def frame(self, state: ArrayState, target: np.ndarray) -> None:
        """Write one frame now: ``state`` and the targets ``(dof,)`` rad applied from it."""
        images = {camera.name: camera.grab(state) for camera in self.cameras}
        self.writer.add_frame(state, target, self.task, images)
        self.frames += 1

    def log(
        self,
        time: float,
        /,
        *,
        state: ArrayState | None = None,
        desired: NJointAction | None = None,
        **others: Any,
    ) -> None:
        """A loop's period: a frame every ``every`` periods (targets: desired positions)."""
        del time, others
        if state is None:
            return
        if self.count % self.every == 0:
            target = np.array(state.position, dtype=np.float64)
            if desired is not None:
                given = np.isfinite(desired.position)
                target[given] = desired.position[given]
            self.frame(state, target)
        self.count += 1

    def event(self, *args: Any, **kwargs: Any) -> None:
        """Commander events are not part of a dataset."""


def record_teleop(
    writer: DatasetWriter,
    teleop: Any,
    task: str,
    episodes: int,
    frames: int,
    cameras: Sequence[CameraSource] = (),
    every: int = 1,
    between: Callable[[int], None] | None = None,
    on_frame: Callable[[int, int, Any], None] | None = None,
) -> int:
    """Record ``episodes`` episodes of ``frames`` frames of a teleoperation loop.

    Args:
        writer: The dataset.
        teleop: A :class:`~jointlab.teleop.Teleop`.
        task: The task text.
        episodes: Episodes to record.
        frames: Frames per episode.
        cameras: Cameras.
        every: Follower periods per frame (:func:`frame_periods`).
        between: Called with the next episode's index before each episode after the first
            (a person resets the scene; the follower is disarmed meanwhile).
        on_frame: Called with ``(episode, frame, sample)`` after each frame.

    Returns:
        Episodes saved. Ctrl-C, a lost link or a faulting servo ends the recording: the
        episode in progress is dropped, the saved ones are kept, and the follower holds,
        then disarms; a fault or a lost link is then raised (the command exits non-zero).
    """
    from jointlab.faults import FAULTS, stop_after_fault

    recorder = DatasetRecorder(writer, task, cameras, every)
    saved = 0
    try:
        for episode in range(episodes):
            if episode and between is not None:
                between(episode)
            teleop.start()
            for frame in range(frames):
                first = teleop.step()
                recorder.frame(first.state, first.target)
                for _ in range(every - 1):
                    teleop.step()
                if on_frame is not None:
                    on_frame(episode, frame, first)
            writer.save_episode()
            saved += 1
            fault = teleop.stop()
            if fault is not None:  # it faulted while holding (the rule was followed)
                raise fault
    except FAULTS as exc:  # a servo faulted or the link died: keep what was saved, stop with it
        stop_after_fault(teleop.follower, exc)  # the one rule (done already if in stop())
        writer.discard_episode()
        raise
    except KeyboardInterrupt:
        writer.discard_episode()
        if saved == 0:
            raise
    finally:
        teleop.stop()
    return saved


def record_program(
    writer: DatasetWriter,
    robot: Robot,
    program: str | Path | Sequence[Any],
    task: str,
    episodes: int,
    cameras: Sequence[CameraSource] = (),
    every: int = 1,
) -> int:
    """Record ``episodes`` runs of a command program (each from home) on ``robot``.

    Returns:
        Episodes saved.
    """
    from jointlab.faults import FAULTS
    from jointlab.program import load_program, run_program

    steps = load_program(program)
    for _ in range(episodes):
        if not robot.read().armed:
            robot.arm()
        robot.reset()
        recorder = DatasetRecorder(writer, task, cameras, every)
        try:
            run_program(robot, steps, recorder=recorder)
        except FAULTS:  # run() already held and disarmed the robot
            writer.discard_episode()
            raise
        writer.save_episode()
    return episodes
