"""Serve a robot to ROS 2: joint states, commands, trajectories, services, events, URDF.

Publishes /joint_states (and /clock for a simulated robot), follows /joint_commands
(sensor_msgs/JointState, the joint_state_topic_hardware_interface contract) and
/joint_trajectory (trajectory_msgs/JointTrajectory), offers /jointlab/arm, /jointlab/disarm
and /jointlab/hold (std_srvs/Trigger), publishes events as JSON on /jointlab/events and the
URDF on /robot_description. Every command passes the Commander's safety layer. Needs the
ros2 extra (pip install "jointlab[ros2]"). Ctrl-C stops: the robot holds, then disarms.

Examples:
  jointlab ros2 sim://arm6
  jointlab ros2 emulated://so101 --arm --rate 100
  jointlab ros2 sim://arm6 --ros2-control          # beside a ros2_control controller manager
  jointlab ros2 arm6 --ros2-control --print-urdf
"""

from __future__ import annotations

import argparse
import signal
import threading
from typing import TYPE_CHECKING

from jointlab.cli.common import add_robot_argument, console, positive_float, positive_int, robot_url
from jointlab.interop.ros2.config import BridgeConfig
from jointlab.robots.urdf_io import description_to_urdf

if TYPE_CHECKING:
    from jointlab.contract import Robot
    from jointlab.interop.ros2 import Ros2Bridge

NAME = "ros2"
HELP = "serve a robot to ROS 2 (joint states, commands, trajectories, services)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab ros2``."""
    add_robot_argument(parser)
    parser.add_argument(
        "--rate",
        type=positive_float,
        default=None,
        metavar="HZ",
        help="joint states per second (default: every control period; must "
        "divide the control rate)",
    )
    parser.add_argument(
        "--arm",
        action="store_true",
        help="arm the robot at start (a device starts disarmed: else call the arm service)",
    )
    parser.add_argument(
        "--seconds",
        type=positive_float,
        default=None,
        help="stop after this much robot time (default: until Ctrl-C)",
    )
    parser.add_argument(
        "--ros2-control",
        action="store_true",
        help="run beside a ros2_control controller manager: states on "
        "/jointlab/joint_states, commands on /jointlab/joint_commands, and a "
        "<ros2_control> block in the published URDF",
    )
    parser.add_argument(
        "--print-urdf",
        action="store_true",
        help="print the URDF the bridge publishes and exit (no ROS needed)",
    )
    parser.add_argument("--node-name", default="jointlab", help="the node's name")
    parser.add_argument("--namespace", default="", help="the node's namespace")
    for topic, default in (
        ("joint-states", "/joint_states"),
        ("joint-commands", "/joint_commands"),
        ("joint-trajectory", "/joint_trajectory"),
        ("events", "~/events"),
    ):
        parser.add_argument(
            f"--{topic}-topic", default=None, metavar="NAME", help=f"default {default}"
        )
    parser.add_argument(
        "--best-effort",
        action="store_true",
        help="publish joint states best effort (default reliable)",
    )
    parser.add_argument(
        "--depth", type=positive_int, default=10, help="QoS history depth of the joint states"
    )
    parser.add_argument(
        "--command-depth",
        type=positive_int,
        default=10,
        help="QoS history depth of the command subscriptions (keep-last: a "
        "backlog of stale set-points is dropped, not queued)",
    )
    parser.add_argument(
        "--command-timeout",
        type=positive_float,
        default=0.5,
        metavar="S",
        help="a velocity or effort stream without news for this long holds",
    )
    parser.add_argument(
        "--real-time-factor",
        type=positive_float,
        default=1.0,
        help="wall seconds per simulated second",
    )
    parser.add_argument(
        "--domain-id", type=int, default=None, help="ROS domain (default: ROS_DOMAIN_ID, else 0)"
    )


def _config(args: argparse.Namespace) -> BridgeConfig:
    from jointlab.interop.ros2.ros2_control import ROS2_CONTROL_TOPICS

    topics = dict(ROS2_CONTROL_TOPICS) if args.ros2_control else {}
    for name in ("joint_states", "joint_commands", "joint_trajectory", "events"):
        given = getattr(args, f"{name}_topic")
        if given is not None:
            topics[f"{name}_topic"] = given
    return BridgeConfig(
        node_name=args.node_name,
        namespace=args.namespace,
        rate=args.rate,
        state_reliability="best_effort" if args.best_effort else "reliable",
        state_depth=args.depth,
        command_depth=args.command_depth,
        command_timeout=args.command_timeout,
        real_time_factor=args.real_time_factor,
        **topics,
    )


def run(args: argparse.Namespace) -> int:
    """Connect, serve until Ctrl-C (or --seconds), then hold and disarm."""
    config = _config(args)
    url = robot_url(args.robot)
    if args.print_urdf:
        from jointlab.interop.lerobot_bridge import description_of
        from jointlab.interop.ros2.ros2_control import urdf_with_ros2_control

        description = description_of(url)
        print(
            urdf_with_ros2_control(
                description,
                joint_states_topic=config.joint_states_topic,
                joint_commands_topic=config.joint_commands_topic,
            )
            if args.ros2_control
            else description_to_urdf(description),
            end="",
        )
        return 0
    import jointlab
    from jointlab.interop.ros2 import Ros2Bridge

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # an entry point may: a clean stop
    with jointlab.connect(url) as robot:
        config.publish_every(robot.control_dt)  # a rate the control rate allows, before ROS
        bridge = Ros2Bridge(robot, config, domain_id=args.domain_id, ros2_control=args.ros2_control)
        try:
            if args.arm:
                robot.arm()
            rate = 1.0 / (robot.control_dt * bridge.publish_every)
            node = bridge.node.get_fully_qualified_name()
            console.print(
                f"{url} is ROS 2 node {node}: {config.joint_states_topic} at {rate:g} "
                f"Hz, commands on {config.joint_commands_topic} and "
                f"{config.joint_trajectory_topic}; Ctrl-C stops",
                highlight=False,
            )
            try:
                bridge.run(args.seconds, stop)
            except KeyboardInterrupt:
                pass
            _hold_then_disarm(robot, bridge)
        finally:
            bridge.close()
        stats = bridge.statistics
        console.print(
            f"stopped after {stats.ticks} periods ({robot.time:.2f} s): "
            f"{stats.states} states published, {stats.commands} commands "
            f"({stats.refused} refused), {stats.late} late periods; the robot "
            "held, then disarmed",
            highlight=False,
        )
    return 0


def _hold_then_disarm(robot: Robot, bridge: Ros2Bridge) -> None:
    """The house's stop: hold the present pose for one period, then disarm."""
    from jointlab.errors import JointLabError

    try:
        if robot.read().armed:
            bridge.commander.hold()
            bridge.commander.update()
            robot.step()
        robot.disarm()
    except JointLabError:
        pass
