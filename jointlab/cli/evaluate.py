"""Evaluate a trained policy on any robot: success rate, returns, a plot and videos.

The environment is the policy's training environment (read from an RLlib checkpoint; for an
SB3 model --env, default jointlab/Reach-v0 in position mode); ROBOT must be the robot it was
trained on, on any backend. Videos need a simulated robot and the video extra.

Manipulation tasks (--env jointlab/Lift-v0, Push-v1, PickPlace-v0, Stack-v0) run on a
simulated robot (sim://NAME?engine=mujoco picks the engine); POLICY is 'expert' (the scripted
expert) or a TQC/SAC model. Episode i is reset with seed SEED+i; --paired POLICY_B runs a
second policy on the same seeds and prints the difference of the success rates with its 95 %
interval. Success is printed with its 95 % Wilson interval.

Examples:
  jointlab eval arm6 runs/train-reach --video
  jointlab eval emulated://arm6 runs/train-reach/model.zip --episodes 5
  jointlab eval so101 expert --env jointlab/Lift-v0 --episodes 5
  jointlab eval "sim://so101?engine=mujoco" expert --env jointlab/Lift-v0 --episodes 3 \
      --paired expert
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
    parser.add_argument(
        "--paired",
        metavar="POLICY_B",
        help="manipulation tasks: also run POLICY_B on the same seeds and "
        "print the difference of the success rates",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the first reset")
    parser.add_argument(
        "--video",
        nargs="?",
        const="",
        metavar="DIR",
        help="record every episode as MP4 (default DIR: the run folder's video/)",
    )
    add_view_argument(parser)
    add_output_arguments(parser, "default name: eval-POLICY-ROBOT")


def run(args: argparse.Namespace) -> int:
    """Run the episodes, print the summary, write summary.json and eval.png."""
    from jointlab.envs.manipulation.registration import MANIPULATION_IDS

    if args.env in MANIPULATION_IDS or args.policy == "expert":
        return _run_manipulation(args)
    if args.paired is not None:
        from jointlab.errors import ConfigurationError

        raise ConfigurationError(
            "--paired compares policies on the manipulation tasks (--env jointlab/Lift-v0 ...)"
        )
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
            video = (
                None
                if args.video is None
                else (Path(args.video).expanduser() if args.video else work / "video")
            )
            with console.status(f"{args.episodes} episodes on {url}..."):
                result = evaluate_policy(
                    policy,
                    url,
                    env_id=env_id,
                    env_kwargs=env_kwargs,
                    episodes=args.episodes,
                    seed=args.seed,
                    video_folder=video,
                )
            summary = {
                "env_id": result.env_id,
                "backend": result.backend,
                "policy": str(path),
                "success_rate": result.success_rate,
                "mean_return": result.mean_return,
                "returns": result.returns.tolist(),
                "successes": result.successes.tolist(),
                "lengths": result.lengths.tolist(),
            }
            (work / "summary.json").write_text(json.dumps(summary, indent=2))
            save(
                plot_episodes(result.returns, result.successes, title=result.summary()),
                work / "eval.png",
            )
        console.print(result.summary(), highlight=False)
        wrote = [folder / "summary.json", folder / "eval.png"]
        if video is not None:
            wrote.append(folder / "video" if not args.video else video)
        console.print("wrote " + ", ".join(str(w) for w in wrote), highlight=False)
    return 0


def manipulation_env_kwargs(robot: str, env_kwargs: str | None) -> dict:
    """Environment keywords of a ROBOT argument (a name, a file or a sim:// URL)."""
    from jointlab.connection import parse_url
    from jointlab.errors import ConfigurationError

    url = parse_url(robot_url(robot))
    if url.scheme != "sim":
        raise ConfigurationError(
            f"{robot}: the manipulation tasks need a simulated robot (a "
            "name, a robot file or sim://NAME?engine=...), the cubes "
            "live in its world"
        )
    kwargs = {"robot": url.target}
    engine = url.take("engine", str, None)
    if engine is not None:
        kwargs["engine"] = engine
    if env_kwargs:
        extra = json.loads(env_kwargs)
        if not isinstance(extra, dict):
            raise ConfigurationError(f"--env-kwargs must be a JSON object, got {env_kwargs}")
        kwargs.update(extra)
    return kwargs


def _run_manipulation(args: argparse.Namespace) -> int:
    from jointlab.cli.common import planned_folder, robot_label
    from jointlab.envs.manipulation.evaluate import compare_paired, evaluate_manipulation
    from jointlab.errors import ConfigurationError

    if args.env is None:
        raise ConfigurationError(
            "the expert needs --env (jointlab/Lift-v0, jointlab/Push-v1, "
            "jointlab/PickPlace-v0 or jointlab/Stack-v0)"
        )
    kwargs = manipulation_env_kwargs(args.robot, args.env_kwargs)
    label = Path(str(args.policy)).stem if args.policy != "expert" else "expert"
    folder = planned_folder(args, f"eval-{label}-{robot_label(args.robot)}")
    results = []
    for policy in [args.policy] + ([args.paired] if args.paired else []):
        with console.status(f"{policy}: {args.episodes} episodes of {args.env}..."):
            results.append(
                evaluate_manipulation(
                    policy, args.env, episodes=args.episodes, seed=args.seed, env_kwargs=kwargs
                )
            )
        console.print(results[-1].summary(), highlight=False)
    summary = {
        "env_id": args.env,
        "env_kwargs": kwargs,
        "seeds": [args.seed, args.seed + args.episodes - 1],
        "policies": [
            {
                "policy": r.policy,
                "successes": r.successes.tolist(),
                "success_rate": r.rate.value,
                "interval": [r.rate.low, r.rate.high],
                "control_dt": r.control_dt,
            }
            for r in results
        ],
    }
    if len(results) == 2:
        paired = compare_paired(*results)
        console.print(
            f"paired ({results[0].policy} - {results[1].policy}): {paired}", highlight=False
        )
        summary["paired"] = {"difference": paired.difference, "interval": [paired.low, paired.high]}
    with run_folder(folder) as work:
        (work / "summary.json").write_text(json.dumps(summary, indent=2))
    console.print(f"wrote {folder / 'summary.json'}", highlight=False)
    return 0
