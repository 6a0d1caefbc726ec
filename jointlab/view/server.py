"""The :class:`LiveView`: a browser 3D view and live plots of one robot, on any backend.

Built on viser (a maintained web viewer for robotics: three.js scene, uPlot charts, one
Python process, no build step). The robot's loop feeds a :class:`~jointlab.view.feed.ViewFeed`
in O(1) per step through :meth:`jointlab.contract.Robot.listen`; the view's own thread
draws the newest state at ``rate_hz`` and the plots from the feed's window. Loopback only
unless ``host`` says otherwise.

Example::

    with jointlab.connect("sim://arm6") as robot, LiveView(robot.description) as view:
        view.watch(robot)
        print("open", view.url)
        ...  # drive the robot as usual
"""

from __future__ import annotations

import contextlib
import threading
import time as wallclock
from collections.abc import Iterator
from typing import Any

import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.extras import require
from jointlab.robots.description import RobotDescription
from jointlab.view.feed import ViewFeed
from jointlab.view.live_plots import LivePlots
from jointlab.view.robot_scene import RobotScene

__all__ = ["DEFAULT_PORT", "LiveView"]

#: The port asked for by default (viser's); a busy port moves the view to the next free one.
DEFAULT_PORT = 8080
#: Seconds between two redraws of the plots (10 Hz; the 3D pose follows every redraw): a
#: plot costs about ten times a pose update, and an eye reads curves at 10 Hz as live.
PLOT_PERIOD = 0.1


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence rich's global console (viser prints through it, also from its own thread)."""
    import rich

    console = rich.get_console()
    was_quiet, console.quiet = console.quiet, True
    try:
        yield
    finally:
        console.quiet = was_quiet


class LiveView:
    """A live view server; a context manager (``close()`` stops it, safe twice).

    Args:
        description: The robot to draw.
        host: Interface to listen on; ``"127.0.0.1"`` (loopback) by default.
        port: TCP port; when busy the next free one is used (see :attr:`port`); 0 picks any.
        rate_hz: Redraws per second (at most; only when a new sample arrived); 0: no
            thread of its own, the caller calls :meth:`redraw`.
        capacity: Control periods the plots keep.
        title: Shown in the page's panel.
        contacts: Also show a simulated robot's contact points (red), read every 10 steps.
    """

    def __init__(
        self,
        description: RobotDescription,
        *,
        host: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        rate_hz: float = 30.0,
        capacity: int = 600,
        title: str | None = None,
        contacts: bool = False,
    ) -> None:
        if not (0.0 <= rate_hz <= 240.0):
            raise ConfigurationError(f"LiveView: rate_hz={rate_hz!r}, expected 0 <= rate_hz <= 240")
        if not (0 <= int(port) <= 65535):
            raise ConfigurationError(f"LiveView: port={port!r}, expected 0..65535")
        (viser,) = require("view", "the live view", "viser")
        self.description = description
        self.feed = ViewFeed(
            description.dof,
            capacity,
            description.soft_lower,
            description.soft_upper,
            contacts_every=10 if contacts else 0,
        )
        self.requested_port = int(port)
        with _quiet():  # viser prints a banner; the caller says where the view is
            self.server = viser.ViserServer(host=host, port=int(port), verbose=False)
        self.host = host
        #: The port actually served (differs from the requested one when that was busy).
        self.port = int(self.server.get_port())
        try:
            self.server.gui.configure_theme(control_width="large", show_logo=False)
            if title:
                self.server.gui.add_markdown(f"**{title}**")
            self._note = self.server.gui.add_markdown("")  # status line, see note()
            self.scene = RobotScene(self.server, description)
            self.scene.update(description.home)
            self.plots = LivePlots(self.server, description.joint_names, description.is_linear)
        except BaseException:
            with _quiet():
                self.server.stop()
            raise
        #: Redraws done and the feed count of the latest one (for tests and benchmarks).
        self.frames_drawn = 0
        self.drawn_count = 0
        #: The feed count the plots show, and when they were drawn (perf_counter s).
        self.plotted_count = 0
        self._plotted_at = -1e9
        self._period = 1.0 / rate_hz if rate_hz else 0.0
        self._markers: list[Any] | None = None
        self._shown_contacts: np.ndarray | None = None
        self._markers_lock = threading.Lock()
        self._unwatch: list[Any] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jointlab-view", daemon=True)
        if rate_hz:
            self._thread.start()
        self._closed = False

    @property
    def url(self) -> str:
        """The page's address, e.g. ``http://127.0.0.1:8080``."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    @property
    def moved_port(self) -> bool:
        """True when the requested port was busy and another one is served."""
        return self.requested_port not in (0, self.port)

    def watch(self, robot: Any) -> LiveView:
        """Follow ``robot`` (any backend): every step and refusal reaches the feed."""
        self._unwatch.append(robot.listen(self.feed))
        return self

    def note(self, text: str) -> None:
        """Show one line of status under the title (replacing the previous one)."""
        self._note.content = text

    def show_markers(self, markers: list[Any]) -> None:
        """Show a task's goal markers (drawn on the view's thread at its next redraw)."""
        with self._markers_lock:
            self._markers = list(markers)

    def redraw(self, plots: bool | None = None) -> bool:
        """Draw what the feed holds now, if anything is new; True when it drew.

        The pose is drawn at every new sample; the plots when samples arrived since they
        were last drawn and :data:`PLOT_PERIOD` has passed (``plots`` forces or skips them).
        The view's thread calls it ``rate_hz`` times a second; benchmarks call it directly.
        """
        window = self.feed.window()
        with self._markers_lock:
            markers, self._markers = self._markers, None
        if markers is not None:
            self.scene.show_markers(markers)
        now = wallclock.perf_counter()
        new_pose = window.count != self.drawn_count and window.latest_position is not None
        if plots is None:
            plots = window.count != self.plotted_count and now - self._plotted_at >= PLOT_PERIOD
        plots = bool(plots) and window.time.size >= 2
        if not (new_pose or plots):
            return False
        with self.server.atomic():  # one batch of messages per redraw, not one per property
            if new_pose:
                q = window.latest_position
                if np.isfinite(q).all():
                    self.scene.update(q)
                if window.contacts is not None and window.contacts is not self._shown_contacts:
                    self.scene.show_contacts(window.contacts)
                    self._shown_contacts = window.contacts
            if plots:
                self.plots.update(window)
                self.plotted_count, self._plotted_at = window.count, now
        if new_pose:
            self.drawn_count = window.count
            self.frames_drawn += 1
        return True

    def _run(self) -> None:
        next_draw = wallclock.perf_counter()
        while not self._stop.is_set():
            self.redraw()
            next_draw += self._period
            delay = next_draw - wallclock.perf_counter()
            if delay < 0.0:  # fell behind (a busy machine): skip, do not burst
                next_draw = wallclock.perf_counter()
                delay = 0.0
            self._stop.wait(delay)

    def close(self) -> None:
        """Stop following, stop drawing, stop the server."""
        if self._closed:
            return
        self._closed = True
        for undo in self._unwatch:
            undo()
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)
        with _quiet():
            self.server.stop()
            thread = getattr(getattr(self.server, "_websock_server", None), "_server_thread", None)
            if thread is not None:  # it prints "Server stopped" as it ends
                thread.join(timeout=5.0)

    def __enter__(self) -> LiveView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
