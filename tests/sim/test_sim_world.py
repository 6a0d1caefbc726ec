"""World: objects, poses, rendering, stepping, GUI guard and lifetime."""

from __future__ import annotations

import numpy as np
import pybullet
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jointlab.errors import ConfigurationError, SimulationError
from jointlab.sim import Camera, World
from jointlab.sim.pybullet.world import PybulletWorld, quaternion_from_rpy

angles = st.floats(-3.0, 3.0)


@given(roll=angles, pitch=st.floats(-1.5, 1.5), yaw=angles)
def test_quaternion_from_rpy_matches_pybullet(roll, pitch, yaw):
    np.testing.assert_allclose(
        quaternion_from_rpy((roll, pitch, yaw)),
        pybullet.getQuaternionFromEuler((roll, pitch, yaw)),
        atol=1e-12,
    )


def test_objects_poses_and_removal(engine):
    with World(engine=engine) as world:
        assert world.num_bodies == 1  # the ground
        box = world.add_box((0.1, 0.2, 0.05), (0.0, 0.0, 0.05), orientation=(0, 0, 0.5), mass=1.0)
        ball = world.add_sphere(0.05, (0.5, 0.0, 1.0), mass=0.2, rgba=(1, 0, 0, 1))
        assert world.num_bodies == 3
        position, rpy = world.body_pose(box)
        np.testing.assert_allclose(position, [0, 0, 0.05], atol=1e-9)
        np.testing.assert_allclose(rpy, [0, 0, 0.5], atol=1e-9)
        for _ in range(300):
            world.step()
        assert world.steps == 300 and world.time == pytest.approx(0.3)
        assert world.body_pose(ball)[0][2] == pytest.approx(1.0 - 0.5 * 9.81 * 0.3**2, abs=0.01)
        world.reset_body(ball, (1.0, 1.0, 0.3), (0.1, 0.2, 0.3))
        position, rpy = world.body_pose(ball)
        np.testing.assert_allclose(position, [1.0, 1.0, 0.3], atol=1e-9)
        np.testing.assert_allclose(rpy, [0.1, 0.2, 0.3], atol=1e-9)
        assert np.all(world.body_velocity(ball)[0] == 0.0)
        world.remove(ball)
        assert world.num_bodies == 2
        table = world.add_urdf("table/table.urdf", (2.0, 0.0, 0.0))
        assert world.num_bodies == 3 and world.body_pose(table)[0][0] == pytest.approx(2.0)


def test_render_headless_returns_rgb_pixels(engine):
    with World(engine=engine) as world:
        world.add_box((0.2, 0.2, 0.2), (0.0, 0.0, 0.2), rgba=(1, 0, 0, 1))
        image = world.render(64, 48, Camera(target=(0, 0, 0.2), distance=1.0))
        assert image.shape == (48, 64, 3) and image.dtype == np.uint8
        centre = image[24, 32].astype(int)
        assert centre[0] > centre[1] + 50  # the red box is in the middle


def test_bad_arguments_raise_configuration_errors(engine):
    with pytest.raises(ConfigurationError, match="dt"):
        World(dt=0.0, engine=engine)
    with World(ground=False, engine=engine) as world:
        with pytest.raises(ConfigurationError, match="half_extents"):
            world.add_box((0.1, -0.1, 0.1), (0, 0, 0))
        with pytest.raises(ConfigurationError, match="radius"):
            world.add_sphere(0.0, (0, 0, 0))
        with pytest.raises(SimulationError, match=r"no_such\.urdf"):
            world.add_urdf("no_such.urdf", (0, 0, 0))


def test_a_second_gui_world_is_refused_with_a_clear_message(monkeypatch):
    # No display here: pretend a GUI world is open; the guard runs before PyBullet is asked.
    with World(ground=False) as first:
        monkeypatch.setattr(PybulletWorld, "_gui_owner", first)
        with pytest.raises(SimulationError, match="only one"):
            World(gui=True)


def test_close_is_safe_twice_and_blocks_use(engine):
    world = World(engine=engine)
    world.close()
    world.close()
    assert world.closed
    with pytest.raises(SimulationError, match="closed"):
        world.step()


def test_each_world_is_its_own_client():
    with World(dt=0.001) as a, World(dt=0.002, gravity=(0, 0, 0)) as b:
        assert a.client_id != b.client_id
        ball = b.add_sphere(0.1, (0, 0, 1.0), mass=1.0)
        for _ in range(100):
            b.step()
        assert b.body_pose(ball)[0][2] == pytest.approx(1.0)  # b has no gravity
        assert a.client.getPhysicsEngineParameters()["fixedTimeStep"] == 0.001


@pytest.mark.parametrize(("slope_deg", "slides"), [(40.0, False), (50.0, True)])
def test_a_box_on_a_slope_holds_below_45_degrees_on_both_engines(engine, slope_deg, slides):
    # Contact friction is mu = 1 on both engines (CONTACT_FRICTION): a box at rest on a
    # slope holds while tan(slope) < 1 and slides beyond (PyBullet's default 0.5 per body
    # made it 0.25 box on box: a 20 degree slope slid).
    slope = np.radians(slope_deg)
    down = np.array([np.cos(slope), 0.0, -np.sin(slope)])  # along the slope, downhill
    normal = np.array([np.sin(slope), 0.0, np.cos(slope)])
    with World(ground=False, engine=engine) as world:
        world.add_box([0.5, 0.5, 0.05], [0.0, 0.0, 0.0], (0.0, slope, 0.0))
        start = normal * (0.05 + 0.05)
        box = world.add_box([0.05, 0.05, 0.05], start, (0.0, slope, 0.0), mass=0.5)
        for _ in range(500):
            world.step()
        moved = float(np.dot(world.body_pose(box)[0] - start, down))
    assert (moved > 0.05) == slides, f"{engine}: moved {moved:.4f} m down a {slope_deg} deg slope"
    if not slides:  # MuJoCo's soft contact creeps a few millimetres; PyBullet's holds
        assert abs(moved) < 0.02
