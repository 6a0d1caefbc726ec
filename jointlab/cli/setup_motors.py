"""Set up a new arm's servos, one at a time: each gets its id and the bus's baud.

For each joint (gripper first, as the arm is assembled), connect that servo alone to the
bus adapter and press Enter: the servo is found at whatever id and baud it has (a new one:
id 1 at the factory baud), checked to be the robot file's model, given the id of
bus.servos.JOINT.id and the baud of bus.baud, and verified by a ping at the new id.
--joints sets up only those joints (e.g. one replaced servo).

Examples:
  jointlab setup-motors feetech:///dev/ttyACM0 --robot so101
"""

from __future__ import annotations

import argparse

from jointlab.cli.common import console

NAME = "setup-motors"
HELP = "give a new arm's servos their ids and the bus baud, one servo at a time"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab setup-motors``."""
    parser.add_argument("url", help="the bus: feetech:///dev/ttyACM0 or dynamixel:///dev/ttyUSB0")
    parser.add_argument("--robot", required=True, help="built-in name or robot file (its bus)")
    parser.add_argument("--joints", nargs="+", metavar="JOINT", help="only these joints")
    parser.add_argument(
        "--yes", action="store_true", help="do not wait for Enter before each servo"
    )


def run(args: argparse.Namespace) -> int:
    """Ask for each servo in turn, find it, write its id and baud, verify."""
    from jointlab.connection import parse_url
    from jointlab.errors import ConfigurationError
    from jointlab.hardware.servo_host.setup import setup_servo
    from jointlab.robots import load_robot

    description = load_robot(args.robot)
    bus = description.bus
    if bus is None:
        raise ConfigurationError(f"robot {description.name!r} has no bus section (no servos)")
    url = parse_url(args.url)
    if url.scheme != bus.protocol.value or not url.target:
        raise ConfigurationError(
            f"{args.url}: robot {description.name!r} has a {bus.protocol.value} bus; give "
            f"{bus.protocol.value}:///dev/ttyACM0 (its port)"
        )
    timeout_ms = float(url.query.get("timeout_ms", 0.0))
    joints = [s.joint for s in reversed(bus.servos)]
    if args.joints:
        unknown = [j for j in args.joints if j not in joints]
        if unknown:
            raise ConfigurationError(
                f"--joints: {unknown} are not servos of {description.name!r}; it has {joints[::-1]}"
            )
        joints = [j for j in joints if j in args.joints]
    ids = {s.joint: s.id for s in bus.servos}
    for joint in joints:
        if not args.yes:
            input(
                f"connect only the {joint} servo (it becomes id {ids[joint]}) to "
                f"{url.target}, power it, then press Enter "
            )
        result = setup_servo(url.target, description, joint, timeout_ms)
        if result.changed:
            console.print(
                f"  {joint}: {result.model} found at id {result.found_id}, "
                f"{result.found_baud} bit/s; now id {result.id}, {result.baud} bit/s "
                "(verified)",
                highlight=False,
            )
        else:
            console.print(
                f"  {joint}: {result.model} already id {result.id} at {result.baud} bit/s",
                highlight=False,
            )
    console.print(
        f"{len(joints)} servo(s) set up; connect them all and run: jointlab check "
        f"'{url.scheme}://{url.target}?robot={args.robot}'",
        highlight=False,
    )
    return 0
