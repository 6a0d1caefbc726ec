"""The ``jointlab`` command: one module per subcommand, listed in :data:`COMMANDS`.

A subcommand module defines ``NAME`` (the word after ``jointlab``), ``HELP`` (one line for
``jointlab --help``), ``add_arguments(parser)`` and ``run(args) -> int`` (the exit code).
Add a subcommand by writing such a module and adding its module name to :data:`COMMANDS`.
Modules import heavy packages (PyBullet, torch, Ray) inside ``run``, so ``jointlab --help``
stays fast. The conventions every subcommand follows are in :mod:`jointlab.cli.common`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from jointlab.cli.common import HelpFormatter, Parser, error_console

__all__ = ["COMMANDS", "build_parser", "main"]

#: Subcommand modules of :mod:`jointlab.cli`, in ``jointlab --help`` order.
COMMANDS: tuple[str, ...] = (
    "listing",
    "describe",
    "demo",
    "run",
    "view",
    "plot",
    "export",
    "emulate",
    "find_port",
    "setup_motors",
    "calibrate",
    "check",
    "train",
    "evaluate",
    "runs",
    "teleop",
    "record",
    "replay",
    "identify",
    "ros2",
    "gap",
    "acceptance",
    "bench",
)

EPILOG = """\
conventions:
  ROBOT     the first positional argument of every subcommand that uses a robot: a
            built-in name (arm6), a robot file (my_robot.yaml, .urdf) or a robot URL
            (sim://arm6?control_dt=0.004, emulated://arm6, serial:///dev/ttyACM0?robot=arm6);
            a name or file means sim:// of it. 'jointlab list' shows the names.
  outputs   one folder per run, OUT/NAME (--out, default 'runs'; --name, default from
            the subcommand and its inputs); a previous run is replaced only with --force.
  errors    exit status 2 and one line on stderr; --verbose shows tracebacks and
            PyBullet's own output.
"""


def _modules() -> list[ModuleType]:
    return [importlib.import_module(f"jointlab.cli.{name}") for name in COMMANDS]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``jointlab`` command."""
    from jointlab import __version__

    parser = Parser(
        prog="jointlab",
        description="JointLab: describe, simulate, train and drive robot actuator arrays.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"jointlab {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="show tracebacks and PyBullet's console output"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in _modules():
        command = sub.add_parser(
            module.NAME, help=module.HELP, description=module.__doc__, formatter_class=HelpFormatter
        )
        module.add_arguments(command)
        command.set_defaults(handler=module.run)
    return parser


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    return parser


def _late_positionals(
    sub: argparse.ArgumentParser, args: argparse.Namespace, extras: list[str]
) -> list[str]:
    """Give leftover words to optional positionals argparse left empty; return the rest.

    argparse fills positionals in one run before the first option, so in ``jointlab export
    LOG --to rerun OUT`` the optional OUT stays empty and ``OUT`` is left over.
    """
    for action in sub._actions:
        if not extras or extras[0].startswith("-"):
            break
        if action.option_strings or action.nargs != "?":
            continue
        if getattr(args, action.dest) == action.default:
            setattr(args, action.dest, extras.pop(0))
    return extras


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jointlab`` console script; returns the exit code."""
    from jointlab.errors import JointLabError

    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    extras = _late_positionals(_subparser(parser, args.command), args, extras)
    if extras:  # reported by the subcommand's parser, which knows its options
        _subparser(parser, args.command).error(f"unrecognized arguments: {' '.join(extras)}")
    if args.verbose:
        os.environ["JOINTLAB_VERBOSE"] = "1"  # PyBullet's output, here and in subprocesses
    # The entry point's one process-wide choice for LeRobot: datasets are local folders, so
    # Hugging Face's hub client stays offline unless the user set HF_HUB_OFFLINE.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        return int(args.handler(args) or 0)
    except JointLabError as exc:
        if args.verbose:
            raise
        message = " ".join(str(exc).split()) if "\n" not in str(exc).strip() else str(exc)
        error_console.print(
            f"jointlab {args.command}: error: {message}",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
        return 2
    except KeyboardInterrupt:
        print(file=sys.stderr)
        error_console.print(f"jointlab {args.command}: interrupted", highlight=False)
        return 130
    except EOFError:  # input() of an interactive step with stdin closed (a script, CI)
        if args.verbose:
            raise
        print(file=sys.stderr)
        error_console.print(
            f"jointlab {args.command}: error: this command waits for Enter "
            "on its terminal, but its input is closed; run it in a terminal",
            highlight=False,
        )
        return 2
