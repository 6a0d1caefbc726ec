"""``jointlab emulate ROBOT``: the device emulator on a pseudo-terminal."""

from __future__ import annotations

import argparse

from jointlab.cli.common import console

NAME = "emulate"
HELP = "run the device emulator on a pseudo-terminal and print its path"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab emulate``."""
    parser.add_argument("robot", help="built-in name or robot file")
    parser.add_argument(
        "options", nargs=argparse.REMAINDER,
        help="emulator options: --rate HZ --watchdog-ms MS --stream-period N --tcp PORT "
             "--duration S --realtime",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the emulator until Ctrl-C (or its ``--duration``)."""
    from jointlab.hardware.emulator import main as emulator_main

    console.print(f"emulating {args.robot}; connect with serial://<printed path>?robot="
                  f"{args.robot} (Ctrl-C stops)", highlight=False)  # fmt: skip
    return emulator_main([args.robot, *args.options])
