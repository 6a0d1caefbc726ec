"""What ``jointlab teleop`` and ``jointlab record`` share: the two arms and the live table.

Not a subcommand. ``--leader URL`` is a servo arm read with its torque off (a
``feetech://``/``dynamixel://`` bus with ``?robot=``, or ``emulated://so101``); ``--follower
URL`` is any robot. A ``sim://`` follower without ``control_dt`` steps at the leader's bus
period, so the loop runs at the bus rate.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from rich.table import Table

from jointlab.cli.common import positive_float, robot_url
from jointlab.errors import ConfigurationError

__all__ = ["LiveTable", "add_arm_arguments", "open_teleop"]


def add_arm_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    """``--leader``, ``--follower``, ``--mapping``, ``--max-step``."""
    parser.add_argument(
        "--leader",
        metavar="URL",
        required=required,
        help="the leader arm (torque off): feetech:///dev/ttyACM1?robot=so101, emulated://so101;"
        " or 'keyboard' (q..u raise joints 0-6, a..j lower them, space: back to the start)",
    )
    parser.add_argument(
        "--follower",
        metavar="URL",
        required=required,
        help="the follower: sim://so101, emulated://so101, feetech:///dev/ttyACM0?robot=so101",
    )
    parser.add_argument(
        "--mapping",
        choices=("direct", "range"),
        default="direct",
        help="direct: leader angle = follower target (same arms); range: the "
        "leader's range scaled onto the follower's",
    )
    parser.add_argument(
        "--max-step",
        type=positive_float,
        default=None,
        metavar="DEG",
        help="largest target step per period from the follower's position, "
        "degrees (like LeRobot's max_relative_target; default: none)",
    )


def _with_period(url: str, period: float) -> str:
    from jointlab.connection import parse_url

    parsed = parse_url(url)
    if parsed.scheme != "sim" or "control_dt" in parsed.query:
        return url
    return url + ("&" if "?" in url else "?") + f"control_dt={period:g}"


def open_teleop(args: argparse.Namespace) -> Any:
    """Connect the leader, then the follower; the :class:`~jointlab.teleop.Teleop` (owns both).

    Raises:
        ConfigurationError: the leader is the follower, or the arms do not pair.
    """
    import jointlab
    from jointlab.teleop import KeyboardTeleoperator, LeaderArm, Teleop

    if args.leader == "keyboard":  # the follower first: the keys start from its pose
        follower = jointlab.connect(robot_url(args.follower))
        try:
            keyboard = KeyboardTeleoperator(
                follower.description, start=follower.read().position, period=follower.control_dt
            )
            max_step = None if args.max_step is None else np.radians(args.max_step)
            return Teleop(keyboard, follower, mapping=args.mapping, max_step=max_step)
        except BaseException:
            follower.close()
            raise
    leader_url, follower_url = robot_url(args.leader), robot_url(args.follower)
    if leader_url == follower_url and not leader_url.startswith(("sim://", "emulated://")):
        raise ConfigurationError(f"--leader and --follower are the same robot: {leader_url}")
    leader = LeaderArm(jointlab.connect(leader_url))
    try:
        follower = jointlab.connect(_with_period(follower_url, leader.period or 0.005))
    except BaseException:
        leader.close()
        raise
    try:
        max_step = None if args.max_step is None else np.radians(args.max_step)
        return Teleop(leader, follower, mapping=args.mapping, max_step=max_step)
    except BaseException:
        follower.close()
        leader.close()
        raise


class LiveTable:
    """A rich table of both arms, refreshed at most ``rate`` times a second.

    Columns per follower joint: the leader's reading, the target, the follower's position
    and the tracking error, all in degrees. (A live 3-D view attaches the same way: a
    callable taking each :class:`~jointlab.teleop.TeleopSample`.)
    """

    def __init__(self, teleop: Any, title: str, rate: float = 10.0) -> None:
        self.teleop, self.title, self.rate = teleop, title, rate
        self._last = -1.0
        self.live: Any = None

    def table(self, sample: Any) -> Table:
        """The table of ``sample``."""
        names = self.teleop.follower.description.joint_names
        reading = np.full(len(names), np.nan)
        index = self.teleop.joint_map.follower_index
        reading[index] = np.asarray(sample.reading)[self.teleop.joint_map.leader_index]
        table = Table(title=self.title)
        for column in ("joint", "leader °", "target °", "follower °", "error °"):
            table.add_column(column, justify="right" if "°" in column else "left")
        position = sample.state.position
        for j, name in enumerate(names):
            mark = " (limited)" if sample.limited[j] else ""
            table.add_row(
                name,
                f"{np.degrees(reading[j]):7.1f}",
                f"{np.degrees(sample.target[j]):7.1f}{mark}",
                f"{np.degrees(position[j]):7.1f}",
                f"{np.degrees(sample.target[j] - position[j]):6.2f}",
            )
        return table

    def __call__(self, sample: Any) -> None:
        """Refresh (at most ``rate`` Hz)."""
        now = time.monotonic()
        if self.live is not None and now - self._last >= 1.0 / self.rate:
            self._last = now
            self.live.update(self.table(sample), refresh=True)
