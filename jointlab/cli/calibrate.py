r"""Calibrate a servo arm: each joint's zero, direction and range, into a calibration file.

Range of motion (default, LeRobot's method): every servo is limp; put the arm in the middle
pose and press Enter (the servos' Homing Offsets are written so it reads half a turn), then
move every joint through its whole range while a live table shows each joint's minimum and
maximum, and press Enter once. ``--auto``: stall-based homing against the hard stops at a
safe torque (at most 25 % of stall by default, ``--torque`` to change it). ``--manual``: the
older per-joint prompts (two Enters per joint). The file is written beside the robot file (a
built-in robot's in $JOINTLAB_CALIBRATION_DIR, default ~/.config/jointlab); connect() loads
it from there.

``--import-lerobot FILE`` converts LeRobot's calibration JSON into that file (with a URL,
it also writes the file's Homing Offsets and position limits to the servos);
``--export-lerobot FILE`` writes the calibration as LeRobot's JSON.

Examples:
  jointlab calibrate feetech:///dev/ttyACM0 --robot so101
  jointlab calibrate "emulated://so101?calibrated=0&offset_error=150" --robot so101 --auto
  jointlab calibrate --robot so101 --import-lerobot \
      ~/.cache/huggingface/lerobot/calibration/robots/so101_follower/my_arm.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from jointlab.cli.common import console, positive_float

NAME = "calibrate"
HELP = "calibrate a servo arm (range of motion, --auto, LeRobot import/export)"

#: Seconds between two refreshes of the live table.
REFRESH = 0.1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab calibrate``."""
    parser.add_argument(
        "url",
        nargs="?",
        help="feetech:///dev/ttyACM0, dynamixel:///dev/ttyUSB0 "
        "or emulated://so101?calibrated=0 (optional with --import-lerobot and "
        "--export-lerobot)",
    )
    parser.add_argument("--robot", required=True, help="built-in name or robot file")
    method = parser.add_mutually_exclusive_group()
    method.add_argument(
        "--auto",
        action="store_true",
        help="stall-based homing against the hard stops at a safe torque",
    )
    method.add_argument(
        "--manual",
        action="store_true",
        help="per-joint prompts: each joint to its minimum, then its maximum",
    )
    method.add_argument(
        "--import-lerobot",
        metavar="FILE",
        help="convert LeRobot's calibration JSON into JointLab's file",
    )
    method.add_argument(
        "--export-lerobot",
        metavar="FILE",
        help="write JointLab's calibration as LeRobot's calibration JSON",
    )
    parser.add_argument(
        "--torque",
        type=positive_float,
        default=None,
        help="--auto: homing torque, a fraction of stall torque (default: the "
        "servo model's safe value, at most 0.25; at most 1)",
    )
    parser.add_argument(
        "--speed",
        type=positive_float,
        default=0.8,
        help="--auto: joint speed of the homing moves, rad/s",
    )
    parser.add_argument(
        "--joints",
        nargs="+",
        metavar="JOINT",
        help="--auto: home only these (the others keep the file's values)",
    )
    parser.add_argument(
        "--out",
        help="calibration file to write, or with --export-lerobot to "
        "read (default: beside the robot file)",
    )


def enter_pressed() -> bool:
    """True if a line (Enter) is waiting on stdin; reads it. Never blocks."""
    import select

    ready, _, _ = select.select([sys.stdin], [], [], 0)
    if ready:
        sys.stdin.readline()
        return True
    return False


def _bus_url(url: str, robot: str) -> str:
    from jointlab.errors import ConfigurationError

    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in ("dynamixel", "feetech", "emulated"):
        raise ConfigurationError(
            f"calibrate needs a servo bus URL (dynamixel://, feetech:// or emulated://), "
            f"got {url!r}"
        )
    if "robot=" not in url and not url.startswith("emulated://"):
        url += ("&" if "?" in url else "?") + f"robot={robot}"
    return url


def _table(rows: Any) -> Any:
    from rich.table import Table

    table = Table(title="move every joint through its whole range, then press Enter")
    for column in ("joint", "id", "min", "position", "max"):
        table.add_column(column, justify="left" if column == "joint" else "right")
    for k, joint in enumerate(rows.joints):
        table.add_row(
            joint, str(rows.ids[k]), str(rows.low[k]), str(rows.position[k]), str(rows.high[k])
        )
    return table


