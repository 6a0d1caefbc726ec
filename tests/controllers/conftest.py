"""SimRobot fixtures for the Commander and loop tests (each skips if jointlab.sim is missing)."""

import pytest


def _robot(name):
    sim = pytest.importorskip("jointlab.sim")
    robot = sim.SimRobot(name, dt=0.001, control_dt=0.001, seed=0)
    yield robot
    robot.close()


@pytest.fixture
def gantry():
    """A fresh gantry3 (three linear axes, brakes on z) at home."""
    yield from _robot("gantry3")


@pytest.fixture
def arm():
    """A fresh arm6 at home."""
    yield from _robot("arm6")


@pytest.fixture
def planar():
    """A fresh planar2 (two rotary joints in the horizontal plane)."""
    yield from _robot("planar2")


@pytest.fixture
def gripper():
    """coupled_gripper: a robot with a dependent (coupled) joint."""
    yield from _robot("coupled_gripper")
