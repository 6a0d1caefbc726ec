"""The live view in a real browser: headless Chromium sees the robot move and the plots fill.

Chromium comes from the Debian package (``make test`` installs it where missing). Outside
CI a machine without it skips with a message; in CI (``CI`` set) that is a failure.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import jointlab
from jointlab.interface import NJointAction
from jointlab.view import LiveView
from jointlab.view.browser import HeadlessBrowser, find_chromium

pytestmark = pytest.mark.slow

WIDTH, HEIGHT = 1280, 800
#: The 3D scene: left of the side panel, below the software-WebGL notice.
SCENE = (slice(170, HEIGHT), slice(0, 860))
#: The side panel with the plots.
PANEL = (slice(0, HEIGHT), slice(900, WIDTH))


def _need_chromium() -> None:
    if find_chromium() is None:
        if os.environ.get("CI"):
            pytest.fail("no Chromium in CI: make test installs the Debian package chromium")
        pytest.skip("no Chromium here: apt-get install -y chromium (make test does it)")


def _wait_drawn(view: LiveView, count: int) -> None:
    deadline = time.monotonic() + 90.0
    while view.drawn_count < count:
        assert time.monotonic() < deadline, f"the view drew {view.drawn_count} of {count}"
        time.sleep(0.02)


def _settled(browser: HeadlessBrowser, region: tuple[slice, slice]) -> np.ndarray:
    """A screenshot once two in a row agree in ``region`` (the browser drew what it has)."""
    previous = browser.screenshot()
    deadline = time.monotonic() + 90.0
    while True:
        time.sleep(0.5)
        shot = browser.screenshot()
        if np.array_equal(shot[region], previous[region]) or time.monotonic() > deadline:
            return shot
        previous = shot


def _changed(a: np.ndarray, b: np.ndarray, region: tuple[slice, slice]) -> int:
    return int((np.abs(a[region].astype(int) - b[region].astype(int)).sum(axis=2) > 30).sum())


def _actual_pixels(shot: np.ndarray) -> int:
    """Pixels of the 'actual' traces' blue (anti-aliased lines blend it with white)."""
    panel = shot[PANEL].astype(int)
    r, g, b = panel[..., 0], panel[..., 1], panel[..., 2]
    return int(((b - r > 60) & (b - g > 25) & (b < 235)).sum())


def test_chromium_sees_the_robot_move_and_the_plots_show_it():
    _need_chromium()
    with jointlab.connect("sim://arm6") as robot, LiveView(robot.description, port=0) as view:
        view.watch(robot)
        home = robot.description.home
        for _ in range(25):
            robot.apply(NJointAction.Position(home))
            robot.step()
        _wait_drawn(view, 25)
        with HeadlessBrowser(size=(WIDTH, HEIGHT), timeout=90.0) as browser:
            browser.open(view.url)
            plots = "document.querySelectorAll('.u-wrap canvas').length >= 3"
            scene = "Array.from(document.querySelectorAll('canvas')).some(c => c.width > 600)"
            browser.wait_for(plots, what="the three plots", timeout=90.0)
            browser.wait_for(scene, what="the 3D canvas", timeout=90.0)
            before = _settled(browser, SCENE)

            target = home + np.array([1.2, 0.5, -0.6, 0.0, 0.0, 0.0])
            for _ in range(400):
                robot.apply(NJointAction.Position(target))
                robot.step()
            _wait_drawn(view, 425)
            deadline = time.monotonic() + 90.0
            after = browser.screenshot()
            while (_changed(before, after, SCENE) < 500 or _actual_pixels(after) < 150) and (
                time.monotonic() < deadline
            ):
                time.sleep(0.3)
                after = browser.screenshot()

    assert _changed(before, after, SCENE) >= 500, "the robot's pixels did not move"
    assert _actual_pixels(after) >= 150, "no 'actual' trace in the plots"
    assert _changed(before, after, PANEL) >= 200, "the plots did not change with the motion"
