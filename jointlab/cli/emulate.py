"""Run the device emulator on a pseudo-terminal (or loopback TCP) and print its path.

The emulator is the device firmware around a simulated robot; it runs until Ctrl-C or
--duration. A robot with a servo bus (so101, koch) gets its emulated Dynamixel or Feetech
bus instead, which prints 'port: PATH' as its first line (--bus jointlab: the device
emulator anyway).

Connect to the printed path from another terminal: jointlab check
"serial:///dev/pts/N?robot=arm6" for the device emulator, "feetech:///dev/pts/N?robot=so101"
for an emulated bus.

Examples:
  jointlab emulate arm6
  jointlab emulate so101
"""

from __future__ import annotations

import argparse

from jointlab.cli.common import add_robot_argument, console, positive_float, positive_int

NAME = "emulate"
HELP = "run the device emulator on a pseudo-terminal and print its path"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab emulate`` (passed on to the emulator)."""
    add_robot_argument(parser, urls=False)
    parser.add_argument("--rate", type=positive_int, default=1000, help="tick rate, Hz")
    parser.add_argument(
        "--watchdog-ms", type=int, default=100, help="power-up watchdog, ms (0 disables it)"
    )
    parser.add_argument(
        "--stream-period", type=positive_int, default=1, help="one DATA STATE every N ticks"
    )
    parser.add_argument(
        "--tcp",
        type=int,
        metavar="PORT",
        help="serve socket://127.0.0.1:PORT, not a pty (0: any port)",
    )
    parser.add_argument(
        "--duration",
        type=positive_float,
        metavar="SECONDS",
        help="stop after this long (default: until Ctrl-C)",
    )
    parser.add_argument(
        "--lockstep",
        action="store_true",
        help="virtual time: tick only when the host asks (connect with ?lockstep=1)",
    )
    parser.add_argument(
        "--fifo", action="store_true", help="ask for SCHED_FIFO (root or CAP_SYS_NICE)"
    )
    parser.add_argument(
        "--bus",
        choices=("jointlab", "dynamixel", "feetech"),
        help="the JointLab device protocol or the robot's servo bus "
        "(default: the robot's bus if it has one)",
    )
    parser.add_argument(
        "--baud", type=positive_int, help="servo bus: line rate, bit/s (default: the robot file's)"
    )
    parser.add_argument("--seed", type=int, default=0, help="servo bus: simulator seed")


def run(args: argparse.Namespace) -> int:
    """Check the robot, then run the emulator in this process."""
    from jointlab.errors import ConfigurationError
    from jointlab.hardware.emulator import main as emulator_main
    from jointlab.robots import load_robot

    if "://" in args.robot:
        raise ConfigurationError(f"emulate runs a robot name or file, not the URL {args.robot}")
    description = load_robot(args.robot)  # a typo fails here, before anything is printed
    bus = args.bus or ("jointlab" if description.bus is None else description.bus.protocol.value)
    if bus != "jointlab":
        return _servo_bus(args, description, bus)
    argv = [
        args.robot,
        "--rate",
        str(args.rate),
        "--watchdog-ms",
        str(args.watchdog_ms),
        "--stream-period",
        str(args.stream_period),
    ]
    if args.tcp is not None:
        argv += ["--tcp", str(args.tcp)]
    if args.duration is not None:
        argv += ["--duration", str(args.duration)]
    if args.lockstep:
        argv.append("--lockstep")
    if args.fifo:
        argv.append("--fifo")
    lockstep = "&lockstep=1" if args.lockstep else ""
    console.print(
        f"emulating {description.name}; connect with serial://<the path printed "
        f"below>?robot={args.robot}{lockstep} (Ctrl-C stops)",
        highlight=False,
    )
    return emulator_main(argv)


def _servo_bus(args: argparse.Namespace, description: object, bus: str) -> int:
    """The robot's emulated servo bus; it prints ``port: PATH`` first."""
    from jointlab.errors import ConfigurationError
    from jointlab.hardware.servo_emulator.emulator import main as bus_main

    have = description.bus  # type: ignore[attr-defined]
    if have is None or have.protocol.value != bus:
        owned = "no bus section" if have is None else f"a {have.protocol.value} bus"
        fix = "jointlab" if have is None else have.protocol.value
        raise ConfigurationError(
            f"robot {description.name!r} has {owned}: emulate it with --bus {fix}"  # type: ignore[attr-defined]
        )
    argv = [args.robot, "--seed", str(args.seed)]
    if args.baud is not None:
        argv += ["--baud", str(args.baud)]
    if args.duration is not None:
        argv += ["--duration", str(args.duration)]
    return bus_main(argv)
