"""List what JointLab knows by name.

Built-in robots, Gymnasium environments, action modes, robot URL schemes (backends),
training tasks and program verbs.

Examples:
  jointlab list
  jointlab list robots verbs
"""

from __future__ import annotations

import argparse
import re

from rich.table import Table

from jointlab.cli.common import console, did_you_mean
from jointlab.errors import ConfigurationError

NAME = "list"
HELP = "list robots, environments, action modes, backends, tasks and program verbs"
WHAT = ("robots", "envs", "actions", "backends", "tasks", "verbs")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab list``."""
    parser.add_argument(
        "what", nargs="*", metavar="WHAT", help=f"any of {', '.join(WHAT)} (default: all)"
    )


def _robots() -> Table:
    from jointlab.robots import builtin_robots, load_robot

    table = Table(title="robots (ROBOT arguments, sim://NAME)")
    for column in ("name", "joints", "base", "tools"):
        table.add_column(column)
    for name in builtin_robots():
        d = load_robot(name)
        table.add_row(
            name, str(d.dof), "fixed" if d.base.fixed else "floating", ", ".join(d.tool_names)
        )
    return table


def _envs() -> Table:
    from jointlab.envs.registration import ENV_SPECS
    from jointlab.envs.tasks import task_class

    table = Table(title="environments (gymnasium.make after import jointlab.envs)")
    for column in ("id", "task", "default robot", "steps per episode"):
        table.add_column(column)
    for spec in ENV_SPECS:
        table.add_row(
            spec.id, spec.task, task_class(spec.task).default_robot, str(spec.max_episode_steps)
        )
    return table


def _simple(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title)
    table.add_column("name")
    table.add_column("what")
    for row in rows:
        table.add_row(*row)
    return table


def _actions() -> Table:
    from jointlab.envs.actions import ACTION_MODES

    what = {
        "torque": "joint torques",
        "position": "position targets, default gains",
        "position_velocity": "position and velocity targets",
        "torque_and_position": "feed-forward torque and position targets",
        "position_and_gains": "position targets with their kp and kd",
        "njoint": "the five NJointAction fields (a Dict space)",
    }
    return _simple("action modes (action_mode=)", [(m, what.get(m, "")) for m in ACTION_MODES])


def _backends() -> Table:
    from jointlab.connection import schemes

    what = {
        "sim": "PyBullet: sim://NAME_OR_PATH?dt=0.001&control_dt=0.001&gui=0&seed=0",
        "emulated": "device emulator on a pty: emulated://NAME_OR_PATH?stream_period=1",
        "serial": "a device: serial:///dev/ttyACM0?robot=NAME, serial://socket://HOST:PORT",
        "dynamixel": "a Dynamixel servo arm: dynamixel:///dev/ttyUSB0?robot=koch",
        "feetech": "a Feetech servo arm: feetech:///dev/ttyACM0?robot=so101",
    }
    return _simple("backends (robot URL schemes)", [(s, what.get(s, "")) for s in schemes()])


def _tasks() -> Table:
    from jointlab.envs.training import TASKS

    rows = [(name, f"{env_id} {kwargs}") for name, (env_id, kwargs) in TASKS.items()]
    return _simple("training tasks (jointlab train TASK)", rows)


def _verbs() -> Table:
    """Each verb with its arguments and the first line of its Commander method's docstring."""
    import inspect

    from jointlab.controllers import Commander
    from jointlab.program import VERBS

    table = Table(title="program verbs (docs/programs.md; every step also takes 'for: SECONDS')")
    for column in ("verb", "arguments", "what"):
        table.add_column(column)
    for verb in VERBS:
        if verb == "wait":
            table.add_row(
                verb,
                "SECONDS",
                "keep doing what the robot does for SECONDS of robot time (wait: 0.5)",
            )
            continue
        method = getattr(Commander, verb)
        names = [n for n in inspect.signature(method).parameters if n != "self"]
        what = re.sub(r":\w+:`([^`]*)`", r"\1", inspect.getdoc(method).splitlines()[0])
        what = what.replace("``", "")
        table.add_row(verb, ", ".join(names), what)
    return table


def run(args: argparse.Namespace) -> int:
    """Print the requested tables."""
    tables = {
        "robots": _robots,
        "envs": _envs,
        "actions": _actions,
        "backends": _backends,
        "tasks": _tasks,
        "verbs": _verbs,
    }
    for name in args.what:
        if name not in tables:
            raise ConfigurationError(
                f"nothing to list as {name!r}; choose from {list(WHAT)}{did_you_mean(name, WHAT)}"
            )
    for name in args.what or WHAT:
        console.print(tables[name]())
    return 0
