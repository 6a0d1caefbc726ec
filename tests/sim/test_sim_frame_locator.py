"""``SimRobot.frame_locator``: the engine's tool position, exactly the kinematics of read()."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs.tasks import ChainKinematics
from jointlab.interface import NJointAction
from jointlab.robots import builtin_robots, load_robot
from jointlab.sim import SensorModel, SimRobot, World

TOOLS = [(name, tool) for name in builtin_robots() for tool in load_robot(name).tool_names]


@pytest.mark.parametrize(("robot", "tool"), TOOLS)
def test_the_engine_locates_each_tool_where_the_kinematics_of_the_read_state_puts_it(robot, tool):
    """Every built-in robot and tool, on MuJoCo, at configurations spread over its range."""
    with SimRobot(robot, engine="mujoco", control_dt=0.01) as sim:
        d = sim.description
        locate = sim.frame_locator(tool)
        chain = ChainKinematics(d, tool)
        rng = np.random.default_rng(7)
        for _ in range(3):
            low, high = d.soft_lower, d.soft_upper
            sim.reset(rng.uniform(low, high))
            sim.apply(NJointAction.Position(rng.uniform(low, high)))
            for _ in range(5):
                sim.step()
                state = sim.read()
                np.testing.assert_allclose(
                    locate(state), chain.position(state.position), rtol=0, atol=1e-12
                )


def test_a_state_that_is_no_longer_the_latest_is_not_located():
    with SimRobot("arm6", engine="mujoco", control_dt=0.01) as sim:
        locate = sim.frame_locator("wrist_yaw_tool")
        sim.apply(NJointAction.Position(np.array(sim.description.home) + 0.3))
        sim.step()
        earlier = sim.read()
        assert locate(earlier) is not None
        sim.step()
        assert locate(earlier) is None  # the engine has moved on: kinematics of earlier.position
        assert locate(sim.read()) is not None
        sim.reset()
        assert locate(earlier) is None


def test_the_locator_follows_the_robot_when_the_world_recompiles():
    with World(engine="mujoco") as world:
        sim = SimRobot("arm6", world=world, control_dt=0.01)
        locate = sim.frame_locator("wrist_yaw_tool")
        chain = ChainKinematics(sim.description, "wrist_yaw_tool")
        sim.apply(NJointAction.Position(np.array(sim.description.home) + 0.2))
        sim.step()
        world.add_box((0.05, 0.05, 0.05), (0.6, 0.3, 0.05), mass=0.5)  # recompiles the model
        sim.step()
        state = sim.read()
        np.testing.assert_allclose(locate(state), chain.position(state.position), atol=1e-12)


@pytest.mark.parametrize(
    ("engine", "sensors", "frame"),
    [
        ("pybullet", None, "wrist_yaw_tool"),  # getLinkState is not cheaper than the numpy
        ("mujoco", SensorModel(position_noise=1e-3), "wrist_yaw_tool"),  # read() is not exact
        ("mujoco", None, "wrist_yaw"),  # an element's moving frame is not its end frame
        ("mujoco", None, "hand_tool"),  # no such tool
    ],
    ids=["pybullet", "sensor-model", "element", "unknown"],
)
def test_no_locator_where_the_engine_is_not_exact_or_not_cheaper(engine, sensors, frame):
    with SimRobot("arm6", engine=engine, sensors=sensors) as sim:
        assert sim.frame_locator(frame) is None


def test_reach_on_mujoco_observes_the_kinematics_of_its_states_old_and_new():
    env = gymnasium.make("jointlab/Reach-v0", engine="mujoco")
    try:
        task = env.unwrapped.task
        chain = ChainKinematics(env.unwrapped.robot.description, task.tool_name)
        observation, info = env.reset(seed=4)
        first = info["state"]
        rng = np.random.default_rng(4)
        for _ in range(3):
            observation, _, _, _, info = env.step(rng.uniform(-1, 1, 6).astype(np.float32))
        parts = env.unwrapped.observation_layout.split(observation)
        tool = chain.position(info["state"].position)
        np.testing.assert_allclose(parts["tool"], tool.astype(np.float32), rtol=0, atol=1e-6)
        np.testing.assert_allclose(task.tool_position(info["state"]), tool, rtol=0, atol=1e-12)
        # a state of three steps ago: the engine has moved on, the kinematics answers
        np.testing.assert_array_equal(task.tool_position(first), chain.position(first.position))
    finally:
        env.close()


@pytest.mark.parametrize(
    "urdf",
    ["kuka_iiwa/model.urdf", "franka_panda/panda.urdf", "xarm/xarm6_robot.urdf", "r2d2.urdf"],
)
def test_other_peoples_urdfs_are_located_where_their_kinematics_puts_them(urdf):
    """Imported URDFs (pybullet_data), every tool, on MuJoCo: their files, not ours."""
    pybullet_data = pytest.importorskip("pybullet_data")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # their default gains and limits are not ours to judge
        description = load_robot(Path(pybullet_data.getDataPath()) / urdf)
        sim = SimRobot(description, engine="mujoco", control_dt=0.01, gain_check="warn")
    with sim:
        rng = np.random.default_rng(11)
        for tool in description.tool_names:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sim.reset(rng.uniform(description.soft_lower, description.soft_upper))
                sim.step()
            state = sim.read()
            np.testing.assert_allclose(
                sim.frame_locator(tool)(state),
                ChainKinematics(description, tool).position(state.position),
                rtol=0,
                atol=1e-12,
            )
