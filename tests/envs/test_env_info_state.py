"""``info["state"]``: read-only snapshots of the step's state, on both engines."""

import numpy as np
import pytest

from jointlab.interface import ARRAY_FIELDS, ArrayState
from jointlab.sim import SimRobot

ENGINES = ("pybullet", "mujoco")


@pytest.mark.parametrize("engine", ENGINES)
def test_info_state_is_a_read_only_snapshot_that_later_steps_do_not_change(make, engine):
    env = make("jointlab/Reach-v0", robot="arm6", engine=engine)
    env.reset(seed=0)
    action = np.full(env.action_space.shape, 0.5, dtype=np.float32)
    _, _, _, _, info = env.step(action)
    first = info["state"]
    kept = {name: np.array(first[name]) for name in (*ARRAY_FIELDS, "actuator_state")}
    for _ in range(5):
        _, _, _, _, later = env.step(-action)
    for name, value in kept.items():
        array = first[name]
        assert not array.flags.writeable, name
        with pytest.raises(ValueError):
            array[0] = 1.0
        np.testing.assert_array_equal(array, value, err_msg=name)
    assert not np.array_equal(later["state"]["position"], kept["position"])


@pytest.mark.parametrize("engine", ENGINES)
def test_info_state_equals_the_robot_state_fields(make, engine):
    env = make("jointlab/Reach-v0", robot="arm6", engine=engine)
    env.reset(seed=1)
    _, _, _, _, info = env.step(env.action_space.sample())
    state = env.unwrapped.state
    for name in (*ARRAY_FIELDS, "actuator_state"):
        np.testing.assert_array_equal(info["state"][name], getattr(state, name), err_msg=name)
    assert info["state"]["time"] == state.time
    assert info["state"]["armed"] == state.armed


@pytest.mark.parametrize("engine", ENGINES)
def test_sim_state_arrays_rows_equal_fields_read_before_and_after(engine):
    robot = SimRobot("arm6", engine=engine)
    try:
        robot.arm()
        for _ in range(5):
            robot.step()
        state = robot.read()
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
    state = ArrayState(time=0.0, position=position, velocity=np.zeros(2),
                       acceleration=np.zeros(2), torque=np.array([1.0, 2.0]),
                       current=np.zeros(2), actuator_state=np.ones(2, dtype=np.uint8),
                       motor_power=True, armed=True)  # fmt: skip
    block = state.arrays()
    position[0] = 9.0
    np.testing.assert_array_equal(block[0], [0.1, -0.2])
    np.testing.assert_array_equal(block[3], [1.0, 2.0])
    assert not block.flags.writeable
