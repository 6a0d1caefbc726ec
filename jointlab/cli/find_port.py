"""Find the serial port of an arm: list the ports, unplug the arm, name the port that went.

Lists the serial ports, asks you to unplug the arm's USB cable and press Enter, lists them
again and prints the one that disappeared (then plug it back in). --ports considers only
the given paths or glob patterns (e.g. "/dev/ttyACM*", or pseudo-terminals in tests).

Examples:
  jointlab find-port
"""

from __future__ import annotations

import argparse

from jointlab.cli.common import console

NAME = "find-port"
HELP = "find an arm's serial port (unplug it when asked)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab find-port``."""
    parser.add_argument(
        "--ports", nargs="+", metavar="PATH", help="consider only these paths or glob patterns"
    )


def run(args: argparse.Namespace) -> int:
    """List, ask, list again, compare."""
    from jointlab.hardware.host.ports import serial_ports, vanished_port

    before = serial_ports(args.ports)
    console.print(f"serial ports now: {', '.join(before) or 'none'}", highlight=False)
    input("unplug the arm's USB cable (leave its power on), then press Enter ")
    after = serial_ports(args.ports)
    port = vanished_port(before, after)
    console.print(
        f"the arm is on {port}; plug it back in. Use it as "
        f"feetech://{port}?robot=so101 or dynamixel://{port}?robot=koch",
        highlight=False,
    )
    return 0
