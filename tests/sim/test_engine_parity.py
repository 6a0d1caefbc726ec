"""The engine-neutral parity suite: every engine, through the protocol, behaves alike.

It runs on PyBullet, MuJoCo and the pure-numpy test engine of ``tests/sim/numpy_engine/``
(a third engine in one folder, registered here by name): what the Robot contract fixes
(time semantics, the law's clamp, power, brakes, resets, determinism) holds exactly on each;
motions agree within what their integrators make of the same model.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from jointlab.errors import ConfigurationError, JointLabError, SimulationError
from jointlab.interface import NJointAction
from jointlab.robots import load_robot
from jointlab.sim import SimRobot, World
from jointlab.sim.engine import available_engines, check_engine, register_engine

register_engine("numpy", "numpy_engine", needs="numpy", install="(the tests' own engine)")
PARITY_ENGINES = ("pybullet", "mujoco", "numpy")


@pytest.fixture(params=PARITY_ENGINES)
def any_engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def planar(any_engine: str) -> Iterator[SimRobot]:
    """planar2 without gravity, stepped at 10 ms (10 physics steps)."""
    world = World(gravity=(0.0, 0.0, 0.0), ground=False, engine=any_engine)
    robot = SimRobot("planar2", world=world, control_dt=0.01)
    yield robot
    robot.close()
    world.close()


def _step_response(engine: str, periods: int = 60) -> np.ndarray:
    world = World(gravity=(0.0, 0.0, 0.0), ground=False, engine=engine)
    with SimRobot("planar2", world=world, control_dt=0.01) as robot:
        robot.apply(NJointAction.Position(np.array(robot.description.home) + 0.3))
        positions = []
        for _ in range(periods):
            robot.step()
            positions.append(robot.read().position)
    world.close()
    return np.array(positions)


def test_time_and_steps_follow_the_contract(planar: SimRobot) -> None:
    for k in range(1, 4):
        planar.step()
        assert planar.read().time == pytest.approx(0.01 * k, abs=1e-12)
        assert planar.world.steps == 10 * k


def test_no_action_and_no_gravity_keeps_the_robot_where_it_is(planar: SimRobot) -> None:
    home = np.array(planar.description.home)
    for _ in range(5):
        planar.step()
    state = planar.read()
    np.testing.assert_allclose(state.position, home, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(state.torque, 0.0)


def test_the_law_clamps_at_the_effort_limit(planar: SimRobot) -> None:
    effort = np.asarray(planar.description.effort_limit)
    planar.apply(NJointAction.Torque(10.0 * effort))
    planar.step()
    np.testing.assert_allclose(planar.read().torque, effort, rtol=1e-12)
    planar.apply(NJointAction.Torque(-10.0 * effort))
    planar.step()
    np.testing.assert_allclose(planar.read().torque, -effort, rtol=1e-12)


def test_power_off_is_exactly_zero_torque(planar: SimRobot) -> None:
    planar.apply(NJointAction.Position(np.array(planar.description.home) + 0.2))
    planar.step()
    assert np.abs(planar.read().torque).max() > 0
    planar.power(False)
    planar.step()
    np.testing.assert_array_equal(planar.read().torque, 0.0)


def test_reset_puts_the_joints_exactly_where_asked(planar: SimRobot) -> None:
    q = np.array(planar.description.home) + np.array([0.1, -0.2])
    qd = np.array([0.5, -0.25])
    state = planar.reset(q, qd)
    np.testing.assert_array_equal(state.position, q)
    np.testing.assert_array_equal(state.velocity, qd)
    assert state.time == 0.0


def test_two_robots_given_the_same_commands_are_bit_identical(any_engine: str) -> None:
    runs = [_step_response(any_engine, periods=20) for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_a_position_step_settles_on_the_target_on_every_engine() -> None:
    runs = {engine: _step_response(engine, periods=150) for engine in PARITY_ENGINES}
    home = np.array(load_robot("planar2").home)
    target = home + 0.3
    for engine, run in runs.items():
        np.testing.assert_allclose(run[-1], target, atol=1e-4, err_msg=engine)
    # MuJoCo's joint armature and the numpy engine's model are the same dynamics (Euler at
    # 1 ms: within 1e-3 rad all the way); PyBullet carries the armature in the links, which
    # moves the transient by up to 0.033 rad.
    np.testing.assert_allclose(runs["mujoco"], runs["numpy"], atol=2e-3)
    np.testing.assert_allclose(runs["pybullet"], runs["numpy"], atol=0.05)


def _fall(engine: str) -> tuple[np.ndarray, np.ndarray]:
    """arm6 unpowered under gravity for 0.1 s: how far each joint moved, and the torques."""
    world = World(ground=False, engine=engine)
    with SimRobot("arm6", world=world, control_dt=0.01) as robot:
        robot.reset(np.array(robot.description.home) + 0.2 * np.array([0, 1, 1, 0, 1, 0]))
        start = robot.read().position
        robot.power(False)  # engages the brakes where fitted (joints 0-2)
        for _ in range(10):
            robot.step()
        state = robot.read()
    world.close()
    return state.position - start, state.torque


def test_gravity_and_brakes_alike_on_every_engine() -> None:
    """The braked joints hold; the free wrist falls the same way on every engine."""
    falls = {engine: _fall(engine) for engine in PARITY_ENGINES}
    for engine, (moved, torque) in falls.items():
        np.testing.assert_allclose(moved[:3], 0.0, atol=1e-5, err_msg=engine)
        np.testing.assert_array_equal(torque, 0.0)
        assert moved[4] > 0.04, engine  # the unbraked wrist pitch falls about 0.045 rad
    np.testing.assert_allclose(falls["mujoco"][0], falls["numpy"][0], atol=1e-3)
    np.testing.assert_allclose(falls["pybullet"][0], falls["numpy"][0], atol=5e-3)


def test_an_unknown_engine_names_the_engines_there_are() -> None:
    with pytest.raises(ConfigurationError, match=r"unknown physics engine 'bulet'.*'pybullet'"):
        check_engine("bulet")


def test_an_engine_that_is_not_installed_names_its_extra_and_the_engines_available() -> None:
    register_engine(
        "warp",
        "jointlab.sim.warp",
        needs="jointlab_no_such_module",
        install="pip install 'jointlab[warp]'",
    )
    with pytest.raises(ConfigurationError) as error:
        World(engine="warp")
    message = str(error.value)
    assert "pip install 'jointlab[warp]'" in message and "jointlab_no_such_module" in message
    assert all(name in message for name in ("pybullet", "mujoco", "numpy"))
    assert "warp" not in available_engines()


def test_a_description_the_engine_cannot_represent_is_refused_at_load() -> None:
    world = World(engine="numpy")
    with pytest.raises(SimulationError, match=r"engine 'numpy'.*joint 'right_finger'.*coupled"):
        SimRobot("coupled_gripper", world=world)
    assert world.robot_count == 0
    world.close()


@pytest.mark.parametrize("engine", PARITY_ENGINES)
def test_contacts_of_a_robot_alone_are_empty_and_named_bodies_only(engine: str) -> None:
    world = World(gravity=(0.0, 0.0, 0.0), ground=False, engine=engine)
    robot = SimRobot("planar2", world=world)
    robot.step()
    contacts = world.contacts(robot.body_id)
    assert all(c.other != robot.body_id and c.normal_force >= 0 for c in contacts)
    robot.close()
    world.close()
    with pytest.raises(JointLabError):
        world.contacts(1)
