"""Baselines: TQC (or SAC) with Hindsight Experience Replay on the manipulation tasks.

:func:`train_her` trains Stable-Baselines3's off-policy learner with its ``HerReplayBuffer``
(``future`` goals, 4 per transition) on one environment, evaluates the greedy policy every
``eval_every`` steps on ``eval_episodes`` fixed seeds, and writes the model and the learning
curve (``curve.csv``: steps, wall seconds, success rate) into a folder. The
hyperparameters follow rl-baselines3-zoo's panda-gym TQC+HER set (gamma 0.95, tau 0.05,
learning rate 1e-3), with smaller networks and batches for a CPU. Needs the ``rl`` extra
(stable-baselines3, sb3-contrib for TQC, torch).
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from jointlab.extras import require

from ..statistics import Rate, success_rate

__all__ = ["HER_SETTINGS", "TrainedBaseline", "evaluate_success", "train_her"]

#: Learner settings (rl-baselines3-zoo's panda-gym TQC+HER, scaled to a CPU).
HER_SETTINGS: dict[str, Any] = {
    "buffer_size": 1_000_000,
    "batch_size": 256,
    "gamma": 0.95,
    "learning_rate": 1e-3,
    "tau": 0.05,
    "learning_starts": 1000,
}
#: Network width per layer (three layers).
NET_WIDTH = 256


@dataclass(frozen=True)
class TrainedBaseline:
    """What :func:`train_her` wrote."""

    folder: Path
    steps: int
    seconds: float
    final: Rate


def evaluate_success(
    policy: Callable[[dict[str, np.ndarray]], np.ndarray], env: Any, seeds: range | list[int]
) -> np.ndarray:
    """Outcomes (``is_success`` at each episode's last step) of ``policy`` on ``seeds``."""
    outcomes = []
    for seed in seeds:
        observation, info = env.reset(seed=int(seed))
        if hasattr(policy, "reset"):
            policy.reset()
        done = False
        while not done:
            observation, _, terminated, truncated, info = env.step(policy(observation))
            done = terminated or truncated
        outcomes.append(bool(info["is_success"]))
    return np.array(outcomes, dtype=bool)


def _learner(algorithm: str) -> Any:
    if algorithm == "tqc":
        require("rl", "TQC baselines", "sb3_contrib")
        from sb3_contrib import TQC

        return TQC
    require("rl", "SAC baselines", "stable_baselines3")
    from stable_baselines3 import SAC

    return SAC


def train_her(
    env_id: str,
    folder: str | Path,
    *,
    steps: int = 100_000,
    algorithm: str = "tqc",
    seed: int = 0,
    eval_every: int = 5000,
    eval_episodes: int = 50,
    env_kwargs: dict[str, Any] | None = None,
    log: Callable[[str], None] = print,
) -> TrainedBaseline:
    """Train ``algorithm`` + HER on ``env_id``; write ``model.zip`` and ``curve.csv``.

    Args:
        env_id: A manipulation id (``jointlab/Lift-v0``...).
        folder: Output folder (created).
        steps: Environment steps.
        algorithm: ``"tqc"`` (sb3-contrib) or ``"sac"``.
        seed: Seed of the learner and the training environment.
        eval_every: Steps between evaluations.
        eval_episodes: Evaluation episodes (seeds 10**6 onwards, never trained on).
        env_kwargs: Keywords of the environment (``engine="mujoco"``...).
        log: Where progress lines go.
    """
    require("rl", "HER baselines", "stable_baselines3", "torch")
    import torch
    from stable_baselines3 import HerReplayBuffer

    torch.set_num_threads(1)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    kwargs = dict(env_kwargs or {})
    env = gymnasium.make(env_id, **kwargs)
    eval_env = gymnasium.make(env_id, **kwargs)
    learner = _learner(algorithm)
    policy_kwargs: dict[str, Any] = {"net_arch": [NET_WIDTH] * 3}
    if algorithm == "tqc":
        policy_kwargs["n_critics"] = 2
    settings = {**HER_SETTINGS, "buffer_size": min(HER_SETTINGS["buffer_size"], steps)}
    model = learner(
        "MultiInputPolicy",
        env,
        replay_buffer_class=HerReplayBuffer,
        replay_buffer_kwargs={"goal_selection_strategy": "future", "n_sampled_goal": 4},
        policy_kwargs=policy_kwargs,
        seed=seed,
        device="cpu",
        verbose=0,
        **settings,
    )
    seeds = range(10**6, 10**6 + eval_episodes)

    def greedy(observation: dict[str, np.ndarray]) -> np.ndarray:
        return model.predict(observation, deterministic=True)[0]

    start = time.perf_counter()
    rows = []
    done = 0
    rate = success_rate(np.zeros(0, dtype=bool))
    with open(folder / "curve.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["steps", "seconds", "success", "low", "high"])
        while done < steps:
            chunk = min(eval_every, steps - done)
            model.learn(total_timesteps=chunk, reset_num_timesteps=False)
            done += chunk
            rate = success_rate(evaluate_success(greedy, eval_env, seeds))
            seconds = time.perf_counter() - start
            rows.append((done, seconds, rate.value, rate.low, rate.high))
            writer.writerow(rows[-1])
            handle.flush()
            log(f"{env_id} {algorithm}+HER {done} steps {seconds:.0f} s: success {rate}")
            model.save(folder / "model.zip")
    env.close()
    eval_env.close()
    return TrainedBaseline(folder, done, time.perf_counter() - start, rate)