def _range_of_motion(robot: Any) -> Any:
    from rich.live import Live

    from jointlab.hardware.servo_host.range_of_motion import calibrate_range_of_motion

    console.print("range-of-motion calibration: the servos are limp", highlight=False)
    last = [0.0]
    with Live(console=console, auto_refresh=False, transient=False) as live:

        def show(rows: Any) -> None:
            now = time.monotonic()
            if now - last[0] >= REFRESH:
                last[0] = now
                live.update(_table(rows), refresh=True)

        def middle() -> None:
            input("  put every joint in the middle of its range, then press Enter ")

        return calibrate_range_of_motion(robot, middle, lambda: enter_pressed(), show)


def _print(result: Any) -> None:
    for joint in result.joints:
        console.print(
            f"  {joint.joint:>14}: id {joint.id}, offset {joint.offset:.1f} ticks, "
            f"direction {joint.direction:+d}, range [{joint.min_ticks}, "
            f"{joint.max_ticks}] ticks",
            highlight=False,
        )


def _import(args: argparse.Namespace, description: Any, target: Path) -> int:
    import jointlab
    from jointlab.hardware.servo_host.lerobot_calibration import import_lerobot
    from jointlab.hardware.servo_host.range_of_motion import write_limits

    result = import_lerobot(args.import_lerobot, description)  # validated before any write
    if args.url:
        with jointlab.connect(_bus_url(args.url, args.robot), calibration=False) as robot:
            write_limits(
                robot,
                [j.homing_offset for j in result.joints],
                [j.min_ticks for j in result.joints],
                [j.max_ticks for j in result.joints],
            )
        console.print("wrote the Homing Offsets and position limits to the servos", highlight=False)
    path = result.save(target)
    _print(result)
    console.print(f"imported {args.import_lerobot}; wrote {path}", highlight=False)
    return 0


def _export(args: argparse.Namespace, description: Any, source: Path) -> int:
    import dataclasses

    import jointlab
    from jointlab.hardware.servo_host.calibration import Calibration
    from jointlab.hardware.servo_host.lerobot_calibration import export_lerobot

    calibration = Calibration.load(source)
    calibration.check(description)
    if args.url and any(j.homing_offset is None for j in calibration.joints):
        with jointlab.connect(_bus_url(args.url, args.robot), calibration=False) as robot:
            joints = tuple(
                dataclasses.replace(j, homing_offset=robot.read_register(i, "homing_offset"))
                for i, j in enumerate(calibration.joints)
            )
        calibration = dataclasses.replace(calibration, joints=joints)
    path = export_lerobot(calibration, args.export_lerobot)
    console.print(f"wrote {path} (LeRobot's calibration JSON) from {source}", highlight=False)
    return 0


def run(args: argparse.Namespace) -> int:
    """Connect without a calibration, calibrate, write the file (or convert LeRobot's)."""
    import jointlab
    from jointlab.errors import ConfigurationError
    from jointlab.hardware.servo_host.calibration import calibration_path
    from jointlab.hardware.servo_host.homing import (
        calibrate_automatic,
        calibrate_manual,
        safe_fraction,
    )
    from jointlab.robots import load_robot

    description = load_robot(args.robot)
    target = Path(args.out) if args.out else calibration_path(description)
    if args.import_lerobot:
        return _import(args, description, target)
    if args.export_lerobot:
        return _export(args, description, target)
    if not args.url:
        raise ConfigurationError("calibrate needs the arm's bus URL, e.g. feetech:///dev/ttyACM0")
    with jointlab.connect(_bus_url(args.url, args.robot), calibration=False) as robot:
        if args.auto:
            fraction = args.torque if args.torque is not None else safe_fraction(robot)
            console.print(
                f"homing {robot.description.name} against its hard stops at "
                f"{fraction:.0%} of stall torque",
                highlight=False,
            )
            result = calibrate_automatic(
                robot,
                torque_fraction=fraction,
                speed=args.speed,
                joints=args.joints,
                on_joint=lambda name: console.print(f"  homing {name}", highlight=False),
            )
        elif args.manual:
            console.print(
                "manual calibration: the servos are limp; move each joint as asked and press Enter",
                highlight=False,
            )
            result = calibrate_manual(robot, lambda text: input(f"  {text}, then Enter "))
        else:
            result = _range_of_motion(robot)
    path = result.save(target)
    _print(result)
    console.print(f"wrote {path}; connect() loads it from there", highlight=False)
    return 0
