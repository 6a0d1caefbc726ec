"""Train PPO (Stable-Baselines3) on a JointLab task and save the model.

The observation statistics are saved beside the model. Needs the rl extra
(pip install 'jointlab[rl]').

Examples:
  jointlab train reach                       # about 300k steps: >= 90 % success
  jointlab train reach --steps 20000 --envs 2 --name quick
  jointlab eval arm6 runs/train-reach/model.zip --video
"""

from __future__ import annotations

import argparse

from jointlab.cli.common import (
    add_output_arguments,
    console,
    planned_folder,
    positive_int,
    run_folder,
)

NAME = "train"
HELP = "train PPO (Stable-Baselines3) on a JointLab task"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab train``."""
    parser.add_argument("task", metavar="TASK",
                        help="reach, tracking, hold, push, or a jointlab/... env id")  # fmt: skip
    parser.add_argument("--steps", type=positive_int, default=300_000, help="environment steps")
    parser.add_argument("--envs", type=positive_int, default=8, help="environment copies")
    parser.add_argument("--seed", type=int, default=0, help="seed of everything")
    add_output_arguments(parser, "default name: train-TASK")


def run(args: argparse.Namespace) -> int:
    """Train with a progress bar and save the model."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from jointlab.extras import require

    require("rl", "jointlab train", "torch", "stable_baselines3")  # before any folder is made

    from jointlab.envs.training import MODEL_NAME, resolve_task, train

    env_id, kwargs = resolve_task(args.task)
    folder = planned_folder(args, f"train-{args.task.replace('/', '-')}")
    console.print(f"PPO on {env_id} {kwargs}: {args.steps} steps, {args.envs} environments",
                  highlight=False)  # fmt: skip
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed:>8.0f}"),
               TimeRemainingColumn())  # fmt: skip
    with run_folder(folder) as work, Progress(*columns, console=console) as progress:
        bar = progress.add_task("training", total=args.steps)
        train(args.task, args.steps, work, envs=args.envs, seed=args.seed,
              on_progress=lambda done: progress.update(bar, completed=done))  # fmt: skip
    robot = kwargs.get("robot", "arm6")
    console.print(f"saved {folder / MODEL_NAME}; watch it with: jointlab eval {robot} "
                  f"{folder / MODEL_NAME} --video", highlight=False)  # fmt: skip
    return 0
