"""Train PPO (Ray RLlib) on jointlab/Reach-v0 with N env runners, locally or on a cluster.

Needs the ``distributed`` extra (``pip install -e ".[distributed]"``). The same script runs
on this machine and on a Ray cluster; only where ``ray.init`` connects changes::

    python examples/03_rllib_reach.py                        # local Ray, CPUs - 1 env runners
    python examples/03_rllib_reach.py --runners 8 --iterations 50 --out /tmp/reach_rllib
    RAY_ADDRESS=auto python examples/03_rllib_reach.py --runners 16   # on a cluster node
    python examples/03_rllib_reach.py --address auto --runners 16     # the same

Each env runner is a Ray actor (one CPU) that steps ``--envs-per-runner`` environments; the
learner runs in this (driver) process. Seeding: one ``--seed`` seeds the networks and the
action sampling (``debugging(seed=)``) and, through ``env_config["seed"]``, every
environment of every runner (:mod:`jointlab.envs.rllib`), so a run is repeatable.

The training results come back to the driver as the return value of ``algo.train()``: the
script prints one line per iteration and writes them all to ``OUT/results.json``. The
checkpoint is written by the driver to ``OUT/checkpoint`` (on the driver's machine), and
evaluated at the end on each ``--eval`` backend with :func:`jointlab.envs.evaluation.
evaluate_policy` (``--eval emulated://arm6`` tries it on the emulated device). See
``docs/distributed.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.connectors.env_to_module import MeanStdFilter
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

from jointlab.envs.evaluation import evaluate_policy
from jointlab.envs.ray_start import start_ray
from jointlab.envs.rllib import log_success, register_rllib_envs
from jointlab.errors import ConfigurationError

ENV_ID = "jointlab/Reach-v0"


def observation_filter(env, spaces, device):
    """Normalise observations with running statistics (kept in the checkpoint)."""
    return MeanStdFilter()


def build_config(args: argparse.Namespace) -> PPOConfig:
    """PPO on Reach with ``args.runners`` env runners, everything seeded from ``args.seed``."""
    env_config = {"robot": args.robot, "action_mode": "position", "seed": args.seed}
    batch = args.runners * args.envs_per_runner * args.fragment
    return (
        PPOConfig()
        .environment(ENV_ID, env_config=env_config)
        .env_runners(
            num_env_runners=args.runners,
            num_envs_per_env_runner=args.envs_per_runner,
            rollout_fragment_length=args.fragment,
            sample_timeout_s=None,  # a busy machine is slow, not broken
            env_to_module_connector=observation_filter,
        )
        .learners(num_learners=args.learners)
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=min(256, batch),
            num_epochs=args.epochs,
            lr=1e-3,
            gamma=0.98,
            lambda_=0.95,
            clip_param=0.2,
            vf_clip_param=100.0,
        )
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[128, 128]))
        .callbacks(on_episode_end=log_success)
        .debugging(seed=args.seed)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3, help="training iterations")
    parser.add_argument(
        "--runners",
        type=int,
        default=max(1, (os.cpu_count() or 2) - 1),
        help="env runners, one CPU each (default: this machine's CPUs - 1)",
    )
    parser.add_argument("--envs-per-runner", type=int, default=1)
    parser.add_argument("--fragment", type=int, default=250, help="steps per env per iteration")
    parser.add_argument("--epochs", type=int, default=10, help="PPO epochs per iteration")
    parser.add_argument("--learners", type=int, default=0, help="0: learn in the driver")
    parser.add_argument("--robot", default="arm6")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--address", default=None, help="Ray address (default: RAY_ADDRESS)")
    parser.add_argument("--num-cpus", type=int, default=None, help="local Ray only")
    parser.add_argument("--out", type=Path, default=Path("/tmp/jointlab_rllib_reach"))
    parser.add_argument(
        "--eval",
        action="append",
        default=None,
        help="backend URL to evaluate on (repeatable; default sim://ROBOT)",
    )
    parser.add_argument("--eval-episodes", type=int, default=10)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    try:
        where = start_ray(args.address, num_cpus=args.num_cpus, runners=args.runners)
    except ConfigurationError as exc:
        parser.exit(2, f"error: {exc}\n")
    register_rllib_envs()
    algo = build_config(args).build_algo()
    print(
        f"PPO on {ENV_ID} ({args.robot}), {args.runners} env runners x "
        f"{args.envs_per_runner} envs, {where}"
    )
    print(f"{'iter':>4} {'env steps':>10} {'episodes':>8} {'return':>8} {'success':>8} {'s':>6}")
    history = []
    try:
        for _ in range(args.iterations):
            start = time.perf_counter()
            result = algo.train()
            runners = result["env_runners"]
            row = {
                "iteration": int(result["training_iteration"]),
                "env_steps": int(result["num_env_steps_sampled_lifetime"]),
                "episodes": int(runners.get("num_episodes_lifetime", 0)),
                "episode_return_mean": float(runners.get("episode_return_mean", float("nan"))),
                "success_rate": float(runners.get("episode_success_rate", float("nan"))),
                "seconds": time.perf_counter() - start,
            }
            history.append(row)
            print(
                f"{row['iteration']:>4} {row['env_steps']:>10} {row['episodes']:>8} "
                f"{row['episode_return_mean']:>8.2f} {row['success_rate']:>8.2f} "
                f"{row['seconds']:>6.1f}"
            )
        checkpoint = algo.save_to_path(str(args.out / "checkpoint"))
    finally:
        algo.stop()
    print(f"checkpoint: {checkpoint}")

    evaluations = {}
    for backend in args.eval or [f"sim://{args.robot}"]:
        evaluation = evaluate_policy(checkpoint, backend, episodes=args.eval_episodes)
        evaluations[backend] = {
            "success_rate": evaluation.success_rate,
            "mean_return": evaluation.mean_return,
        }
        print(evaluation.summary())
    results = {"history": history, "checkpoint": checkpoint, "evaluation": evaluations}
    (args.out / "results.json").write_text(json.dumps(results, indent=2))
    print(f"results: {args.out / 'results.json'}")
    ray.shutdown()


if __name__ == "__main__":
    main()
