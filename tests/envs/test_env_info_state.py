"""``info["state"]``: the step's ``ArrayState``, read-only, on both engines and on a device."""

import dataclasses

import numpy as np
import pytest

from jointlab.interface import ARRAY_FIELDS, ArrayState
from jointlab.sim import SimRobot

ENGINES = ("pybullet", "mujoco")
FIELDS = (*ARRAY_FIELDS, "actuator_state")


@pytest.mark.parametrize("engine", ENGINES)
def test_info_state_is_a_read_only_snapshot_that_later_steps_do_not_change(make, engine):
    env = make("jointlab/Reach-v0", robot="arm6", engine=engine)
    env.reset(seed=0)
    action = np.full(env.action_space.shape, 0.5, dtype=np.float32)
    _, _, _, _, info = env.step(action)
    first = info["state"]
    kept = {name: np.array(getattr(first, name)) for name in FIELDS}
    for _ in range(5):
        _, _, _, _, later = env.step(-action)
    for name, value in kept.items():
        array = getattr(first, name)
        assert not array.flags.writeable, name
        with pytest.raises(ValueError):
            array[0] = 1
        np.testing.assert_array_equal(array, value, err_msg=name)
    assert not np.array_equal(later["state"].position, kept["position"])


@pytest.mark.parametrize("engine", ENGINES)
def test_info_state_is_the_state_the_robot_reports(make, engine):
    env = make("jointlab/Reach-v0", robot="arm6", engine=engine)
    _, info = env.reset(seed=1)
    assert info["state"] is env.unwrapped.state
    _, _, _, _, info = env.step(env.action_space.sample())
    state = info["state"]
    assert isinstance(state, ArrayState)
    assert state == env.unwrapped.robot.read()
    assert state.time == pytest.approx(0.02)
    assert state.armed and state.motor_power


def test_info_state_from_a_device_is_read_only(make):
    env = make("jointlab/Reach-v0", backend="emulated://arm6?lockstep=1")
    env.reset(seed=2)
    _, _, _, _, info = env.step(env.action_space.sample())
    state = info["state"]
    for name in FIELDS:
        assert not getattr(state, name).flags.writeable, name
    np.testing.assert_array_equal(state.position, env.unwrapped.robot.read().position)


def test_frozen_copies_writable_arrays_once_and_keeps_read_only_states():
    position = np.array([0.1, -0.2])
    state = ArrayState(
        time=0.5,
        position=position,
        velocity=np.zeros(2),
        acceleration=np.zeros(2),
        torque=np.array([1.0, 2.0]),
        current=np.zeros(2),
        actuator_state=np.ones(2, dtype=np.uint8),
        motor_power=True,
        armed=True,
        extras={"temperature": np.array([30.0, 31.0])},
    )
    frozen = state.frozen()
    assert frozen is not state and frozen == state
    position[0] = 9.0
    state.extras["temperature"][0] = 99.0
    assert frozen.position.tolist() == [0.1, -0.2]
    assert frozen.extras["temperature"].tolist() == [30.0, 31.0]
    for name in FIELDS:
        assert not getattr(frozen, name).flags.writeable, name
    assert not frozen.extras["temperature"].flags.writeable
    assert frozen.frozen() is frozen
    assert dataclasses.replace(frozen, time=1.0).frozen().time == 1.0


@pytest.mark.parametrize("engine", ENGINES)
def test_sim_state_is_frozen_already_and_its_arrays_rows_equal_its_fields(engine):
    robot = SimRobot("arm6", engine=engine)
    try:
        robot.arm()
        for _ in range(5):
            robot.step()
        state = robot.read()
        assert state.frozen() is state
        before = {name: np.array(getattr(state, name)) for name in ARRAY_FIELDS}
        block = state.arrays()
        assert block.shape == (len(ARRAY_FIELDS), robot.description.dof)
        assert not block.flags.writeable
        assert state.arrays() is block
        for row, name in enumerate(ARRAY_FIELDS):
            np.testing.assert_array_equal(block[row], before[name], err_msg=name)
            np.testing.assert_array_equal(getattr(state, name), before[name], err_msg=name)
        for _ in range(5):
            robot.step()
        for row, name in enumerate(ARRAY_FIELDS):
            np.testing.assert_array_equal(block[row], before[name], err_msg=name)
    finally:
        robot.close()


def test_plain_array_state_arrays_copies_its_fields():
    position = np.array([0.1, -0.2])
    state = ArrayState(
        time=0.0,
        position=position,
        velocity=np.zeros(2),
        acceleration=np.zeros(2),
        torque=np.array([1.0, 2.0]),
        current=np.zeros(2),
        actuator_state=np.ones(2, dtype=np.uint8),
        motor_power=True,
        armed=True,
    )
    block = state.arrays()
    position[0] = 9.0
    np.testing.assert_array_equal(block[0], [0.1, -0.2])
    np.testing.assert_array_equal(block[3], [1.0, 2.0])
    assert not block.flags.writeable
