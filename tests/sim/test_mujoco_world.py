"""The MuJoCo world: choosing the engine, rebuilding the model as things are added, rendering
and the errors when MuJoCo or OpenGL is missing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sim_helpers import one_joint

import jointlab
from jointlab.errors import ConfigurationError, SimulationError
from jointlab.interface import NJointAction
from jointlab.sim import Camera, Randomization, SimRobot, World
from jointlab.sim.mujoco import MujocoWorld


def test_the_engine_is_chosen_by_world_robot_and_url():
    with World(engine="mujoco") as world:
        assert isinstance(world, MujocoWorld) and world.engine == "mujoco"
        robot = SimRobot("planar2", world=world)
        assert robot.engine == "mujoco" and "engine='mujoco'" in repr(robot)
    with jointlab.connect("sim://planar2?engine=mujoco&control_dt=0.01") as robot:
        assert robot.engine == "mujoco" and robot.control_dt == 0.01
    with jointlab.connect("sim://planar2") as robot:
        assert robot.engine == "pybullet"


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda: World(engine="bullet"), ["unknown physics engine 'bullet'", "'pybullet'"]),
        (lambda: SimRobot("planar2", engine="mujoko"), ["'mujoko'", "did you mean 'mujoco'"]),
        (
            lambda: jointlab.connect("sim://planar2?engine=ode"),
            ["sim://planar2?engine=ode", "'engine'", "'ode'", "expected one of"],
        ),
    ],
)
def test_unknown_engines_are_refused_by_name(build, words):
    with pytest.raises(ConfigurationError) as info:
        build()
    for word in words:
        assert word in str(info.value)


def test_a_robot_cannot_ask_for_another_engine_than_its_worlds():
    with World(engine="mujoco") as world, pytest.raises(ConfigurationError, match="differs"):
        SimRobot("planar2", world=world, engine="pybullet")


def test_a_missing_mujoco_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # "import mujoco" now fails
    with pytest.raises(ConfigurationError, match=r"pip install 'jointlab\[mujoco\]'"):
        World(engine="mujoco")


def run_isolated(code: str, **environment: str | None) -> str:
    """Run ``code`` in a fresh interpreter (MuJoCo reads MUJOCO_GL once, at import)."""
    env = dict(os.environ)
    for key, value in environment.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return result.stdout + result.stderr


def test_rendering_without_an_opengl_backend_names_the_backend_and_the_fix():
    output = run_isolated(
        """
        from jointlab.errors import SimulationError
        from jointlab.sim import World
        world = World(engine="mujoco")
        try:
            world.render(32, 24)
        except SimulationError as exc:
            print("REFUSED:", exc)
        """,
        MUJOCO_GL="glfw",
        DISPLAY=None,
        WAYLAND_DISPLAY=None,
    )
    assert "REFUSED: cannot render with MuJoCo: no OpenGL context with MUJOCO_GL='glfw'" in output
    assert "MUJOCO_GL=egl" in output and "libegl1" in output and "libosmesa6" in output


def test_an_opengl_backend_that_breaks_the_import_is_reported():
    output = run_isolated(
        """
        from jointlab.errors import ConfigurationError
        from jointlab.sim import World
        try:
            World(engine="mujoco")
        except ConfigurationError as exc:
            print("REFUSED:", exc)
        """,
        MUJOCO_GL="nonsense",
    )
    assert "REFUSED: the mujoco package fails to import with MUJOCO_GL='nonsense'" in output
    assert "MUJOCO_GL=disable" in output


def test_the_viewer_needs_a_display(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(SimulationError, match="needs a display"):
        World(engine="mujoco", gui=True)


def test_headless_rendering_frames_the_same_scene_as_pybullet():
    """A red box seen by the same Camera is red and centred on both engines."""
    images = {}
    for engine in ("pybullet", "mujoco"):
        with World(engine=engine) as world:
            world.add_box((0.1, 0.1, 0.1), (0.0, 0.0, 0.1), rgba=(1, 0, 0, 1))
            images[engine] = world.render(80, 60, Camera(target=(0, 0, 0.1), distance=1.0))
    red = {e: (i[:, :, 0].astype(int) - i[:, :, 1] > 80) for e, i in images.items()}
    for mask in red.values():
        rows, columns = np.nonzero(mask)
        assert abs(rows.mean() - 30) < 4 and abs(columns.mean() - 40) < 4
    overlap = (red["pybullet"] & red["mujoco"]).sum() / red["pybullet"].sum()
    assert overlap > 0.8
    with World(engine="mujoco") as world, pytest.raises(ConfigurationError, match="offscreen"):
        world.render(4000, 3000)


def test_adding_objects_keeps_robots_state_parameters_and_brakes():
    """Each addition recompiles the model; robots rebind and re-apply what they had set."""
    randomization = Randomization(damping_scale=(2.0, 2.0), mass_scale=(1.5, 1.5))
    with World(engine="mujoco") as world:
        arm = SimRobot("arm6", world=world, randomization=randomization, control_dt=0.01)
        arm.reset(randomize=True)
        arm.brakes(True)
        for _ in range(20):
            arm.step()
        before = arm.read()
        damping = np.array(world.model.dof_damping[arm._body.dofs])
        mass = np.array(world.model.body_mass[arm._body.link_bodies])
        box = world.add_box((0.05, 0.05, 0.05), (0.6, 0.0, 0.05), mass=0.5)
        np.testing.assert_array_equal(world.model.dof_damping[arm._body.dofs], damping)
        np.testing.assert_array_equal(world.model.body_mass[arm._body.link_bodies], mass)
        np.testing.assert_array_equal(arm.read().position, before.position)
        for _ in range(100):
            arm.step()
        braked = arm.description.has_brakes
        assert np.abs(arm.read().position - before.position)[braked].max() < 1e-4
        arm.brakes(False)
        arm.apply(NJointAction.Position(arm.description.home))
        other = SimRobot(one_joint(name="other"), world=world)
        other.apply(NJointAction.Torque([0.5]))
        for _ in range(50):
            arm.step()
        assert np.abs(arm.read().position - arm.description.home).max() < 0.01
        assert other.read().velocity[0] > 0  # stepped by the world with the arm
        world.remove(box)
        other.close()
        arm.step()
        assert world.num_bodies == 2  # ground and arm
        with pytest.raises(SimulationError, match="is a SimRobot"):
            world.remove(arm.body_id)
