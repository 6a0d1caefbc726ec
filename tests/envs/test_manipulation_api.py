"""The manipulation environments through Gymnasium: ids, spaces, HER's compute_reward, bad input."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import jointlab
from jointlab.envs.manipulation import (
    GOAL_TASKS,
    MANIPULATION_IDS,
    ManipulationEnv,
    find_gripper,
    load_scene,
)
from jointlab.errors import ConfigurationError
from jointlab.robots import dump_yaml

IDS = sorted(MANIPULATION_IDS)


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes_on_every_id(env_id):
    env = gymnasium.make(env_id)
    try:
        check_env(env.unwrapped, skip_render_check=True)
        assert env.spec.max_episode_steps == GOAL_TASKS[MANIPULATION_IDS[env_id]].max_episode_steps
    finally:
        env.close()


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("reward_type", ["sparse", "dense"])
def test_compute_reward_equals_the_step_reward_over_random_batches(env_id, reward_type):
    env = gymnasium.make(env_id, reward_type=reward_type, action_space="joint")
    try:
        observation, _ = env.reset(seed=3)
        achieved, desired, rewards, infos = [], [], [], []
        rng = np.random.default_rng(0)
        for _ in range(12):
            observation, reward, _, _, info = env.step(rng.uniform(-1, 1, env.action_space.shape))
            achieved.append(observation["achieved_goal"])
            desired.append(observation["desired_goal"])
            rewards.append(reward)
            infos.append(info)
        batch = env.unwrapped.compute_reward(np.array(achieved), np.array(desired), infos)
        assert batch.shape == (12,)
        np.testing.assert_array_equal(batch, np.array(rewards, dtype=np.float32))
        # Relabelled goals (HER's "future" strategy): one call on a random batch of pairs.
        goals = np.array(achieved)[rng.integers(0, 12, size=12)]
        relabelled = env.unwrapped.compute_reward(np.array(achieved), goals, infos)
        one_by_one = [
            env.unwrapped.compute_reward(a, g, i)
            for a, g, i in zip(achieved, goals, infos, strict=True)
        ]
        np.testing.assert_array_equal(relabelled, np.array(one_by_one, dtype=np.float32))
        if reward_type == "sparse":
            assert set(np.unique(relabelled)) <= {-1.0, 0.0}
            assert env.unwrapped.compute_reward(goals[0], goals[0], {}) == 0.0
    finally:
        env.close()


def test_info_reports_the_control_period_at_the_configured_rate():
    env = gymnasium.make("jointlab/Lift-v0", control_dt=0.02, dt=0.002)
    try:
        env.reset(seed=0)
        _, _, _, _, info = env.step(np.zeros(4, dtype=np.float32))
        assert info["control_dt"] == 0.02
        assert info["control_period"] == pytest.approx(0.02, abs=1e-12)
    finally:
        env.close()


def test_a_robot_without_a_gripper_is_refused_by_name():
    with pytest.raises(ConfigurationError, match=r"robot 'arm6' has no gripper.*so101"):
        gymnasium.make("jointlab/Lift-v0", robot="arm6")


def test_a_goal_outside_the_workspace_is_refused_with_the_workspace():
    env = gymnasium.make("jointlab/PickPlace-v0")
    try:
        with pytest.raises(ConfigurationError, match=r"outside the workspace of robot 'so101'"):
            env.reset(seed=0, options={"goal": [1.0, 0.0, 0.0125]})
        observation, _ = env.reset(seed=0, options={"goal": [0.2, 0.0, 0.05]})
        np.testing.assert_allclose(observation["desired_goal"], [0.2, 0.0, 0.05], atol=1e-6)
    finally:
        env.close()


@pytest.mark.parametrize("mass", [0, -0.02])
def test_a_cube_without_positive_mass_is_refused_naming_file_cube_and_field(tmp_path, mass):
    text = load_scene().source
    scene = tmp_path / "bad.yaml"
    scene.write_text(open(text).read().replace("mass: 0.02", f"mass: {mass}", 1))
    with pytest.raises(ConfigurationError, match=r"bad.yaml: cube 'cube' field 'mass'"):
        ManipulationEnv("lift", scene=scene)


def test_a_gripper_the_ik_cannot_bring_to_the_table_is_refused(tmp_path):
    text = dump_yaml(jointlab.load_robot("so101")).replace(
        "position: [0.0, 0.0, 0.0]", "position: [0.0, 0.0, 1.0]", 1
    )
    path = tmp_path / "high.yaml"
    path.write_text(text)
    with pytest.raises(ConfigurationError, match=r"its gripper's IK reaches no point"):
        ManipulationEnv("lift", robot=path)


@pytest.mark.parametrize("robot", ["so101", "koch"])
def test_the_grippers_open_away_from_the_fixed_jaw_and_hold_a_cube_parallel(robot):
    description = jointlab.load_robot(robot)
    gripper = find_gripper(description)
    holding = gripper.holding(description, 0.025)
    assert np.sign(holding - gripper.closed) == gripper.opening_sign
    # The moving jaw is parallel to the fixed jaw when it holds the default 2.5 cm cube.
    from jointlab.envs.tasks.kinematics import ChainKinematics

    q = np.array(description.home, dtype=float)
    q[gripper.joint] = holding
    wrist = np.linalg.inv(ChainKinematics(description, gripper.wrist).matrix(q))
    tip = wrist @ ChainKinematics(description, "gripper_tool").matrix(q)[:, 3]
    pivot = wrist @ ChainKinematics(description, "jaw_pivot").matrix(q)[:, 3]
    assert abs((tip - pivot)[:3] @ gripper.side) < 2e-3  # parallel to the wrist x axis
