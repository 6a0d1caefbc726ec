"""Record one episode of a trained policy on any robot, tick by tick.

The log holds the actions, states and rewards; 'jointlab replay' applies its actions on
another backend. --video films the episode.

Examples:
  jointlab record arm6 runs/train-reach --video
  jointlab record emulated://arm6 runs/train-reach --seed 3
"""

from __future__ import annotations

import argparse

from jointlab.cli.common import (
    add_output_arguments,
    add_robot_argument,
    console,
    robot_url,
    run_folder,
)
from jointlab.cli.policies import add_policy_arguments, open_policy
from jointlab.cli.programs import LOG_NAME, PLOT_NAME

NAME = "record"
HELP = "record one episode of a policy (log, plot, --video) for replay"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab record``."""
    add_robot_argument(parser)
    add_policy_arguments(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed of the episode's reset")
    parser.add_argument("--video", action="store_true", help="film the episode (sim only)")
    add_output_arguments(parser, "default name: record-POLICY-ROBOT-SEED")


def run(args: argparse.Namespace) -> int:
    """Record the episode, plot it."""
    from jointlab.envs.episodes import record_episode
    from jointlab.recording.plots import plot_log, save

    url = robot_url(args.robot)
    _, folder, policy, env_id, env_kwargs = open_policy(args, "record", f"-{args.seed}")
    with run_folder(folder) as work:
        record = record_episode(policy, url, work / LOG_NAME, env_id=env_id,
                                env_kwargs=env_kwargs, seed=args.seed,
                                video_folder=work / "video" if args.video else None)  # fmt: skip
        outcome = "success" if record.success else "failure"
        title = (f"{record.env_id} on {url}, seed {args.seed}: return "
                 f"{record.episode_return:.2f}, {outcome}")  # fmt: skip
        save(plot_log(work / LOG_NAME, title=title), work / PLOT_NAME)
    console.print(f"{title}; {record.steps} steps", highlight=False)
    console.print(f"wrote {folder / LOG_NAME}, {folder / PLOT_NAME}"
                  + (f", {folder / 'video'}" if args.video else ""), highlight=False)  # fmt: skip
    return 0
