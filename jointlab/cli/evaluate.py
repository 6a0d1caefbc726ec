"""Evaluate a trained policy on any robot: success rate, returns, a plot and videos.

The environment is the policy's training environment (read from an RLlib checkpoint; for an
SB3 model --env, default jointlab/Reach-v0 in position mode); ROBOT must be the robot it was
trained on, on any backend. Videos need a simulated robot and the video extra.

Examples:
  jointlab eval arm6 runs/train-reach --video
  jointlab eval emulated://arm6 runs/train-reach/model.zip --episodes 5
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from jointlab.cli.common import (
    add_output_arguments,
    add_robot_argument,
    console,
    positive_int,
    robot_url,
    run_folder,
)
from jointlab.cli.policies import add_policy_arguments, open_policy
from jointlab.cli.viewing import add_view_argument, viewing

NAME = "eval"
HELP = "evaluate a trained policy on any robot: success rate, plot, --video"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab eval``."""
    add_robot_argument(parser)
    add_policy_arguments(parser)
    parser.add_argument("--episodes", type=positive_int, default=10, help="episodes to run")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first reset")
    parser.add_argument("--video", nargs="?", const="", metavar="DIR",
                        help="record every episode as MP4 (default DIR: the run folder's "
                             "video/)")  # fmt: skip
    add_view_argument(parser)
    add_output_arguments(parser, "default name: eval-POLICY-ROBOT")


def run(args: argparse.Namespace) -> int:
    """Run the episodes, print the summary, write summary.json and eval.png."""
    from jointlab.envs.evaluation import evaluate_policy
    from jointlab.extras import check_installed
    from jointlab.recording.plots import plot_episodes, save

    if args.video is not None:  # before any episode runs or folder is made
        check_installed("video", "jointlab eval --video", "moviepy")
    url = robot_url(args.robot)
    path, folder, policy, env_id, env_kwargs = open_policy(args, "eval")
    # the page stays up after the run (outermost), the run folder is finished before
    with viewing(args.view, None, title=f"{env_id} on {url}", linger_seconds=args.linger):
        with run_folder(folder) as work:
            video = None if args.video is None else (Path(args.video).expanduser() if args.video
                                                     else work / "video")  # fmt: skip
            with console.status(f"{args.episodes} episodes on {url}..."):
                result = evaluate_policy(policy, url, env_id=env_id, env_kwargs=env_kwargs,
                                         episodes=args.episodes, seed=args.seed,
                                         video_folder=video)  # fmt: skip
            summary = {
                "env_id": result.env_id, "backend": result.backend, "policy": str(path),
                "success_rate": result.success_rate, "mean_return": result.mean_return,
                "returns": result.returns.tolist(), "successes": result.successes.tolist(),
                "lengths": result.lengths.tolist(),
            }  # fmt: skip
            (work / "summary.json").write_text(json.dumps(summary, indent=2))
            save(plot_episodes(result.returns, result.successes,
                               title=result.summary()), work / "eval.png")  # fmt: skip
        console.print(result.summary(), highlight=False)
        wrote = [folder / "summary.json", folder / "eval.png"]
        if video is not None:
            wrote.append(folder / "video" if not args.video else video)
        console.print("wrote " + ", ".join(str(w) for w in wrote), highlight=False)
    return 0
