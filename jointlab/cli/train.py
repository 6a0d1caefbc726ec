"""Train PPO (Stable-Baselines3) on a JointLab task and save the model.

The observation statistics are saved beside the model. While it trains, the policy is
evaluated every --eval-every environment steps (and after the last one); the run folder gets
TensorBoard logs (tensorboard/: rewards, success, episode length, losses), a learning curve
(learning_curve.png: evaluation success against environment steps) and run.json, which
'jointlab runs' lists (tensorboard --logdir runs shows the curves of every run in a
browser). Needs the rl extra (pip install 'jointlab[rl]').

Examples:
  jointlab train reach                       # about 300k steps: >= 90 % success
  jointlab train reach --steps 4096 --envs 2 --name quick   # a smoke run
  jointlab runs                              # every run in runs/, with its final metrics

Watch a trained policy with jointlab eval (its --help has examples).
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

#: Engines of the simulated environments and the default (jointlab.sim.engine's; not imported here,
#: so ``jointlab --help`` stays fast).
ENGINES = ("pybullet", "mujoco")
DEFAULT_ENGINE = "pybullet"
#: The task names of jointlab.envs.training.TASKS, for --help (a test keeps them equal).
TASK_NAMES = ("reach", "reach-so101", "reach-koch", "tracking", "hold", "push")
#: Defaults of jointlab.envs.training (``EVAL_EVERY``, ``EVAL_EPISODES``), for --help.
EVAL_EVERY = 20_000
EVAL_EPISODES = 20

NAME = "train"
HELP = "train PPO (Stable-Baselines3) on a JointLab task"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab train``."""
    parser.add_argument(
        "task", metavar="TASK", help=f"{', '.join(TASK_NAMES)}, or a jointlab/... env id"
    )
    parser.add_argument("--steps", type=positive_int, default=300_000, help="environment steps")
    parser.add_argument("--envs", type=positive_int, default=8, help="environment copies")
    parser.add_argument("--seed", type=int, default=0, help="seed of everything")
    parser.add_argument("--engine", choices=ENGINES, help="physics engine (default: pybullet)")
    parser.add_argument(
        "--eval-every",
        type=positive_int,
        default=EVAL_EVERY,
        metavar="STEPS",
        help="environment steps between evaluations",
    )
    parser.add_argument(
        "--eval-episodes",
        type=positive_int,
        default=EVAL_EPISODES,
        metavar="N",
        help="episodes per evaluation",
    )
    add_output_arguments(parser, "default name: train-TASK, train-TASK-ENGINE with --engine mujoco")


def run(args: argparse.Namespace) -> int:
    """Train with a progress bar and save the model."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from jointlab.extras import require

    # before any folder is made
    require("rl", "jointlab train", "torch", "stable_baselines3", "tensorboard")

    from jointlab.envs.run_record import CURVE_FILE, RUN_FILE, TENSORBOARD_FOLDER
    from jointlab.envs.training import MODEL_NAME, resolve_task, train

    env_id, kwargs = resolve_task(args.task)
    engine = f"-{args.engine}" if args.engine not in (None, DEFAULT_ENGINE) else ""
    folder = planned_folder(args, f"train-{args.task.replace('/', '-')}{engine}")
    console.print(
        f"PPO on {env_id} {kwargs}: {args.steps} steps, {args.envs} environments", highlight=False
    )
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:>8.0f}"),
        TimeRemainingColumn(),
    )
    with run_folder(folder) as work, Progress(*columns, console=console) as progress:
        bar = progress.add_task("training", total=args.steps)
        result = train(
            args.task,
            args.steps,
            work,
            envs=args.envs,
            seed=args.seed,
            engine=args.engine,
            eval_every=args.eval_every,
            eval_episodes=args.eval_episodes,
            on_progress=lambda done: progress.update(bar, completed=done),
        )
    final = result.final
    if final is not None:
        console.print(
            f"final evaluation after {final.steps} steps: success "
            f"{final.success_rate:.0%} of {final.episodes} episodes, mean return "
            f"{final.mean_reward:.2f}",
            highlight=False,
        )
    robot = kwargs.get("robot", "arm6")
    console.print(
        f"saved {folder / MODEL_NAME}; watch it with: jointlab eval {robot} "
        f"{folder / MODEL_NAME} --video",
        highlight=False,
    )
    console.print(f"learning curve: {folder / CURVE_FILE}", highlight=False)
    console.print(
        f"TensorBoard logs: {folder / TENSORBOARD_FOLDER} (tensorboard --logdir "
        f"{folder / TENSORBOARD_FOLDER})",
        highlight=False,
    )
    console.print(f"run record: {folder / RUN_FILE} (jointlab runs {args.out})", highlight=False)
    return 0
