"""PyBullet stays quiet unless asked, a GUI without a display is a clear error, and visual
markers are drawn without touching the physics."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from jointlab.errors import ConfigurationError, SimulationError
from jointlab.sim import SimRobot, World
from jointlab.sim.pybullet import PybulletWorld

CONNECT = "import jointlab; r = jointlab.connect('sim://arm6'); r.step(); r.close(); print('done')"


def python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "JOINTLAB_VERBOSE"}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )


def test_connect_prints_nothing_by_default_and_everything_when_verbose() -> None:
    quiet = python(CONNECT)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == "done\n"
    assert "pybullet build time" not in quiet.stderr and quiet.stderr == ""
    loud = python(CONNECT, JOINTLAB_VERBOSE="1")
    assert "argv[0]=" in loud.stdout and "pybullet build time" in loud.stderr


def test_gui_without_a_display_is_an_error_before_pybullet_is_asked(monkeypatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(SimulationError, match=r"needs a display.*DISPLAY"):
        SimRobot("planar2", gui=True)
    with pytest.raises(SimulationError, match="needs a display"):
        World(gui=True)
    assert PybulletWorld._gui_owner is None  # nothing was half-opened


def fall(marker: bool) -> np.ndarray:
    """Heights (m) of a ball dropped through the place a marker may occupy."""
    with World(dt=0.002) as world:
        ball = world.add_sphere(0.05, (0.0, 0.0, 1.0), mass=1.0)
        if marker:
            world.markers.show("goal", (0.0, 0.0, 0.5), radius=0.2)
            world.markers.show("disc", (0.0, 0.0, 0.01), radius=0.3, shape="disc")
        heights = []
        for _ in range(400):
            world.step()
            heights.append(world.body_pose(ball)[0][2])
    return np.array(heights)


def test_markers_have_no_physics() -> None:
    assert np.array_equal(fall(marker=True), fall(marker=False))


def test_markers_move_change_and_hide(zero_g: World) -> None:
    markers = zero_g.markers
    body = markers.show("goal", (0.1, 0.2, 0.3))
    assert markers.names == ("goal",)
    assert markers.show("goal", (0.4, 0.5, 0.6)) == body  # moved, not recreated
    assert np.allclose(zero_g.body_pose(body)[0], (0.4, 0.5, 0.6))
    other = markers.show("goal", (0.4, 0.5, 0.6), radius=0.1)  # another look: recreated
    assert zero_g.num_bodies == 1 and other == markers.body_id("goal")
    markers.hide("goal")
    markers.hide("goal")
    assert markers.names == () and zero_g.num_bodies == 0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"position": (0, 0)}, "position must be 3 finite"),
        ({"position": (0, 0, 0), "radius": -1.0}, "radius must be > 0"),
        ({"position": (0, 0, 0), "rgba": (1, 0, 0)}, "rgba must be 4 numbers"),
        ({"position": (0, 0, 0), "shape": "cube"}, "shape must be one of"),
    ],
)
def test_bad_markers_are_refused_naming_the_field(zero_g: World, kwargs, match) -> None:
    with pytest.raises(ConfigurationError, match=match):
        zero_g.markers.show("goal", **kwargs)


@pytest.mark.parametrize(
    "url", ["sim://arm6?engine=mujoco", "emulated://arm6", "emulated://so101?lockstep=1"]
)
def test_every_backend_starts_without_a_word_on_stdout_or_stderr(url: str) -> None:
    code = f"import jointlab; r = jointlab.connect({url!r}); r.step(); r.close(); print('done')"
    quiet = python(code)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == "done\n"  # the emulator processes' engines print nothing either
    assert quiet.stderr == ""
