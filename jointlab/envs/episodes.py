"""Record one episode of a policy: every action, state and reward, tick by tick.

The log has one row per environment step, like :func:`jointlab.controllers.run` writes:
the state at the start of the step (``state``), the :class:`~jointlab.interface.NJointAction`
the environment sent for it (``desired``), the torque the robot applied during it
(``applied``) and the step's reward (``episode.reward``). Its metadata holds the control
period, the environment id, the seed and the task's goal, so
:func:`jointlab.recording.replay.replay` can apply the same actions on another backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from jointlab.contract import Robot
from jointlab.interface import NJointAction
from jointlab.recording import LogMetadata, Recorder

from .evaluation import Policy, policy_env

__all__ = ["EpisodeRecord", "record_episode"]


@dataclass(frozen=True)
class EpisodeRecord:
    """What :func:`record_episode` recorded."""

    #: The log file.
    path: Path
    #: Environment id.
    env_id: str
    #: Undiscounted return.
    episode_return: float
    #: ``info["is_success"]`` at the last step.
    success: bool
    #: Environment steps.
    steps: int


def record_episode(
    policy: Policy | str | Path,
    backend: str | Robot,
    path: str | Path,
    *,
    env_id: str | None = None,
    env_kwargs: dict[str, Any] | None = None,
    seed: int = 0,
    video_folder: str | Path | None = None,
) -> EpisodeRecord:
    """Run one episode of ``policy`` on ``backend`` and log it to ``path`` (CSV/NPZ/Parquet).

    Arguments as :func:`jointlab.envs.evaluation.evaluate_policy`; ``seed`` seeds the reset.
    """
    with policy_env(
        policy, backend, env_id=env_id, env_kwargs=env_kwargs, video_folder=video_folder
    ) as opened:
        env, robot = opened.env, opened.robot
        adapter = env.unwrapped.actions  # type: ignore[attr-defined]
        observation, _ = env.reset(seed=seed)
        opened.policy.begin(observation, env)
        goal = getattr(env.unwrapped, "task", None)
        extra = {"env_id": opened.env_id, "backend": opened.backend, "seed": seed}
        if goal is not None and np.size(getattr(goal, "goal", [])) == 3:
            extra["goal"] = np.asarray(goal.goal).tolist()
        metadata = LogMetadata.from_robot(robot, **extra)
        state = robot.read()
        total, steps, done, info = 0.0, 0, False, {}
        with Recorder(path, metadata=metadata) as recorder:
            while not done:
                action = opened.policy.act(observation)
                sent = adapter.to_njoint(action).action
                observation, reward, terminated, truncated, info = env.step(action)
                opened.policy.record(observation, float(reward), terminated, truncated)
                following = robot.read()
                recorder.log(
                    state.time,
                    desired=sent,
                    state=state,
                    applied=NJointAction.Torque(following.torque),
                    episode={"reward": float(reward)},
                )
                state = following
                total, steps, done = total + float(reward), steps + 1, terminated or truncated
    return EpisodeRecord(Path(path), opened.env_id, total, bool(info.get("is_success")), steps)
