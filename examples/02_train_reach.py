"""Train PPO (Stable-Baselines3) on jointlab/Reach-v0 in position mode (arm6, so101 or koch).

Needs the ``rl`` extra (``pip install -e .[rl]``). Trains for ``--steps`` environment steps
on ``--envs`` parallel environments, evaluates the deterministic policy on 100 fresh episodes
(success = tool within 5 cm of the target at the end of the episode) and writes a learning
curve (success rate and mean return against environment steps) to ``--out``::

    python examples/02_train_reach.py --steps 300000 --out /tmp/reach_ppo
    python examples/02_train_reach.py --robot so101 --steps 300000 --out /tmp/reach_so101

The trained model and the observation statistics are saved in the output folder too; they
are results, not source, so keep them out of the repository.

The environments are stepped by JointLab's ``AsyncBatchedEnv`` (two worker processes) by
default; ``--vector dummy`` (SB3's ``DummyVecEnv``) or ``batched`` give the same episodes
(bit-identical observations), so the same learning curve, later. ``--epochs`` sets PPO's
passes over each rollout (5; the earlier default was 10). ``--stop-at 0.9`` ends training
at the first curve point with 90 % success and reports the training wall time it took
(evaluations excluded); ``benchmarks/vector_env.py --ppo`` runs that for the earlier
default (``--vector dummy --epochs 10``) and the current one and compares them.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import gymnasium
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import (
    VecEnv,
    VecNormalize,
)

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs.training import (
    DEFAULT_VECTOR,
    N_EPOCHS,
    VECTOR_KINDS,
    make_ppo,
    make_training_env,
)

ENV_ID = "jointlab/Reach-v0"
ENV_KWARGS = {"robot": "arm6", "action_mode": "position"}


def evaluate(model: PPO, stats: VecNormalize, episodes: int, seed: int) -> dict[str, float]:
    """Success rate and mean return of the deterministic policy over ``episodes`` episodes."""
    env = gymnasium.make(ENV_ID, **ENV_KWARGS)  # ENV_KWARGS["robot"] is set by main()
    successes, returns, distances = [], [], []
    for episode in range(episodes):
        observation, _ = env.reset(seed=seed + episode)
        total, done, info = 0.0, False, {}
        while not done:
            normalised = stats.normalize_obs(observation[None])
            action, _ = model.predict(normalised, deterministic=True)
            observation, reward, terminated, truncated, info = env.step(action[0])
            total += float(reward)
            done = terminated or truncated
        successes.append(bool(info["is_success"]))
        distances.append(float(info["distance"]))
        returns.append(total)
    env.close()
    return {
        "success_rate": float(np.mean(successes)),
        "mean_return": float(np.mean(returns)),
        "median_final_distance_m": float(np.median(distances)),
    }


class CurveCallback(BaseCallback):
    """Evaluates every ``every`` steps and records the learning curve.

    Each point also records ``train_seconds``: wall-clock time since training started, the
    evaluations excluded. With ``stop_at``, training ends at the first point whose success
    rate reaches it.
    """

    def __init__(self, every: int, episodes: int, stop_at: float | None = None) -> None:
        super().__init__()
        self.every = every
        self.episodes = episodes
        self.stop_at = stop_at
        self.next = every
        self.curve: list[dict[str, float]] = []
        self.start = time.perf_counter()
        self.evaluating = 0.0  # seconds spent in evaluations

    def train_seconds(self) -> float:
        """Wall-clock seconds of training so far, evaluations excluded."""
        return time.perf_counter() - self.start - self.evaluating

    def _on_training_start(self) -> None:
        self.start, self.evaluating = time.perf_counter(), 0.0

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            self.next += self.every
            seconds = self.train_seconds()
            begin = time.perf_counter()
            stats = self.model.get_vec_normalize_env()
            result = evaluate(self.model, stats, self.episodes, seed=10_000)
            self.evaluating += time.perf_counter() - begin
            result.update(steps=self.num_timesteps, train_seconds=seconds)
            self.curve.append(result)
            print(
                f"  {self.num_timesteps:>7} steps: success {result['success_rate']:.2f}, "
                f"return {result['mean_return']:.2f}, {seconds / 60:.2f} min",
                flush=True,
            )
            if self.stop_at is not None and result["success_rate"] >= self.stop_at:
                return False
        return True


def make_env(envs: int, seed: int, vector: str) -> VecEnv:
    """``envs`` monitored copies of the env, normalised observations."""
    return make_training_env(ENV_ID, ENV_KWARGS, envs=envs, seed=seed, vector=vector)


def plot(curve: list[dict[str, float]], final: dict[str, float], path: Path) -> None:
    """Success rate and mean return against environment steps, and the final evaluation."""
    steps = [c["steps"] for c in curve]
    fig, left = plt.subplots(figsize=(6, 3.5))
    left.plot(
        steps, [c["success_rate"] for c in curve], "o-", color="tab:blue", label="during training"
    )
    left.plot(
        [final["steps"]],
        [final["success_rate"]],
        "*",
        markersize=14,
        color="tab:red",
        label=f"final ({final['episodes']} new episodes)",
    )
    left.legend(loc="lower right")
    left.set_xlabel("environment steps")
    left.set_ylabel("success rate (deterministic)", color="tab:blue")
    left.set_ylim(0, 1.02)
    right = left.twinx()
    right.plot(steps, [c["mean_return"] for c in curve], "s--", color="tab:orange")
    right.set_ylabel("mean return", color="tab:orange")
    left.set_title(f"PPO on jointlab/Reach-v0 ({ENV_KWARGS['robot']}, position mode)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="arm6", help="arm6, so101, koch or a robot file")
    parser.add_argument("--steps", type=int, default=300_000, help="environment steps")
    parser.add_argument("--envs", type=int, default=8, help="parallel environments")
    parser.add_argument("--subprocess", action="store_true", help="use SubprocVecEnv")
    parser.add_argument(
        "--vector",
        choices=VECTOR_KINDS,
        default=None,
        help=f"vectorisation (default {DEFAULT_VECTOR})",
    )
    parser.add_argument("--epochs", type=int, default=N_EPOCHS, help="PPO passes per rollout")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-every", type=int, default=25_000, help="curve resolution")
    parser.add_argument("--curve-episodes", type=int, default=50, help="episodes per point")
    parser.add_argument("--episodes", type=int, default=100, help="final evaluation episodes")
    parser.add_argument(
        "--stop-at",
        type=float,
        default=None,
        metavar="SUCCESS",
        help="stop at the first curve point with this success rate (0.9)",
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/reach_ppo"))
    args = parser.parse_args()
    ENV_KWARGS["robot"] = args.robot
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)

    vector = args.vector or ("subprocess" if args.subprocess else DEFAULT_VECTOR)
    env = make_env(args.envs, args.seed, vector)
    model = make_ppo(env, seed=args.seed, n_epochs=args.epochs)
    callback = CurveCallback(args.eval_every, args.curve_episodes, args.stop_at)
    model.learn(total_timesteps=args.steps, callback=callback)
    train_seconds = callback.train_seconds()
    env.training = False

    final = evaluate(model, env, args.episodes, seed=1_000_000)
    final.update(
        steps=model.num_timesteps,
        train_seconds=train_seconds,
        episodes=args.episodes,
        vector=vector,
        epochs=args.epochs,
    )
    if args.stop_at is not None:
        reached = [c for c in callback.curve if c["success_rate"] >= args.stop_at]
        final["reached"] = reached[0] if reached else None
    model.save(args.out / "ppo_reach")
    env.save(str(args.out / "vecnormalize.pkl"))
    plot(callback.curve, final, args.out / "learning_curve.png")
    (args.out / "results.json").write_text(
        json.dumps({"final": final, "curve": callback.curve}, indent=2)
    )
    print(
        f"final: success {final['success_rate']:.2%} over {args.episodes} episodes, "
        f"median final distance {final['median_final_distance_m'] * 100:.1f} cm, "
        f"{model.num_timesteps} steps in {train_seconds / 60:.1f} min of training "
        f"(evaluations excluded)"
    )
    if args.stop_at is not None:
        point = final["reached"]
        print(
            f"success {args.stop_at:.0%} "
            + (
                f"reached at {point['steps']} steps after {point['train_seconds'] / 60:.2f} min"
                if point
                else f"not reached in {model.num_timesteps} steps"
            )
        )
    print(f"learning curve: {args.out / 'learning_curve.png'}")
    env.close()


if __name__ == "__main__":
    main()
