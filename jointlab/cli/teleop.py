"""Teleoperate a follower arm from a leader arm, at the leader's bus rate.

The leader's servos are limp (torque off) and read once per follower period; each reading
becomes the follower's joint targets (--mapping), each step limited to --max-step degrees.
A live table shows both arms. Ctrl-C, the end of --seconds, a lost link or a servo's fault
stops it: the follower holds its position for one period, then disarms (a fault or a lost
link: the message, exit status 1).

Examples:
  jointlab teleop --leader "feetech:///dev/ttyACM1?robot=so101" --follower sim://so101
  jointlab teleop --leader emulated://so101 --follower emulated://so101 --max-step 5
"""

from __future__ import annotations

import argparse

from rich.live import Live

from jointlab.cli.arms import LiveTable, add_arm_arguments, open_teleop
from jointlab.cli.common import console, positive_float
from jointlab.cli.viewing import add_view_argument, viewing

NAME = "teleop"
HELP = "drive a follower arm from a leader arm (live table; Ctrl-C stops)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab teleop``."""
    add_arm_arguments(parser)
    parser.add_argument(
        "--seconds",
        type=positive_float,
        default=None,
        help="stop after this long (default: until Ctrl-C)",
    )
    parser.add_argument("--no-table", action="store_true", help="no live table")
    add_view_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Connect both arms, teleoperate, stop cleanly."""
    nth = 0 if args.leader == "keyboard" else 1  # the follower's place among the connections
    with viewing(
        args.view, None, title=f"follower {args.follower}", nth=nth, linger_seconds=args.linger
    ):
        return _teleoperate(args)


def _teleoperate(args: argparse.Namespace) -> int:
    teleop = open_teleop(args)
    try:
        period = teleop.follower.control_dt
        periods = None if args.seconds is None else max(1, round(args.seconds / period))
        title = f"{args.leader} -> {args.follower} ({1 / period:g} Hz)"
        table = LiveTable(teleop, title)
        console.print(f"teleoperating at {1 / period:g} Hz; Ctrl-C stops", highlight=False)
        if args.no_table:
            summary = teleop.run(periods)
        else:
            with Live(console=console, auto_refresh=False) as live:
                table.live = live
                summary = teleop.run(periods, on_sample=table)
            console.print()
    finally:
        teleop.leader.close()
        teleop.follower.close()
    how = {
        "periods": "done",
        "interrupted": "stopped by Ctrl-C",
        "until": "done",
        "link": f"link lost: {summary.error}",
        "fault": f"fault: {summary.error}",
    }[summary.stopped_by]
    console.print(
        f"{how}: {summary.periods} periods ({summary.periods * period:.2f} s), largest "
        f"tracking error {summary.max_tracking_error * 57.29578:.2f}°, step limited "
        f"in {summary.limited_periods} periods; the follower held, then disarmed",
        highlight=False,
    )
    return 1 if summary.stopped_by in ("link", "fault") else 0
