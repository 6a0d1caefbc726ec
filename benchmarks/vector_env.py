"""Batched vector environments: env steps per second against one environment, same run.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/vector_env.py [--steps 2000] [--rounds 7]

Each round measures, one after the other, on ``jointlab/Reach-v0`` (arm6, position mode,
random actions in [-1, 1], autoreset):

* **single**: ``gymnasium.make`` of one environment stepped in this process;
* **batched**: :class:`jointlab.envs.vector.BatchedEnv` with ``--envs`` (8) environments in
  this process (action mapping, law, observation and reward in numpy across them);
* **async**: :class:`jointlab.envs.vector.AsyncBatchedEnv`, two worker processes of
  ``--envs`` environments each, observations in shared memory.

Figures are environment steps per wall-clock second (several processes are involved), and
the ratios are paired within a round: batched / single (target >= 1.3) and async / batched
(target >= 1.8 on two free cores). Medians [lowest - highest] over the rounds, ratios first,
load average at the start and end.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import gymnasium
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import header, load, row, spread, write_summary

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs.vector import AsyncBatchedEnv, BatchedEnv

ENV_ID = "jointlab/Reach-v0"
KWARGS = {"robot": "arm6", "action_mode": "position"}


def single(steps: int) -> float:
    """Steps per second of one environment."""
    env = gymnasium.make(ENV_ID, **KWARGS)
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-1, 1, (steps, 6)).astype(np.float32)
    try:
        start = time.perf_counter()
        for action in actions:
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
        return steps / (time.perf_counter() - start)
    finally:
        env.close()


def vector(env: gymnasium.vector.VectorEnv, steps: int) -> float:
    """Environment steps per second of a vector env (``steps`` in all, autoreset)."""
    env.reset(seed=0)
    calls = max(1, steps // env.num_envs)
    actions = np.random.default_rng(0).uniform(-1, 1, (calls, env.num_envs, 6))
    try:
        env.step(actions[0].astype(np.float32))  # warm-up
        start = time.perf_counter()
        for action in actions.astype(np.float32):
            env.step(action)
        return calls * env.num_envs / (time.perf_counter() - start)
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="env steps per measure")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (median, spread)")
    parser.add_argument("--envs", type=int, default=8, help="environments per process")
    parser.add_argument("--quick", action="store_true", help="400 steps, 3 rounds")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.rounds = 400, 3
    header("vector_env")
    singles, batched, parallel = [], [], []
    for _ in range(args.rounds):
        singles.append(single(args.steps // 2))
        batched.append(vector(BatchedEnv(ENV_ID, args.envs, **KWARGS), args.steps))
        parallel.append(vector(AsyncBatchedEnv(ENV_ID, 2 * args.envs, workers=2, **KWARGS),
                               2 * args.steps))  # fmt: skip
    one = [b / s for b, s in zip(batched, singles, strict=True)]
    two = [p / b for p, b in zip(parallel, batched, strict=True)]
    print(f"{ENV_ID}, {args.rounds} rounds; ratios paired within rounds, median [min-max]:")
    print(f"  BatchedEnv({args.envs}) / one env, one process   {spread(one)}x  (target >= 1.3)")
    print(f"  2 processes of {args.envs} / one process          {spread(two)}x  (target >= 1.8)")
    print("  this machine, env steps per wall-clock second:")
    print(f"    one env                   {spread(singles, 1, 0)}")
    print(f"    BatchedEnv({args.envs})             {spread(batched, 1, 0)}")
    print(f"    AsyncBatchedEnv(2 x {args.envs})    {spread(parallel, 1, 0)}")
    write_summary([
        row(f"BatchedEnv({args.envs}) / one env, steps/s", one, "x", ">= 1.3"),
        row(f"2 processes x BatchedEnv({args.envs}) / one process", two, "x", ">= 1.8"),
    ])  # fmt: skip
    print(f"end {load()}")


if __name__ == "__main__":
    main()
