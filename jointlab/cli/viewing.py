"""``--view [PORT]`` on the commands that drive a robot: the live view of the robot they connect.

The command's robot is found as it connects (:func:`jointlab.connection.watch_connections`,
matched by URL), so ``run``, ``teleop``, ``record`` and ``eval`` need no code of their own
beyond :func:`add_view_argument` and :func:`viewing`. With a view attached, a simulated
robot runs at real time (robot time = wall time, :class:`~jointlab.view.RealTimePacer`),
and the page stays up after the command's work, showing the final state and the plots,
until Ctrl-C or for ``--linger`` seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import time as wallclock
from collections.abc import Callable, Iterator
from typing import Any

from jointlab.cli.common import console
from jointlab.errors import ConfigurationError

__all__ = ["add_view_argument", "announce", "linger", "viewing"]


def _seconds(text: str) -> float:
    """An ``argparse`` type: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds >= 0, got {text}")
    return value


def add_view_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--view [PORT]`` (default port 8080; a busy port moves on) and ``--linger S``."""
    from jointlab.view.server import DEFAULT_PORT

    parser.add_argument(
        "--view",
        nargs="?",
        type=int,
        const=DEFAULT_PORT,
        default=None,
        metavar="PORT",
        help="show the robot live in the browser "
        f"(loopback, port {DEFAULT_PORT} unless given); a simulated robot "
        "then runs at real time",
    )
    parser.add_argument(
        "--linger",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="with --view: keep the page up this long after the end "
        "(default: until Ctrl-C; 0: close at once)",
    )


def announce(view: Any) -> None:
    """Print where the view is (and that its port moved, when it did)."""
    moved = f" (port {view.requested_port} was busy)" if view.moved_port else ""
    console.print(f"live view: {view.url}{moved}", highlight=False)


def linger(view: Any, seconds: float | None) -> None:
    """Keep ``view`` up after the work: ``seconds`` (None: until Ctrl-C, which ends it quietly).

    The page keeps showing the final state and the plots, and says when the run ended.
    """
    latest = view.feed.latest_time
    at = "" if latest is None else f" at robot time {latest:.2f} s"
    view.note(f"ended{at}: the final state and plots")
    if seconds == 0:
        return
    how = "Ctrl-C closes it" if seconds is None else f"for {seconds:g} s (Ctrl-C closes it)"
    console.print(f"done; the live view stays up at {view.url}, {how}", highlight=False)
    end = None if seconds is None else wallclock.monotonic() + seconds
    try:
        while end is None or wallclock.monotonic() < end:
            wallclock.sleep(0.2 if end is None else max(0.0, min(0.2, end - wallclock.monotonic())))
    except KeyboardInterrupt:
        console.print("live view closed", highlight=False)


@contextlib.contextmanager
def viewing(
    port: int | None,
    url: str | None,
    title: str = "",
    nth: int = 0,
    linger_seconds: float | None = None,
) -> Iterator[list[Any]]:
    """While inside, the robot connected from ``url`` is shown live (and paced, if simulated).

    With ``url`` None, the ``nth`` robot connected (0: the first; teleop's follower is the
    second). Yields a list that holds the :class:`~jointlab.view.LiveView` once the robot
    connected. When the block ends without an exception, the view stays up for
    ``linger_seconds`` (None: until Ctrl-C; see :func:`linger`). With ``port`` None nothing
    is shown (and ``linger_seconds`` is an error).
    """
    views: list[Any] = []
    if port is None:
        if linger_seconds is not None:
            raise ConfigurationError("--linger needs --view: it keeps the live view's page up")
        yield views
        return
    from jointlab.extras import check_installed

    check_installed("view", "--view (the live view)", "viser")  # before anything connects
    from jointlab.connection import watch_connections
    from jointlab.view import LiveView, RealTimePacer

    seen = [0]
    undo: list[Callable[[], None]] = []

    def on_connect(connected_url: str, robot: Any) -> None:
        seen[0] += 1
        if views or (url is not None and connected_url != url):
            return
        if url is None and seen[0] != nth + 1:
            return
        view = LiveView(robot.description, port=port, title=title or connected_url)
        views.append(view.watch(robot))
        if not robot.realtime:  # a simulation: at the pace of the eye
            undo.append(robot.listen(RealTimePacer()))
        announce(view)

    stop = watch_connections(on_connect)
    try:
        yield views
        stop()
        for view in views:
            linger(view, linger_seconds)
    finally:
        stop()
        for undo_one in undo:
            undo_one()
        for view in views:
            view.close()
