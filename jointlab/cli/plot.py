"""Render a recorded log to an image (PNG, PDF or SVG).

Any log a Recorder wrote (jointlab run, demo, record): per joint, the position against
its target, the tracking error and the torque as a fraction of its limit, with the
commands and events.

Examples:
  jointlab plot runs/demo-arm6/log.npz --out demo.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jointlab.cli.common import check_new_file, console

NAME = "plot"
HELP = "render a recorded log to PNG (or PDF, SVG)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab plot``."""
    parser.add_argument("log", metavar="LOG", help="log file written by a Recorder")
    parser.add_argument("--out", metavar="IMAGE", help="output image (default: LOG with .png)")
    parser.add_argument("--force", action="store_true", help="replace an existing image")


def run(args: argparse.Namespace) -> int:
    """Plot the log."""
    from jointlab.recording import load_log
    from jointlab.recording.plots import plot_log, save

    log = load_log(Path(args.log).expanduser())
    output = check_new_file(args.out or Path(args.log).expanduser().with_suffix(".png"), args.force)
    save(plot_log(log), output)
    console.print(f"wrote {output} ({len(log.time)} rows)", highlight=False)
    return 0
