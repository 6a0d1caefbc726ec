"""Replay a recorded log, or a LeRobot dataset's episode, on any robot, open loop, and compare.

A log (ROBOT LOG): the robot starts from the first logged state; each logged action is
applied for one control period (the log's). The comparison plot overlays both runs per joint
(same colour, aligned on the first command) with their difference.

A dataset episode (DATASET --episode K URL): the robot is armed, moved to the episode's first
position, and each frame's joint targets are applied for one frame (1/fps, a whole number of
the robot's periods); the table gives the tracking error against the recorded positions.

Examples:
  jointlab replay arm6 runs/record-train-reach-arm6-0/log.npz
  jointlab replay emulated://arm6 runs/demo-arm6/log.npz
  jointlab replay data/pick --episode 1 emulated://so101
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jointlab.cli.common import (
    add_output_arguments,
    add_robot_argument,
    console,
    planned_folder,
    robot_label,
    robot_url,
    run_folder,
)
from jointlab.cli.programs import LOG_NAME

NAME = "replay"
HELP = "replay a recorded log's actions on any robot and compare"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab replay``."""
    add_robot_argument(parser)
    parser.add_argument(
        "log",
        metavar="LOG",
        help="a log with a desired channel (with "
        "--episode: the robot URL, after the dataset folder)",
    )
    parser.add_argument(
        "--episode",
        type=int,
        default=None,
        metavar="K",
        help="replay episode K of the LeRobot dataset given first",
    )
    add_output_arguments(parser, "default name: replay-RUN-ROBOT")


def run(args: argparse.Namespace) -> int:
    """Replay, record, compare."""
    if args.episode is not None:
        return _replay_episode(args)
    from jointlab.envs.evaluation import open_backend
    from jointlab.recording import LogMetadata, Recorder, load_log
    from jointlab.recording.plots import plot_comparison, save
    from jointlab.recording.replay import logged_actions, replay

    source = Path(args.log).expanduser()
    original = load_log(source)
    logged_actions(original)  # no actions: fail before connecting
    url = robot_url(args.robot)
    run_name = source.parent.name if source.stem == "log" else source.stem
    folder = planned_folder(args, f"replay-{run_name}-{robot_label(args.robot)}")
    period = original.metadata.dt or 0.001
    with run_folder(folder) as work:
        robot = open_backend(url, period)
        try:
            metadata = LogMetadata.from_robot(robot, url=url, replay_of=str(source))
            with Recorder(work / LOG_NAME, metadata=metadata) as recorder:
                with console.status(f"replaying {len(original)} actions on {url}..."):
                    replay(robot, original, recorder=recorder)
        finally:
            robot.close()
        replayed = load_log(work / LOG_NAME)
        names = {
            f"recorded ({original.metadata.extra.get('url', source.name)})": original,
            f"replayed ({url})": replayed,
        }
        figure = plot_comparison(names, title=f"{source} replayed on {url}")
        save(figure, work / "compare.png")
    console.print(
        f"replayed {len(original)} actions on {url}; {figure.get_label()}", highlight=False
    )
    console.print(f"wrote {folder / LOG_NAME} and {folder / 'compare.png'}", highlight=False)
    return 0


def _replay_episode(args: argparse.Namespace) -> int:
    """``jointlab replay DATASET --episode K URL``: replay, then the tracking table."""
    import numpy as np
    from rich.table import Table

    import jointlab
    from jointlab.interop.dataset import dataset_info, load_episode
    from jointlab.interop.replay import replay_episode

    dataset, url = Path(args.robot).expanduser(), robot_url(args.log)
    dataset_info(dataset)  # a dataset folder, before anything connects
    with jointlab.connect(url) as robot:
        episode = load_episode(dataset, args.episode, robot.description)
        with console.status(f"replaying episode {args.episode} ({len(episode)} frames) on {url}"):
            report = replay_episode(robot, episode)
    table = Table(title=f"{dataset} episode {args.episode} ({episode.task!r}) on {url}")
    for column in ("joint", "rms error °", "max error °"):
        table.add_column(column, justify="left" if column == "joint" else "right")
    for name, rms, worst in zip(report.joint_names, report.rms, report.max, strict=True):
        table.add_row(name, f"{np.degrees(rms):.2f}", f"{np.degrees(worst):.2f}")
    console.print(table)
    joint, error = report.worst
    console.print(
        f"replayed {len(episode)} frames at {episode.fps:g} fps; largest tracking "
        f"error {np.degrees(error):.2f}° ({joint})",
        highlight=False,
    )
    return 0
