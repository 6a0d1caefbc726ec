"""What ``jointlab train`` logs while it trains: TensorBoard scalars and periodic evaluations.

Stable-Baselines3's logger writes the TensorBoard event files (``tensorboard --logdir
RUN/tensorboard``). PPO itself logs, at every rollout, ``rollout/ep_rew_mean``,
``rollout/ep_len_mean`` and ``rollout/success_rate`` (training episodes, exploration noise
on) and the losses ``train/loss``, ``train/policy_gradient_loss``, ``train/value_loss``,
``train/entropy_loss``, ``train/approx_kl``, ``train/clip_fraction``. :class:`Evaluator`
adds ``eval/success_rate``, ``eval/mean_reward`` and ``eval/mean_ep_length``: the
deterministic policy on a separate environment, the same seeded episodes every time, so
the points of the learning curve compare like with like. Every scalar's step is the number
of environment steps trained. Needs the ``rl`` extra (stable-baselines3, tensorboard).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.logger import Logger, TensorBoardOutputFormat

from jointlab.envs.run_record import Evaluation

__all__ = ["EVAL_TAGS", "Evaluator", "tensorboard_logger"]

#: The scalars :class:`Evaluator` adds to the TensorBoard log.
EVAL_TAGS = ("eval/success_rate", "eval/mean_reward", "eval/mean_ep_length")


def tensorboard_logger(folder: str | Path) -> Logger:
    """An SB3 logger that writes TensorBoard event files into ``folder`` (made if missing)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return Logger(folder=str(folder), output_formats=[TensorBoardOutputFormat(str(folder))])


class Evaluator(BaseCallback):
    """Evaluate every ``every`` environment steps and once after the last one.

    Args:
        eval_env: A one-environment ``VecNormalize`` (its observation statistics are copied
            from the training environment before each evaluation; it neither updates them
            nor normalises rewards).
        every: Environment steps between evaluations (all copies together).
        episodes: Episodes per evaluation.
        seed: Seed of each evaluation's first reset (the same episodes every time).
    """

    def __init__(self, eval_env: Any, every: int, episodes: int, seed: int) -> None:
        super().__init__()
        eval_env.training = False
        eval_env.norm_reward = False
        self.eval_env = eval_env
        self.every = int(every)
        self.episodes = int(episodes)
        self.seed = int(seed)
        #: The evaluations so far, in training order.
        self.evaluations: list[Evaluation] = []
        self._next = self.every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self._next:
            self.evaluate()
            self._next = (self.num_timesteps // self.every + 1) * self.every
        return True

    def _on_training_end(self) -> None:
        if not self.evaluations or self.evaluations[-1].steps != self.num_timesteps:
            self.evaluate()
        # PPO dumps a rollout's losses with the next rollout's statistics: write the last
        # update's now, or a run of one rollout would have none.
        self.logger.dump(self.num_timesteps)

    def evaluate(self) -> Evaluation:
        """Run the episodes now, log the scalars at the present step and keep the result."""
        normalised = self.model.get_vec_normalize_env()
        if normalised is not None:  # the wrappers below differ, so not sync_envs_normalization
            self.eval_env.obs_rms = copy.deepcopy(normalised.obs_rms)
        self.eval_env.seed(self.seed)
        successes: list[bool] = []

        def _collect(local: dict[str, Any], _: dict[str, Any]) -> None:
            if local["done"]:
                successes.append(bool(local["info"].get("is_success", False)))

        returns, lengths = evaluate_policy(
            self.model,
            self.eval_env,
            self.episodes,
            deterministic=True,
            return_episode_rewards=True,
            callback=_collect,
        )
        result = Evaluation(
            steps=int(self.num_timesteps),
            episodes=len(returns),
            success_rate=float(np.mean(successes)) if successes else 0.0,
            mean_reward=float(np.mean(returns)),
            mean_length=float(np.mean(lengths)),
        )
        self.evaluations.append(result)
        for tag, value in zip(
            EVAL_TAGS, (result.success_rate, result.mean_reward, result.mean_length), strict=True
        ):
            self.logger.record(tag, value)
        self.logger.dump(self.num_timesteps)
        return result
