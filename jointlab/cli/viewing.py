"""``--view [PORT]`` on the commands that drive a robot: the live view of the robot they connect.

The command's robot is found as it connects (:func:`jointlab.connection.watch_connections`,
matched by URL), so ``run``, ``teleop``, ``record`` and ``eval`` need no code of their own
beyond :func:`add_view_argument` and :func:`viewing`.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from jointlab.cli.common import console

__all__ = ["add_view_argument", "announce", "viewing"]


def add_view_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--view [PORT]`` (default port 8080; a busy port moves to the next free one)."""
    from jointlab.view.server import DEFAULT_PORT

    parser.add_argument("--view", nargs="?", type=int, const=DEFAULT_PORT, default=None,
                        metavar="PORT", help="show the robot live in the browser "
                        f"(loopback, port {DEFAULT_PORT} unless given)")  # fmt: skip


def announce(view: Any) -> None:
    """Print where the view is (and that its port moved, when it did)."""
    moved = f" (port {view.requested_port} was busy)" if view.moved_port else ""
    console.print(f"live view: {view.url}{moved}", highlight=False)


@contextlib.contextmanager
def viewing(port: int | None, url: str | None, title: str = "",
            nth: int = 0) -> Iterator[list[Any]]:  # fmt: skip
    """While inside, the robot connected from ``url`` is shown live.

    With ``url`` None, the ``nth`` robot connected (0: the first; teleop's follower is the
    second). Yields a list that holds the :class:`~jointlab.view.LiveView` once the robot
    connected. With ``port`` None nothing is shown.
    """
    views: list[Any] = []
    if port is None:
        yield views
        return
    from jointlab.extras import check_installed

    check_installed("view", "--view (the live view)", "viser")  # before anything connects
    from jointlab.connection import watch_connections
    from jointlab.view import LiveView

    seen = [0]

    def on_connect(connected_url: str, robot: Any) -> None:
        seen[0] += 1
        if views or (url is not None and connected_url != url):
            return
        if url is None and seen[0] != nth + 1:
            return
        view = LiveView(robot.description, port=port, title=title or connected_url)
        views.append(view.watch(robot))
        announce(view)

    stop = watch_connections(on_connect)
    try:
        yield views
    finally:
        stop()
        for view in views:
            view.close()
