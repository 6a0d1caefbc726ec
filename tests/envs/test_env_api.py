"""The Gymnasium contract: checkers, seeding, spaces, info, rendering, errors, lifetime."""

import warnings

import gymnasium
import numpy as np
import pytest
from env_helpers import FLAT_MODES, IDS, rollout
from gymnasium.utils.env_checker import check_env

import jointlab
from jointlab.envs import ACTION_MODES, JointLabEnv
from jointlab.errors import ActionError, ConfigurationError, JointLabError
from jointlab.interface import ArrayState
from jointlab.robots import description_to_urdf, dump_yaml
from jointlab.sim import SimRobot


# The njoint Dict is in SI units on purpose (it is for controller work, not for policies).
@pytest.mark.filterwarnings("ignore:.*symmetric and normalized:UserWarning")
@pytest.mark.parametrize("mode", ACTION_MODES)
@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env_passes(env_id, mode, make):
    env = make(env_id, action_mode=mode)
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("mode", FLAT_MODES)
@pytest.mark.parametrize("env_id", IDS)
def test_sb3_check_env_passes_for_flat_modes(env_id, mode, make):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = make(env_id, action_mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3 warns about anything it dislikes
        sb3_checker.check_env(env.unwrapped, warn=True)


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_trajectory(env_id, make):
    env = make(env_id)
    first = rollout(env, seed=7, steps=15)
    second = rollout(env, seed=7, steps=15)
    other_env = make(env_id)
    third = rollout(other_env, seed=7, steps=15)
    for a, b, c in zip(first, second, third, strict=True):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def _task_goal(env):
    task = env.unwrapped.task
    for name in ("goal", "target"):
        if hasattr(task, name):
            return np.array(getattr(task, name))
    return np.array(task.reference.amplitude)


@pytest.mark.parametrize("env_id", IDS)
def test_different_seeds_give_different_goals(env_id, make):
    env = make(env_id)
    goals = []
    for seed in range(4):
        env.reset(seed=seed)
        goals.append(_task_goal(env))
    for i in range(len(goals)):
        for j in range(i):
            assert not np.allclose(goals[i], goals[j])


def test_reset_without_seed_continues_the_sequence(make):
    env = make("jointlab/Reach-v0")
    env.reset(seed=3)
    a = _task_goal(env)
    env.reset()
    b = _task_goal(env)
    env.reset(seed=3)
    np.testing.assert_array_equal(_task_goal(env), a)
    env.reset()
    np.testing.assert_array_equal(_task_goal(env), b)
    assert not np.allclose(a, b)


def test_observation_order_and_info(make):
    env = make("jointlab/Reach-v0", observe_torque=True, observe_previous_action=True)
    base = env.unwrapped
    assert base.observation_layout.names == (
        "position",
        "velocity",
        "torque",
        "previous_action",
        "goal",
        "tool",
        "to_goal",
    )
    observation, info = env.reset(seed=0)
    parts = base.observation_layout.split(observation)
    np.testing.assert_allclose(parts["position"], info["state"].position, rtol=1e-6)
    np.testing.assert_allclose(parts["goal"], base.task.goal, rtol=1e-6)
    np.testing.assert_allclose(parts["to_goal"], parts["goal"] - parts["tool"], atol=1e-6)
    action = env.action_space.sample()
    observation, reward, _terminated, _truncated, info = env.step(action)
    parts = base.observation_layout.split(observation)
    np.testing.assert_allclose(parts["previous_action"], action)
    assert isinstance(info["state"], ArrayState)
    np.testing.assert_array_equal(info["state"].position, base.robot.read().position)
    assert info["state"].time == pytest.approx(0.02)
    terms = {k: v for k, v in info.items() if k.startswith("reward_")}
    assert set(terms) == {"reward_distance", "reward_success", "reward_effort"}
    assert sum(terms.values()) == pytest.approx(reward)
    assert isinstance(info["is_success"], bool)


def test_out_of_space_actions_are_clipped_and_counted(make):
    env = make("jointlab/Reach-v0", action_mode="torque")
    env.reset(seed=0)
    action = np.array([3.0, 0, 0, 0, -2.0, 0], dtype=np.float32)
    _, _, _, _, info = env.step(action)
    assert info["action_clipped"] == 2
    _, _, _, _, info = env.step(action)
    assert info["action_clipped_total"] == 4
    env.reset()
    _, _, _, _, info = env.step(np.zeros(6, np.float32))
    assert info["action_clipped_total"] == 0


def test_nan_action_raises_action_error(make):
    env = make("jointlab/Reach-v0")
    env.reset(seed=0)
    action = np.zeros(6, np.float32)
    action[3] = np.nan
    with pytest.raises(ActionError, match="wrist_roll"):
        env.step(action)


def test_time_limit_truncates_not_terminates(make):
    env = make("jointlab/Reach-v0")
    env.reset(seed=0)
    for step in range(50):
        _, _, terminated, truncated, _ = env.step(np.zeros(6, np.float32))
        assert not terminated
        assert truncated == (step == 49)


def test_terminate_on_success_terminates(make):
    env = make("jointlab/Reach-v0", terminate_on_success=True)
    base = env.unwrapped
    env.reset(seed=0, options={"goal": base.task.kinematics.position(base.description.home)})
    hold = base.actions.hold(base.state)
    _, _reward, terminated, truncated, info = env.step(hold)
    assert info["is_success"] and terminated and not truncated


def test_reset_options(make):
    env = make("jointlab/Reach-v0")
    q = np.array([0.1, 0.2, 0.3, 0.0, 0.1, 0.0])
    _, info = env.reset(seed=0, options={"q": q, "goal": [0.3, 0.2, 0.4]})
    np.testing.assert_allclose(info["state"].position, q, atol=1e-9)
    np.testing.assert_array_equal(env.unwrapped.task.goal, [0.3, 0.2, 0.4])
    with pytest.raises(ConfigurationError, match="did you mean 'goal'"):
        env.reset(options={"gaol": [0, 0, 0]})
    with pytest.raises(ConfigurationError, match="'goal' must be 3 finite numbers"):
        env.reset(options={"goal": [0, 0]})


def test_rgb_array_render_is_a_non_blank_image(make):
    env = make("jointlab/Push-v0", render_mode="rgb_array", render_size=(96, 64))
    env.reset(seed=0)
    image = env.render()
    assert image.shape == (64, 96, 3) and image.dtype == np.uint8
    assert image.std() > 5 and len(np.unique(image.reshape(-1, 3), axis=0)) > 10
    assert env.unwrapped.metadata["render_fps"] == 50


def test_render_without_mode_returns_none_and_bad_mode_is_refused(make):
    env = make("jointlab/Reach-v0")
    env.reset(seed=0)
    assert env.render() is None
    with pytest.raises(ConfigurationError, match="did you mean 'rgb_array'"):
        JointLabEnv("reach", render_mode="rgb-array")


def test_close_is_safe_twice_and_step_after_close_fails():
    env = JointLabEnv("reach")
    env.reset(seed=0)
    env.close()
    env.close()
    with pytest.raises(JointLabError):
        env.reset()
    with pytest.raises(JointLabError, match="closed"):
        env.step(np.zeros(6, np.float32))


def test_step_before_reset_fails():
    env = JointLabEnv("reach")
    with pytest.raises(ConfigurationError, match="reset"):
        env.step(np.zeros(6, np.float32))
    env.close()


def test_robot_can_be_a_description_a_file_or_a_live_robot(tmp_path):
    description = jointlab.load_robot("planar2")
    yaml_path = tmp_path / "planar2.yaml"
    yaml_path.write_text(dump_yaml(description))
    for robot in (description, str(yaml_path)):
        env = JointLabEnv("reach", robot=robot)
        assert env.description == description
        env.close()
    live = SimRobot(description, control_dt=0.01)
    env = JointLabEnv("joint_tracking", robot=live)
    assert env.control_dt == 0.01 and env.robot is live
    env.reset(seed=0)
    env.step(env.action_space.sample())
    env.close()
    live.read()  # not closed by the env: it did not build it
    live.close()


def test_urdf_robot(tmp_path):
    path = tmp_path / "planar2.urdf"
    path.write_text(description_to_urdf(jointlab.load_robot("planar2")))
    env = JointLabEnv("joint_tracking", robot=str(path))
    assert env.description.dof == 2
    env.reset(seed=0)
    env.step(env.action_space.sample())
    env.close()


def test_timestep_ratio_is_checked():
    with pytest.raises(ConfigurationError, match="integer multiple"):
        JointLabEnv("reach", control_dt=0.0125, dt=0.001)


def test_control_dt_sets_physics_steps_per_env_step(make):
    env = make("jointlab/JointTracking-v0", control_dt=0.05)
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(env.action_space.sample())
    assert info["state"].time == pytest.approx(0.05)


def test_previous_action_needs_a_flat_mode():
    with pytest.raises(ConfigurationError, match="flat action mode"):
        JointLabEnv("reach", action_mode="njoint", observe_previous_action=True)


def test_task_object_and_kwargs_are_exclusive():
    with pytest.raises(ConfigurationError, match="unknown JointLabEnv arguments"):
        JointLabEnv(jointlab.envs.Reach(), success_threshold=0.1)


def test_make_accepts_gymnasium_ids_and_names_every_task_default_robot():
    for env_id, robot in [
        ("jointlab/Reach-v0", "arm6"),
        ("jointlab/Push-v0", "planar2"),
        ("jointlab/JointTracking-v0", "planar2"),
        ("jointlab/Hold-v0", "arm6"),
    ]:
        env = gymnasium.make(env_id)
        assert env.unwrapped.description.name == robot
        env.close()


def test_backend_url_builds_the_robot():
    pytest.importorskip("jointlab.connection")
    env = JointLabEnv("reach", backend="sim://arm6?dt=0.001&control_dt=0.02")
    assert env.description.name == "arm6" and env.control_dt == pytest.approx(0.02)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    env.close()
    with pytest.raises(ConfigurationError, match="either"):
        JointLabEnv("reach", robot="arm6", backend="sim://arm6")


@pytest.mark.gui
def test_human_render_mode_opens_the_gui():
    import os

    if not os.environ.get("DISPLAY"):
        pytest.skip("needs a display")
    env = JointLabEnv("reach", render_mode="human")
    env.reset(seed=0)
    env.step(env.action_space.sample())
    assert env.render() is None
    env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_with_its_render_check_passes_headless(env_id, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    env = gymnasium.make(env_id)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_env(env.unwrapped)  # renders in every declared mode, "human" included
    finally:
        env.close()
