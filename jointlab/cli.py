"""The ``jointlab`` command: demo, describe, run, plot, emulate, train, bench."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from jointlab.errors import JointLabError

console = Console(width=None if sys.stdout.isatty() else 140)


def _describe(args: argparse.Namespace) -> int:
    from jointlab.robots import load_robot

    description = load_robot(args.robot)
    if args.check:
        console.print(
            f"[green]ok[/green] {description.name}: {description.dof} joints, "
            f"{len(description.actuators)} elements, tools {list(description.tool_names)}"
        )
        return 0
    if args.urdf is not None:
        _write(args.urdf, description.to_urdf())
        return 0
    if args.yaml is not None:
        _write(args.yaml, description.to_yaml())
        return 0
    table = Table(title=f"{description.name} ({description.dof} DoF, base "
                        f"{'fixed' if description.base.fixed else 'floating'})")  # fmt: skip
    for column in ("actuator", "type", "parent", "range", "home", "v max", "effort", "mass kg",
                   "brakes", "coupling"):  # fmt: skip
        table.add_column(column)
    for spec in description.actuators:
        mass = f"{spec.link.mass:.3g}" if spec.link else "-"
        if not spec.is_joint:
            table.add_row(spec.name, "fixed", spec.parent, "-", "-", "-", "-", mass, "-", "-")
            continue
        coupling = (
            " + ".join(f"{a:g}*{n}" for n, a in spec.coupling.alpha_leading)
            if spec.coupling
            else ""
        )
        table.add_row(
            spec.name, spec.type.value, spec.parent, f"[{spec.min:g}, {spec.max:g}]",
            f"{spec.home:g}", f"{spec.limits.velocity:g}", f"{spec.limits.effort:g}", mass,
            "yes" if spec.has_brakes else "", coupling,
        )  # fmt: skip
    console.print(table)
    return 0


def _write(target: str, text: str) -> None:
    if target == "-":
        sys.stdout.write(text)
    else:
        Path(target).write_text(text)
        console.print(f"wrote {target}")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``jointlab`` command."""
    parser = argparse.ArgumentParser(prog="jointlab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    describe = sub.add_parser("describe", help="table of actuators; export or validate a robot")
    describe.add_argument("robot", help="built-in name, .yaml or .urdf path")
    group = describe.add_mutually_exclusive_group()
    group.add_argument("--urdf", metavar="PATH", help="write URDF to PATH ('-' for stdout)")
    group.add_argument("--yaml", metavar="PATH", help="write robot YAML to PATH ('-' for stdout)")
    group.add_argument("--check", action="store_true", help="validate; non-zero exit on error")
    describe.set_defaults(handler=_describe)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jointlab`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except JointLabError as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        return 2
