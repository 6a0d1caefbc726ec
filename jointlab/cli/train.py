"""``jointlab train TASK``: PPO (Stable-Baselines3) on a JointLab task."""

from __future__ import annotations

import argparse
from pathlib import Path

from jointlab.cli.common import console

NAME = "train"
HELP = "train PPO (Stable-Baselines3) on a JointLab task"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab train``."""
    parser.add_argument("task", help="reach, tracking, hold, push, or an env id")
    parser.add_argument("--steps", type=int, default=300_000, help="environment steps")
    parser.add_argument("--envs", type=int, default=8, help="environment copies")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/ppo", help="folder for the model")


def run(args: argparse.Namespace) -> int:
    """Train with a progress bar and save the model."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from jointlab.envs.training import resolve_task, train

    env_id, kwargs = resolve_task(args.task)
    console.print(f"PPO on {env_id} {kwargs}: {args.steps} steps, {args.envs} environments")
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed:>8.0f}"),
               TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=console) as progress:
        bar = progress.add_task("training", total=args.steps)
        path = train(args.task, args.steps, Path(args.out), envs=args.envs, seed=args.seed,
                     on_progress=lambda done: progress.update(bar, completed=done))  # fmt: skip
    console.print(f"saved {path}; evaluate it on any backend with "
                  f"jointlab.envs.evaluation.evaluate_policy({str(path)!r}, 'sim://arm6', "
                  f"env_id={env_id!r}, env_kwargs={kwargs!r})")  # fmt: skip
    return 0
