"""The live view server: it follows a robot, moves off a busy port, and closes cleanly."""

from __future__ import annotations

import socket
import time
import warnings

import numpy as np
import pytest

import jointlab
from jointlab.envs import JointLabEnv
from jointlab.envs.env import HeadlessRenderWarning
from jointlab.errors import ConfigurationError
from jointlab.interface import NJointAction
from jointlab.view import LiveView


def _wait_drawn(view: LiveView, count: int, timeout: float = 20.0) -> None:
    """Until the view's thread drew sample ``count`` (an outcome, not a timing figure)."""
    deadline = time.monotonic() + timeout
    while view.drawn_count < count:
        assert time.monotonic() < deadline, f"the view drew {view.drawn_count} of {count}"
        time.sleep(0.02)


def test_the_view_follows_the_robot_it_watches():
    with jointlab.connect("sim://arm6") as robot, LiveView(robot.description, port=0) as view:
        view.watch(robot)
        assert view.url.startswith("http://127.0.0.1:") and view.port > 0
        robot.arm()
        for _ in range(25):
            robot.apply(NJointAction.Position(robot.description.home))
            robot.step()
        _wait_drawn(view, 25)
        assert view.frames_drawn >= 1


def test_a_busy_port_moves_the_view_to_the_next_free_one():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        description = jointlab.load_robot("arm6")
        with LiveView(description, port=port) as view:
            assert view.port != port and view.moved_port
            assert str(view.port) in view.url


def test_close_is_safe_twice_and_frees_the_port():
    view = LiveView(jointlab.load_robot("arm6"), port=0)
    port = view.port
    view.close()
    view.close()
    with socket.socket() as again:
        again.bind(("127.0.0.1", port))


@pytest.mark.parametrize("kwargs", [{"rate_hz": -1.0}, {"rate_hz": 1000.0}, {"port": 70000}])
def test_bad_settings_are_refused(kwargs):
    with pytest.raises(ConfigurationError, match=next(iter(kwargs))):
        LiveView(jointlab.load_robot("arm6"), **kwargs)


def test_human_render_mode_without_a_display_shows_the_browser_view(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    env = JointLabEnv("reach", render_mode="human")
    try:
        with pytest.warns(HeadlessRenderWarning, match=r"browser at http://127\.0\.0\.1:\d+"):
            env.reset(seed=0)
        assert env.render_mode == "human" and env.render() is None
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the address is said once
            for _ in range(3):
                env.step(np.zeros(env.action_space.shape, dtype=np.float32))
        _wait_drawn(env._view, 3)
        (goal,) = [m for m in env.task.markers() if m.name == "goal"] or [None]
        assert goal is None or env._view.scene._markers
    finally:
        env.close()
