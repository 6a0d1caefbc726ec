"""An owner's acceptance run of a servo arm, side by side with its twin.

``jointlab acceptance URL --robot so101`` connects to the arm at URL (``feetech://``,
``dynamixel://`` or ``emulated://``), checks the bus (every servo's model, firmware,
voltage, temperature, errors), measures the droop at three poses, a small step on each joint
(rise, overshoot, settling), backlash by reversal and the Sync Read latency, then runs the
same procedure on the twin (the robot file on an emulated bus, lockstep) and prints both
beside the P-only droop model. Safe by construction: small moves at a limited speed inside
the joint limits, and it holds, disarms and says why on any servo error or excess load
(docs/identification.md).

Examples:
  jointlab acceptance feetech:///dev/ttyACM0?robot=so101 --robot so101
  jointlab acceptance emulated://so101?lockstep=1 --robot so101 --joints shoulder_lift
  jointlab acceptance dynamixel:///dev/ttyUSB0?robot=koch --robot koch --no-twin
"""

from __future__ import annotations

import argparse
import json

from jointlab.cli.common import (
    HelpFormatter,
    add_output_arguments,
    console,
    planned_folder,
    positive_float,
    robot_label,
    run_folder,
)

NAME = "acceptance"
HELP = "check a servo arm (bus, droop, steps, backlash, latency) beside its twin"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab acceptance``."""
    parser.formatter_class = HelpFormatter
    parser.add_argument("url", metavar="URL", help="the arm: feetech://, dynamixel://, emulated://")
    parser.add_argument("--robot", required=True, help="its robot file or built-in name")
    parser.add_argument(
        "--joints", nargs="+", metavar="JOINT", help="joints to step (default: all)"
    )
    parser.add_argument(
        "--step", type=positive_float, default=5.0, help="step size, degrees (<= 10)"
    )
    parser.add_argument(
        "--settle", type=positive_float, default=0.5, help="seconds each step and hold lasts"
    )
    parser.add_argument(
        "--speed",
        type=positive_float,
        default=0.5,
        help="largest speed of the moves between poses, rad/s (<= 2)",
    )
    parser.add_argument("--no-twin", action="store_true", help="measure the arm only")
    add_output_arguments(parser, "default name: acceptance-ROBOT-URL")


def _measure(url: str, robot: str, args: argparse.Namespace) -> object:
    import numpy as np

    import jointlab
    from jointlab.errors import ConfigurationError
    from jointlab.identify.servo.acceptance import run_acceptance
    from jointlab.robots import load_robot

    description = load_robot(robot)
    named = url.startswith("emulated://") or "robot=" in url
    options = {} if named else {"description": description}
    with jointlab.connect(url, **options) as arm:
        if not hasattr(arm, "driver"):
            raise ConfigurationError(
                f"{url}: not a servo bus; acceptance needs feetech://, dynamixel:// or "
                "emulated:// of a robot with a bus"
            )
        return run_acceptance(
            arm,
            url=url,
            joints=args.joints,
            step=np.radians(args.step),
            settle=args.settle,
            speed=args.speed,
        )


def run(args: argparse.Namespace) -> int:
    """Measure the arm, then its twin; print and write both."""
    from rich.table import Table

    from jointlab.errors import ConfigurationError
    from jointlab.identify.servo.acceptance import side_by_side
    from jointlab.robots import load_robot

    if args.step > 10.0:
        raise ConfigurationError(f"--step {args.step}: at most 10 degrees (a small step)")
    if args.speed > 2.0:
        raise ConfigurationError(f"--speed {args.speed}: at most 2 rad/s (the run is a check)")
    description = load_robot(args.robot)
    if description.bus is None:
        raise ConfigurationError(
            f"--robot {args.robot}: no bus section; acceptance is for "
            "servo arms (so101, koch or a file with a bus)"
        )
    folder = planned_folder(args, f"acceptance-{description.name}-{robot_label(args.url)}")
    with console.status(f"acceptance run on {args.url}..."):
        arm = _measure(args.url, args.robot, args)
    console.print(arm.summary(), highlight=False)  # type: ignore[attr-defined]
    twin = None
    if not args.no_twin:
        with console.status("the same run on the twin..."):
            twin = _measure(f"emulated://{args.robot}?lockstep=1", args.robot, args)
        table = Table(title=f"{args.url} beside its twin (emulated {description.name})")
        for column in ("quantity", "joint", "arm", "twin", "P-only model"):
            table.add_column(column, justify="left" if column in ("quantity", "joint") else "right")
        for row in side_by_side(arm, twin):  # type: ignore[arg-type]
            table.add_row(*row)
        console.print(table)
    with run_folder(folder) as work:
        (work / "acceptance.txt").write_text(arm.summary() + "\n")  # type: ignore[attr-defined]
        if twin is not None:
            (work / "twin.txt").write_text(twin.summary() + "\n")  # type: ignore[attr-defined]
            rows = side_by_side(arm, twin)  # type: ignore[arg-type]
            (work / "side_by_side.json").write_text(json.dumps(rows, indent=1) + "\n")
    console.print(f"wrote {folder}", highlight=False)
    return 0 if arm.passed else 1  # type: ignore[attr-defined]
