r"""Record episodes: a LeRobot dataset (teleoperation, a program, a policy) or a policy's log.

LeRobot datasets (--dataset FOLDER, which must not exist): LeRobotDataset v3 folders that
LeRobot's own LeRobotDataset loads offline (parquet data, MP4 videos per --camera, meta/).
  * from a leader arm:  --leader URL --follower URL --task TEXT --episodes N
  * from a program:     --program FILE --follower URL --task TEXT --episodes N
  * from a policy:      ROBOT POLICY --dataset FOLDER --task TEXT --episodes N (seeds SEED..)
  * from a scripted expert: ROBOT expert --env TASK --dataset FOLDER --episodes N: the
    observations of JointLab's LeRobot environment (observation.state, .environment_state,
    --camera NAME[:WxH] images) and the expert's joint targets, what lerobot-train learns
Cameras (--camera NAME[=sim|opencv:DEVICE][:WxH]): sim renders the follower (a simulated twin
posed as measured when the follower is not sim://); opencv grabs a real camera.

Without --dataset, ROBOT POLICY records one episode as a JointLab log (actions, states,
rewards) for 'jointlab replay'; --video films it. On a manipulation task (--env
jointlab/Lift-v0 ...; POLICY 'expert' is the scripted expert) it records --episodes
demonstrations (seeds SEED..) into demos.npz: observations, goals, actions, rewards, the
joint targets and each episode's success.

Examples:
  jointlab record --leader emulated://so101 --follower sim://so101 --task "pick the cube" \
      --episodes 2 --seconds 5 --dataset data/pick --camera front
  jointlab record --program examples/programs/so101_wave.yaml --follower sim://so101 \
      --task wave --episodes 2 --dataset data/wave
  jointlab record so101 expert --env Reach --episodes 2 --dataset data/reach
  jointlab record arm6 runs/train-reach --video
  jointlab record so101 expert --env jointlab/Lift-v0 --episodes 5
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jointlab.cli.arms import add_arm_arguments
from jointlab.cli.common import (
    add_output_arguments,
    console,
    positive_float,
    positive_int,
    robot_url,
    run_folder,
)
from jointlab.cli.programs import LOG_NAME, PLOT_NAME
from jointlab.cli.viewing import add_view_argument, viewing
from jointlab.errors import ConfigurationError

NAME = "record"
HELP = "record a LeRobot dataset (leader arm, program, policy) or a policy episode's log"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab record``."""
    parser.add_argument(
        "robot",
        metavar="ROBOT",
        nargs="?",
        help="policy mode: built-in name, robot file or robot URL",
    )
    parser.add_argument(
        "policy",
        metavar="POLICY",
        nargs="?",
        help="an SB3 model .zip, a 'jointlab train' folder, an RLlib checkpoint folder, or "
        "'expert' (the task's scripted expert; --env names the task)",
    )
    parser.add_argument(
        "--env", metavar="ID", help="policy mode: environment id (expert: a task, e.g. Reach)"
    )
    parser.add_argument(
        "--env-kwargs", metavar="JSON", help="policy mode: environment keywords as JSON"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the (first) episode's reset")
    parser.add_argument("--video", action="store_true", help="film the episode (log mode)")
    add_view_argument(parser)
    add_arm_arguments(parser, required=False)
    parser.add_argument("--program", metavar="FILE", help="record a command program's runs")
    parser.add_argument(
        "--no-environment-state",
        action="store_true",
        help="expert mode: no observation.environment_state (a camera policy for "
        "lerobot-record on a device, which cannot feed that feature)",
    )
    parser.add_argument(
        "--dataset",
        metavar="FOLDER",
        help="write a LeRobot dataset here (the folder must not exist)",
    )
    parser.add_argument("--task", help="dataset: what the episodes do, in words")
    parser.add_argument("--episodes", type=positive_int, default=1, help="dataset: episodes")
    parser.add_argument(
        "--seconds",
        type=positive_float,
        default=10.0,
        help="dataset, leader mode: seconds per episode",
    )
    parser.add_argument(
        "--fps",
        type=positive_float,
        default=None,
        help="dataset: frames per second, 1/fps a whole number of follower "
        "periods (default: 25; policy mode: one frame per env step)",
    )
    parser.add_argument(
        "--camera",
        action="append",
        default=[],
        metavar="SPEC",
        help="dataset camera NAME[=sim|opencv:DEVICE][:WxH] (repeatable)",
    )
    add_output_arguments(parser, "log mode; default name: record-POLICY-ROBOT-SEED")


def _mode(args: argparse.Namespace) -> str:
    if args.leader or (args.follower and not args.program):
        if not (args.leader and args.follower):
            raise ConfigurationError("teleoperation needs both --leader URL and --follower URL")
        return "leader"
    if args.program:
        if not args.follower:
            raise ConfigurationError("--program needs --follower URL (the robot that runs it)")
        return "program"
    if not args.robot or not args.policy:
        raise ConfigurationError(
            "what to record? required: POLICY (ROBOT POLICY), or --leader URL --follower URL, "
            "or --program FILE --follower URL"
        )
    return "policy-dataset" if args.dataset else "log"


def run(args: argparse.Namespace) -> int:
    """Record the dataset or the log (with ``--view``, showing the recorded robot live)."""
    mode = _mode(args)
    nth = 1 if mode == "leader" and args.leader != "keyboard" else 0  # the recorded robot's turn
    with viewing(args.view, None, nth=nth, linger_seconds=args.linger):
        return _record(args, mode)


def _record(args: argparse.Namespace, mode: str) -> int:
    from jointlab.envs.manipulation.registration import MANIPULATION_IDS

    if mode == "log" and (args.env in MANIPULATION_IDS or args.policy == "expert"):
        # without --dataset: demos.npz; with it, a LeRobotDataset (below)
        return _record_demonstrations(args)
    if mode == "log":
        return _record_log(args)
    if not args.dataset:
        raise ConfigurationError(f"{mode} mode writes a LeRobot dataset: give --dataset FOLDER")
    if not args.task and not (mode == "policy-dataset" and args.policy == "expert"):
        raise ConfigurationError('a dataset needs --task TEXT (e.g. --task "pick the cube")')
    from jointlab.interop.dataset import check_new_folder

    check_new_folder(Path(args.dataset).expanduser())  # before anything connects
    if args.fps is None and mode != "policy-dataset":
        args.fps = 25.0
    if mode == "leader":
        return _record_leader(args)
    if mode == "program":
        return _record_program(args)
    return _record_policy(args)


def _cameras(args: argparse.Namespace, robot: object) -> list:
    from jointlab.interop.cameras import parse_camera

    cameras = []
    try:
        for spec in args.camera:
            cameras.append(parse_camera(spec, robot))  # type: ignore[arg-type]
    except BaseException:
        for camera in cameras:
            camera.close()
        raise
    names = [c.name for c in cameras]
    if len(set(names)) != len(names):
        raise ConfigurationError(f"--camera names must differ, got {names}")
    return cameras


def _done(args: argparse.Namespace, saved: int, frames: int) -> int:
    console.print(
        f"wrote {saved} episode(s) of {frames} frames at {args.fps:g} fps to "
        f"{args.dataset} (LeRobotDataset v3)",
        highlight=False,
    )
    return 0 if saved else 1


def _record_leader(args: argparse.Namespace) -> int:
    from jointlab.cli.arms import open_teleop
    from jointlab.interop.dataset import DatasetWriter
    from jointlab.interop.record import frame_periods, record_teleop

    teleop = open_teleop(args)
    follower = teleop.follower
    cameras = []
    try:
        every = frame_periods(args.fps, follower.control_dt)
        frames = max(1, round(args.seconds * args.fps))
        cameras = _cameras(args, follower)
        sizes = {c.name: (c.height, c.width) for c in cameras}

        def between(episode: int) -> None:
            if sys.stdin.isatty():
                input(f"reset the scene for episode {episode + 1}, then press Enter ")

        def progress(episode: int, frame: int, sample: object) -> None:
            if frame == 0:
                console.print(
                    f"episode {episode + 1}/{args.episodes}: recording {frames} frames",
                    highlight=False,
                )

        with DatasetWriter(
            args.dataset, follower.description, args.fps, sizes, url=args.follower
        ) as writer:
            saved = record_teleop(
                writer,
                teleop,
                args.task,
                args.episodes,
                frames,
                cameras,
                every,
                between=between,
                on_frame=progress,
            )
    finally:
        for camera in cameras:
            camera.close()
        teleop.leader.close()
        follower.close()
    return _done(args, saved, frames)


def _record_program(args: argparse.Namespace) -> int:
    import jointlab
    from jointlab.interop.dataset import DatasetWriter
    from jointlab.interop.record import frame_periods, record_program
    from jointlab.program import load_program

    program = load_program(Path(args.program))
    with jointlab.connect(robot_url(args.follower)) as robot:
        every = frame_periods(args.fps, robot.control_dt)
        cameras = _cameras(args, robot)
        try:
            sizes = {c.name: (c.height, c.width) for c in cameras}
            with DatasetWriter(
                args.dataset, robot.description, args.fps, sizes, url=args.follower
            ) as writer:
                saved = record_program(
                    writer, robot, program, args.task, args.episodes, cameras, every
                )
        finally:
            for camera in cameras:
                camera.close()
    console.print(
        f"wrote {saved} run(s) of {args.program} at {args.fps:g} fps to "
        f"{args.dataset} (LeRobotDataset v3)",
        highlight=False,
    )
    return 0


def _record_expert(args: argparse.Namespace) -> int:
    from jointlab.connection import parse_url
    from jointlab.interop.cameras import DEFAULT_SIZE
    from jointlab.interop.demos import record_expert
    from jointlab.interop.lerobot_gym import LEROBOT_TASKS

    if not args.env:
        raise ConfigurationError(f"expert mode needs --env TASK, one of {list(LEROBOT_TASKS)}")
    names, size = [], (96, 96)
    for spec in args.camera:  # NAME[=sim][:WxH]
        name, _, rest = spec.partition(":")
        name, _, kind = name.partition("=")
        if kind not in ("", "sim"):
            raise ConfigurationError(f"--camera {spec}: expert mode renders sim cameras only")
        if rest:
            width, _, height = rest.partition("x")
            size = (int(width), int(height)) if height else DEFAULT_SIZE
        names.append(name)
    parsed = parse_url(robot_url(args.robot))
    if parsed.scheme != "sim":
        raise ConfigurationError(
            f"expert mode simulates the robot; {args.robot} is not a name, a file or sim://"
        )
    fps = round(args.fps) if args.fps is not None else 25
    summary = record_expert(
        args.dataset,
        args.env,
        parsed.target,
        args.episodes,
        seed=args.seed,
        fps=fps,
        engine=parsed.query.get("engine"),
        cameras=names,
        camera_size=size,
        environment_state=not args.no_environment_state,
    )
    console.print(
        f"wrote {summary.episodes} expert episode(s) of {args.env} on {args.robot} "
        f"({summary.frames} frames at {fps} fps; the expert succeeded in "
        f"{sum(summary.successes)}) to {args.dataset} (LeRobotDataset v3)",
        highlight=False,
    )
    return 0


def _record_policy(args: argparse.Namespace) -> int:
    from jointlab.cli.policies import env_settings, policy_path

    if args.policy == "expert":
        return _record_expert(args)
    from jointlab.envs.evaluation import load_policy
    from jointlab.interop.convert import record_policy

    policy = load_policy(policy_path(args.policy))
    env_id, env_kwargs = env_settings(args, policy)
    names = [spec.split("=", 1)[0] for spec in args.camera]
    if any("=" in spec and not spec.split("=", 1)[1].startswith("sim") for spec in args.camera):
        raise ConfigurationError("policy mode renders sim cameras only (--camera NAME[=sim:WxH])")
    saved = record_policy(
        policy,
        robot_url(args.robot),
        args.dataset,
        args.task,
        args.episodes,
        seed=args.seed,
        env_id=env_id,
        env_kwargs=env_kwargs,
        fps=args.fps,
        cameras=names,
    )
    console.print(
        f"wrote {saved} episode(s) of {args.policy} on {args.robot} to {args.dataset} "
        "(LeRobotDataset v3)",
        highlight=False,
    )
    return 0


def _record_log(args: argparse.Namespace) -> int:
    from jointlab.cli.policies import open_policy
    from jointlab.envs.episodes import record_episode
    from jointlab.recording.plots import plot_log, save

    url = robot_url(args.robot)
    _, folder, policy, env_id, env_kwargs = open_policy(args, "record", f"-{args.seed}")
    with run_folder(folder) as work:
        record = record_episode(
            policy,
            url,
            work / LOG_NAME,
            env_id=env_id,
            env_kwargs=env_kwargs,
            seed=args.seed,
            video_folder=work / "video" if args.video else None,
        )
        outcome = "success" if record.success else "failure"
        title = (
            f"{record.env_id} on {url}, seed {args.seed}: return "
            f"{record.episode_return:.2f}, {outcome}"
        )
        save(plot_log(work / LOG_NAME, title=title), work / PLOT_NAME)
    console.print(f"{title}; {record.steps} steps", highlight=False)
    console.print(
        f"wrote {folder / LOG_NAME}, {folder / PLOT_NAME}"
        + (f", {folder / 'video'}" if args.video else ""),
        highlight=False,
    )
    return 0


def _record_demonstrations(args: argparse.Namespace) -> int:
    from jointlab.cli.common import planned_folder, robot_label
    from jointlab.cli.evaluate import manipulation_env_kwargs
    from jointlab.envs.manipulation.evaluate import record_demonstrations

    if args.env is None:
        raise ConfigurationError(
            "the expert needs --env (jointlab/Lift-v0, jointlab/Push-v1, "
            "jointlab/PickPlace-v0 or jointlab/Stack-v0)"
        )
    kwargs = manipulation_env_kwargs(args.robot, args.env_kwargs)
    label = Path(str(args.policy)).stem if args.policy != "expert" else "expert"
    folder = planned_folder(args, f"record-{label}-{robot_label(args.robot)}-{args.seed}")
    with run_folder(folder) as work, console.status(f"{args.episodes} episodes..."):
        rate = record_demonstrations(
            args.policy,
            args.env,
            work / "demos.npz",
            episodes=args.episodes,
            seed=args.seed,
            env_kwargs=kwargs,
        )
    console.print(
        f"{args.env} {args.policy}: {args.episodes} episode(s), success {rate}", highlight=False
    )
    console.print(f"wrote {folder / 'demos.npz'}", highlight=False)
    return 0
