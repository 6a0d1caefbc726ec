"""Run a command program (YAML) on any backend; log and plot it.

A program is a list of Commander commands (docs/programs.md); the same file runs in
simulation, on the emulator and on a device.

Examples:
  jointlab run arm6 examples/programs/first_program.yaml
  jointlab run arm6 examples/programs/arm6_tour.yaml --view --linger 1
  jointlab run emulated://arm6 examples/programs/first_program.yaml
  jointlab run "serial:///dev/ttyACM0?robot=arm6" my_program.yaml
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
from jointlab.cli.programs import LOG_NAME, PLOT_NAME, execute_program
from jointlab.cli.viewing import add_view_argument, viewing

NAME = "run"
HELP = "run a command program (YAML) on any backend; log + plot"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab run``."""
    add_robot_argument(parser)
    parser.add_argument("program", metavar="PROGRAM", help="program YAML file")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI (sim only)")
    add_view_argument(parser)
    add_output_arguments(parser, "default name: run-PROGRAM-ROBOT")


def run(args: argparse.Namespace) -> int:
    """Parse the program, connect, run, summarise."""
    from jointlab.program import load_program

    program = load_program(Path(args.program).expanduser())  # before connecting: cheap errors
    url = robot_url(args.robot, gui=args.gui)
    folder = planned_folder(args, f"run-{Path(args.program).stem}-{robot_label(args.robot)}")
    with viewing(args.view, url, linger_seconds=args.linger):  # stays up after the run
        with run_folder(folder) as work:
            execute_program(url, program, work, f"{Path(args.program).name} on {url}")
        console.print(f"wrote {folder / LOG_NAME} and {folder / PLOT_NAME}", highlight=False)
    return 0
