"""Every environment id on MuJoCo: the Gymnasium contract, determinism, rendering, errors."""

import gymnasium
import numpy as np
import pytest
from env_helpers import IDS, rollout
from gymnasium.utils.env_checker import check_env

import jointlab
from jointlab.envs.evaluation import Policy, evaluate_policy
from jointlab.errors import ConfigurationError
from jointlab.sim import Randomization, SimRobot


@pytest.mark.parametrize("env_id", IDS)
def test_every_env_id_runs_on_mujoco_and_passes_the_checker(env_id, make):
    env = make(env_id, engine="mujoco")
    assert env.unwrapped.robot.engine == "mujoco"
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_trajectory_on_mujoco(env_id, make):
    first = rollout(make(env_id, engine="mujoco"), seed=7, steps=15)
    second = rollout(make(env_id, engine="mujoco"), seed=7, steps=15)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_same_env_id_and_seed_start_alike_on_both_engines(make):
    """Goals and initial observations come from the task, not the engine."""
    observations = [
        make("jointlab/Reach-v0", engine=e).reset(seed=3)[0] for e in ("pybullet", "mujoco")
    ]
    np.testing.assert_allclose(observations[0], observations[1], atol=1e-6)


def test_rgb_array_rendering_on_mujoco(make):
    env = make("jointlab/Push-v0", engine="mujoco", render_mode="rgb_array", render_size=(96, 64))
    env.reset(seed=0)
    env.step(env.action_space.sample())
    image = env.render()
    assert image.shape == (64, 96, 3) and image.dtype == np.uint8
    assert image.std() > 10  # a scene, not a blank frame


def test_engine_applies_only_to_robots_the_env_builds(make):
    with SimRobot("arm6", engine="mujoco", control_dt=0.02) as robot:
        with pytest.raises(ConfigurationError, match="engine='mujoco' applies to robots"):
            make("jointlab/Reach-v0", robot=robot, engine="mujoco")
        env = make("jointlab/Reach-v0", robot=robot)  # a live robot keeps its engine
        env.reset(seed=0)
    with pytest.raises(ConfigurationError, match=r"jointlab/Hold-v0.*unknown physics engine"):
        make("jointlab/Hold-v0", engine="ode")
    env = make("jointlab/Hold-v0", backend="sim://arm6?engine=mujoco&control_dt=0.02")
    assert env.unwrapped.robot.engine == "mujoco"


def test_domain_randomisation_on_mujoco(make):
    randomization = Randomization(mass_scale=(0.8, 1.2), latency=(0, 2), kp_scale=(0.8, 1.2))
    env = make("jointlab/Reach-v0", engine="mujoco", randomization=randomization)
    env.reset(seed=1)
    drawn = env.unwrapped.robot.episode
    env.reset(seed=2)
    assert not np.array_equal(env.unwrapped.robot.episode.mass_scale, drawn.mass_scale)


class _Home(Policy):
    def act(self, observation):
        return np.zeros(6, dtype=np.float32)


def test_a_policy_is_evaluated_on_a_mujoco_url():
    result = evaluate_policy(_Home(), "sim://arm6?engine=mujoco", episodes=2, seed=0)
    assert result.backend == "sim://arm6?engine=mujoco"
    assert result.lengths.tolist() == [50, 50] and np.all(np.isfinite(result.returns))
    with jointlab.connect("sim://arm6?control_dt=0.02") as robot:
        on_pybullet = evaluate_policy(_Home(), robot, episodes=2, seed=0)
    # Same policy, same goals: the returns differ only by the engines' physics.
    np.testing.assert_allclose(result.returns, on_pybullet.returns, rtol=0.05)


def test_gymnasium_make_takes_engine_for_every_registered_id():
    for env_id in IDS:
        env = gymnasium.make(env_id, engine="mujoco")
        try:
            assert env.unwrapped.robot.engine == "mujoco"
        finally:
            env.close()
