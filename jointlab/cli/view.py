r"""Show a robot live in the browser: its links and joints in 3D, desired against actual.

Watches the robot as it is (no command), or runs a program while showing it; a simulated
robot runs at real time (robot time = wall time). Loopback only
unless --host says otherwise. --screenshot saves what a headless Chromium sees.

Examples:
  jointlab view sim://arm6 --program examples/programs/arm6_tour.yaml
  jointlab view emulated://so101 --port 8090
  jointlab view sim://arm6 --program examples/programs/arm6_tour.yaml --seconds 2 \
      --screenshot view.png
"""

from __future__ import annotations

import argparse
import time as wallclock
from pathlib import Path

from jointlab.cli.common import add_robot_argument, console, positive_float, robot_url
from jointlab.cli.viewing import announce

NAME = "view"
HELP = "show a robot live in the browser (3D, desired vs actual plots)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``jointlab view``."""
    from jointlab.view.server import DEFAULT_PORT

    add_robot_argument(parser)
    parser.add_argument("--program", metavar="FILE", help="run this program while showing it")
    parser.add_argument(
        "--seconds",
        type=positive_float,
        metavar="S",
        help="stop after S seconds of robot time (default: Ctrl-C)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help="port (a busy one moves to the next free one; 0: any)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface to serve on (default loopback only)"
    )
    parser.add_argument(
        "--contacts", action="store_true", help="also show a simulated robot's contact points"
    )
    parser.add_argument(
        "--screenshot", metavar="PNG", help="save the page as headless Chromium shows it, then stop"
    )


def run(args: argparse.Namespace) -> int:
    """Connect, serve the view, drive the program (if any), keep stepping until the end."""
    import jointlab
    from jointlab.faults import FaultRule
    from jointlab.interface import NJointAction
    from jointlab.view import LiveView, RealTimePacer

    program = None
    if args.program:
        from jointlab.program import load_program

        program = load_program(Path(args.program).expanduser())
    url = robot_url(args.robot)
    with (
        jointlab.connect(url) as robot,
        LiveView(
            robot.description, host=args.host, port=args.port, title=url, contacts=args.contacts
        ) as view,
    ):
        view.watch(robot)
        if not robot.realtime:  # a simulated robot runs at real time for the eye
            robot.listen(RealTimePacer())
        announce(view)
        if program is not None:
            from jointlab.program import run_program

            with console.status("running the program..."):
                run_program(robot, program)
        hold = robot.last_action if program is not None else NJointAction.Zero(robot.dof)
        end = None if args.seconds is None else robot.time + args.seconds
        if args.screenshot and end is None:
            end = robot.time
        if end is None:
            console.print("Ctrl-C stops", highlight=False)
        with FaultRule(robot):  # the one rule (jointlab.faults): hold, disarm, stop with it
            while end is None or robot.time < end - 1e-9:
                robot.apply(hold)
                robot.step()
        if args.screenshot:
            _screenshot(view, Path(args.screenshot).expanduser())
    return 0


def _screenshot(view: object, path: Path) -> None:
    from PIL import Image

    from jointlab.view.browser import HeadlessBrowser

    with HeadlessBrowser() as browser:
        browser.open(view.url)  # type: ignore[attr-defined]
        browser.wait_for(
            "document.querySelectorAll('.u-wrap canvas').length > 0", what="the live view's plots"
        )
        wallclock.sleep(2.0)  # WebGL in software draws its first frames slowly
        Image.fromarray(browser.screenshot()).save(path)
    console.print(f"wrote {path}", highlight=False)
