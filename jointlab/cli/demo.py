"""``jointlab demo``: simulate a robot running its demo program; log and plot."""

from __future__ import annotations

import argparse
from pathlib import Path

from jointlab.cli.programs import execute_program

NAME = "demo"
HELP = "simulate a robot running a command program; log + plot"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab demo``."""
    parser.add_argument("--robot", default="arm6", help="built-in name or robot file")
    parser.add_argument("--out", default="demo_output", help="output folder")
    parser.add_argument("--gui", action="store_true", help="open the PyBullet GUI (a display)")


def run(args: argparse.Namespace) -> int:
    """Run the demo program in PyBullet."""
    from jointlab.program import demo_program

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    url = f"sim://{args.robot}?gui={int(args.gui)}"
    return execute_program(url, demo_program, out, f"jointlab demo: {args.robot} in PyBullet")
