"""Print a robot's actuators, validate a robot file, or export it as URDF or YAML.

The table shows type, parent, range, home, limits, masses, brakes and couplings.

Examples:
  jointlab describe arm6
  jointlab describe so101 --check
  jointlab describe arm6 --urdf arm6.urdf
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.table import Table

from jointlab.cli.common import add_robot_argument, console, write_text
from jointlab.robots.urdf_io import description_to_urdf
from jointlab.robots.yaml_io import dump_yaml

if TYPE_CHECKING:
    from jointlab.robots import RobotDescription

NAME = "describe"
HELP = "table of actuators; export or validate a robot"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab describe``."""
    add_robot_argument(parser, urls=False)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--urdf", metavar="PATH", help="write URDF to PATH ('-' for stdout)")
    group.add_argument("--yaml", metavar="PATH", help="write robot YAML to PATH ('-' for stdout)")
    group.add_argument("--check", action="store_true", help="validate; non-zero exit on error")
    parser.add_argument("--force", action="store_true", help="replace an existing export file")


def run(args: argparse.Namespace) -> int:
    """Print, export or check the robot."""
    from jointlab.errors import ConfigurationError
    from jointlab.robots import load_robot

    if "://" in args.robot:
        raise ConfigurationError(f"describe reads a robot name or file, not the URL {args.robot}")
    if args.check:
        return _check(args.robot)
    description = load_robot(args.robot)
    if args.urdf is not None:
        write_text(args.urdf, description_to_urdf(description), force=args.force)
        return 0
    if args.yaml is not None:
        write_text(args.yaml, dump_yaml(description), force=args.force)
        return 0
    console.print(actuator_table(description))
    return 0


def _check(robot: str) -> int:
    """Validate ``robot``; default gains that cannot hold it (a load warning) are errors."""
    import warnings

    from jointlab.robots import load_robot
    from jointlab.robots.gains import UnstableGainsWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnstableGainsWarning)
        description = load_robot(robot)
    problems = [w for w in caught if issubclass(w.category, UnstableGainsWarning)]
    for warning in problems:
        console.print(f"[red]error[/red] {warning.message}")
    if problems:
        return 1
    console.print(
        f"[green]ok[/green] {description.name}: {description.dof} joints, "
        f"{len(description.actuators)} elements, tools {list(description.tool_names)}"
    )
    return 0


def actuator_table(description: RobotDescription) -> Table:
    """One row per actuator: type, parent, range, home, limits, mass, brakes, coupling.

    Every quantity carries its unit: rad, rad/s and N·m for rotary joints, m, m/s and N for
    linear ones, kg.
    """
    d = description
    table = Table(title=f"{d.name} ({d.dof} DoF, base {'fixed' if d.base.fixed else 'floating'})")
    for column in (
        "actuator",
        "type",
        "parent",
        "range",
        "home",
        "v max",
        "effort",
        "mass",
        "brakes",
        "coupling",
    ):
        table.add_column(column)
    for spec in d.actuators:
        mass = f"{spec.link.mass:.3g} kg" if spec.link else "-"
        if not spec.is_joint:
            table.add_row(spec.name, "fixed", spec.parent, "-", "-", "-", "-", mass, "-", "-")
            continue
        coupling = (
            " + ".join(f"{a:g}*{n}" for n, a in spec.coupling.alpha_leading)
            if spec.coupling
            else ""
        )
        unit, effort = ("m", "N") if spec.type.value == "linear" else ("rad", "N·m")
        table.add_row(
            spec.name,
            spec.type.value,
            spec.parent,
            f"[{spec.min:g}, {spec.max:g}] {unit}",
            f"{spec.home:g} {unit}",
            f"{spec.limits.velocity:g} {unit}/s",
            f"{spec.limits.effort:g} {effort}",
            mass,
            "yes" if spec.has_brakes else "",
            coupling,
        )
    return table
