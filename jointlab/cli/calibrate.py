"""Calibrate a servo arm: each joint's zero, direction and range, into a calibration file.

Manual (default): every servo is limp; move each joint to its minimum and then to its maximum
as asked, pressing Enter each time. Automatic (--auto): stall-based homing against the hard
stops at a safe torque. The file is written beside the robot file (a built-in robot's in
$JOINTLAB_CALIBRATION_DIR, default ~/.config/jointlab); connect() loads it from there.

Example: jointlab calibrate feetech:///dev/ttyACM0 --robot so101
Example: jointlab calibrate "emulated://so101?calibrated=0&offset_error=150" --robot so101 --auto
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jointlab.cli.common import console, positive_float

NAME = "calibrate"
HELP = "calibrate a servo arm: record zero, direction and range per joint"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab calibrate``."""
    parser.add_argument("url", help="feetech:///dev/ttyACM0, dynamixel:///dev/ttyUSB0 or "
                        "emulated://so101?calibrated=0")  # fmt: skip
    parser.add_argument("--robot", required=True, help="built-in name or robot file")
    parser.add_argument(
        "--auto", action="store_true",
        help="stall-based homing against the hard stops (default: manual)",
    )  # fmt: skip
    parser.add_argument("--torque", type=positive_float, default=0.8,
                        help="--auto: safe torque, a fraction of stall torque")  # fmt: skip
    parser.add_argument("--speed", type=positive_float, default=0.8,
                        help="--auto: joint speed of the homing moves, rad/s")  # fmt: skip
    parser.add_argument(
        "--joints", nargs="+", metavar="JOINT",
        help="--auto: home only these (the others keep the file's values)",
    )  # fmt: skip
    parser.add_argument("--out", help="calibration file (default: beside the robot file)")


def run(args: argparse.Namespace) -> int:
    """Connect without a calibration, calibrate, write the file."""
    import jointlab
    from jointlab.errors import ConfigurationError
    from jointlab.hardware.servo.calibration import calibration_path
    from jointlab.hardware.servo.homing import calibrate_automatic, calibrate_manual

    url = args.url
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme not in ("dynamixel", "feetech", "emulated"):
        raise ConfigurationError(
            f"calibrate needs a servo bus URL (dynamixel://, feetech:// or emulated://), "
            f"got {url!r}"
        )
    if "robot=" not in url and not url.startswith("emulated://"):
        url += ("&" if "?" in url else "?") + f"robot={args.robot}"
    with jointlab.connect(url, calibration=False) as robot:
        if args.auto:
            console.print(f"homing {robot.description.name} against its hard stops at "
                          f"{args.torque:.0%} of stall torque", highlight=False)  # fmt: skip
            result = calibrate_automatic(
                robot, torque_fraction=args.torque, speed=args.speed, joints=args.joints,
                on_joint=lambda name: console.print(f"  homing {name}", highlight=False),
            )  # fmt: skip
        else:
            console.print("manual calibration: the servos are limp; move each joint as asked "
                          "and press Enter", highlight=False)  # fmt: skip
            result = calibrate_manual(robot, lambda text: input(f"  {text}, then Enter "))
        target = Path(args.out) if args.out else calibration_path(robot.description)
    path = result.save(target)
    for joint in result.joints:
        console.print(f"  {joint.joint:>14}: id {joint.id}, offset {joint.offset:.1f} ticks, "
                      f"direction {joint.direction:+d}, range [{joint.min_ticks}, "
                      f"{joint.max_ticks}] ticks", highlight=False)  # fmt: skip
    console.print(f"wrote {path}; connect() loads it from there", highlight=False)
    return 0
