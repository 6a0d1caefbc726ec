"""Simulate a robot running its demo program in PyBullet; log and plot it.

The program homes the robot, follows a trajectory, moves, holds and stops; the summary
table gives the tracking error and peak torque of each command.

Examples:
  jointlab demo
  jointlab demo trifinger --gui          # PyBullet's window (a display)
"""

from __future__ import annotations

import argparse

from jointlab.cli.common import (
    add_output_arguments,
    add_robot_argument,
    console,
    planned_folder,
    robot_label,
    robot_url,
    run_folder,
)
from jointlab.cli.programs import LOG_NAME, PLOT_NAME, execute_program

NAME = "demo"
HELP = "simulate a robot running its demo program; log + plot"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab demo``."""
    add_robot_argument(parser, optional=True, urls=False)
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI (a display)")
    add_output_arguments(parser, "default name: demo-ROBOT")


def run(args: argparse.Namespace) -> int:
    """Run the demo program in PyBullet."""
    from jointlab.program import demo_program

    if "://" in args.robot:
        from jointlab.errors import ConfigurationError

        raise ConfigurationError(
            f"demo simulates a robot: give its name or file, not the URL {args.robot} "
            "(jointlab run ROBOT PROGRAM runs a program on any backend)"
        )
    url = robot_url(args.robot, gui=args.gui)
    folder = planned_folder(args, f"demo-{robot_label(args.robot)}")
    with run_folder(folder) as work:
        execute_program(
            url, None, work, f"jointlab demo: {args.robot} in PyBullet", make_program=demo_program
        )
    console.print(f"wrote {folder / LOG_NAME} and {folder / PLOT_NAME}", highlight=False)
    return 0
