"""``jointlab plot LOG``: render a recorded log to PNG."""

from __future__ import annotations

import argparse
from pathlib import Path

from jointlab.cli.common import console

NAME = "plot"
HELP = "render a recorded log (CSV/NPZ/Parquet) to PNG"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab plot``."""
    parser.add_argument("log", help="log file written by a Recorder")
    parser.add_argument("--out", help="output image (default: the log path with .png)")


def run(args: argparse.Namespace) -> int:
    """Plot the log."""
    from jointlab.recording import load_log
    from jointlab.recording.plots import plot_log, save

    log = load_log(args.log)
    output = Path(args.out) if args.out else Path(args.log).with_suffix(".png")
    save(plot_log(log), output)
    console.print(f"wrote {output} ({len(log.time)} rows)")
    return 0
