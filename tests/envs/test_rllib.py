"""Ray RLlib: JointLab ids train with PPO on 2 env runners; env seeds derive from one base seed.

The RLlib run needs the ``distributed`` extra; run it alone with
``.venv/bin/python -m pytest tests/envs/test_rllib.py -q``.
"""

import subprocess
import sys

import gymnasium
import numpy as np
import pytest

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs.evaluation import evaluate_policy
from jointlab.envs.rllib import (
    SeedFirstReset,
    derive_seed,
    log_success,
    make_rllib_env,
    register_rllib_envs,
)
from jointlab.errors import ConfigurationError

ENV_ID = "jointlab/Reach-v0"
ENV_CONFIG = {"robot": "arm6", "action_mode": "position", "seed": 11}


def _goal_after_first_reset(env_config):
    env = make_rllib_env(ENV_ID, env_config)
    try:
        env.reset(seed=12345)  # the seed RLlib would pass: replaced by the derived one
        return env.unwrapped.task.goal.copy()
    finally:
        env.close()


# ----------------------------------------------------------------------------- seeding
def test_derived_seeds_are_distinct_stable_and_avoid_base_plus_index_collisions():
    seeds = [derive_seed(7, worker, vector) for worker in range(4) for vector in range(4)]
    assert len(set(seeds)) == len(seeds)
    assert derive_seed(7, 2, 1) == derive_seed(7, 2, 1)
    assert derive_seed(7, 2, 1) != derive_seed(8, 2, 1)
    assert derive_seed(0, 1, 1) != derive_seed(0, 2, 0)  # base + worker + vector would collide
    assert all(0 <= s < 2**32 for s in seeds)


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, None])
def test_derive_seed_rejects_non_integers(bad):
    with pytest.raises(ConfigurationError, match="non-negative integer"):
        derive_seed(bad)


def test_first_reset_uses_the_derived_seed_and_later_resets_follow_gymnasium():
    env = make_rllib_env(ENV_ID, ENV_CONFIG)  # a plain dict: worker 0, sub-env 0
    reference = gymnasium.make(ENV_ID, robot="arm6", action_mode="position")
    try:
        assert isinstance(env, SeedFirstReset) and env.first_seed == derive_seed(11)
        observation, _ = env.reset(seed=999)
        expected, _ = reference.reset(seed=derive_seed(11))
        np.testing.assert_array_equal(observation, expected)
        np.testing.assert_array_equal(env.reset()[0], reference.reset()[0])
        np.testing.assert_array_equal(env.reset(seed=5)[0], reference.reset(seed=5)[0])
    finally:
        env.close()
        reference.close()


def test_without_a_seed_the_env_is_plain_and_keywords_reach_the_env():
    env = make_rllib_env(ENV_ID, {"robot": "arm6", "action_mode": "torque"})
    try:
        assert not isinstance(env, SeedFirstReset)
        assert env.unwrapped.action_mode == "torque"
        assert env.spec.max_episode_steps == 50
    finally:
        env.close()


@pytest.mark.slow  # importing ray.rllib takes seconds
def test_sub_envs_of_one_rllib_context_get_their_own_seeds():
    env_context = pytest.importorskip("ray.rllib.env.env_context")
    context = env_context.EnvContext(dict(ENV_CONFIG), worker_index=2)
    # the new API stack builds every sub-env of a runner from the same context object
    envs = [make_rllib_env(ENV_ID, context) for _ in range(3)]
    old_stack = env_context.EnvContext(dict(ENV_CONFIG), worker_index=1, vector_index=3)
    envs.append(make_rllib_env(ENV_ID, old_stack))
    try:
        assert [e.first_seed for e in envs] == [
            derive_seed(11, 2, 0),
            derive_seed(11, 2, 1),
            derive_seed(11, 2, 2),
            derive_seed(11, 1, 3),
        ]
    finally:
        for env in envs:
            env.close()


def test_bad_ids_and_vector_entry_point_are_refused():
    with pytest.raises(ConfigurationError, match="did you mean 'jointlab/Reach-v0'"):
        make_rllib_env("jointlab/Reach-v1", {})
    with pytest.raises(ConfigurationError, match="vector_entry_point"):
        make_rllib_env(ENV_ID, {"num_envs": 2})
    with pytest.raises(ConfigurationError, match="Reach-v0"):
        make_rllib_env(ENV_ID, {"robot": "arm6", "no_such_option": 1})


def test_importing_the_envs_never_imports_ray():
    code = (
        "import sys, jointlab.envs, jointlab.envs.rllib, jointlab.envs.evaluation; "
        "sys.exit(int('ray' in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# ----------------------------------------------------------------------------- RLlib run
@pytest.fixture(scope="module")
def ray_local(request):
    """A private local Ray instance (never RAY_ADDRESS's cluster), shut down after the module."""
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.rllib")
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        ignore_reinit_error=True,
        log_to_driver=False,
        object_store_memory=150 * 1024**2,
    )
    request.addfinalizer(ray.shutdown)
    return ray


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_ppo_on_two_env_runners_returns_episode_metrics_and_seeds_each_env(ray_local, tmp_path):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    assert ENV_ID in register_rllib_envs()
    config = (
        PPOConfig()
        .environment(ENV_ID, env_config=ENV_CONFIG)
        # 2 runners x 2 envs x 25 steps = one 100-step batch; episodes (50 steps) end in
        # the second iteration
        .env_runners(
            num_env_runners=2,
            num_envs_per_env_runner=2,
            rollout_fragment_length=25,
            sample_timeout_s=None,
        )
        .training(train_batch_size_per_learner=100, minibatch_size=50, num_epochs=1)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[32, 32]))
        .callbacks(on_episode_end=log_success)
        .debugging(seed=11)
    )
    algo = config.build_algo()
    try:
        algo.train()

        def goals(runner):  # local: pickled by value to the runners
            envs = runner.env.unwrapped.envs
            return runner.worker_index, [e.unwrapped.task.goal.copy() for e in envs]

        runner_goals = algo.env_runner_group.foreach_env_runner(goals, local_env_runner=False)
        result = algo.train()
        checkpoint = algo.save_to_path(str(tmp_path / "checkpoint"))
    finally:
        algo.stop()

    metrics = result["env_runners"]
    assert result["training_iteration"] == 2
    assert metrics["num_episodes"] >= 1
    assert metrics["episode_len_mean"] == 50
    assert np.isfinite(metrics["episode_return_mean"])
    assert 0.0 <= metrics["episode_success_rate"] <= 1.0

    # every sub-env of every runner started from its own derived seed
    assert sorted(worker for worker, _ in runner_goals) == [1, 2]
    env_context = pytest.importorskip("ray.rllib.env.env_context")
    seen = []
    for worker, remote_goals in runner_goals:
        assert len(remote_goals) == 2
        for vector, remote_goal in enumerate(remote_goals):
            context = env_context.EnvContext(
                dict(ENV_CONFIG), worker_index=worker, vector_index=vector
            )
            np.testing.assert_array_equal(remote_goal, _goal_after_first_reset(context))
            seen.append(tuple(remote_goal))
    assert len(set(seen)) == 4

    # the checkpoint evaluates through the same helper as an SB3 model
    evaluation = evaluate_policy(checkpoint, "sim://arm6", episodes=2, seed=0)
    assert evaluation.env_id == ENV_ID
    assert evaluation.lengths.tolist() == [50, 50]
    assert np.all(np.isfinite(evaluation.returns))


@pytest.mark.slow
def test_more_runners_than_cpus_is_an_error_not_a_silent_wait():
    ray = pytest.importorskip("ray")
    from jointlab.envs.ray_start import start_ray
    from jointlab.errors import ConfigurationError

    if ray.is_initialized():  # pragma: no cover - another test left Ray running
        ray.shutdown()
    with pytest.raises(ConfigurationError, match=r"3 env runners need 3 CPUs.*has 1"):
        start_ray(num_cpus=1, runners=3)
    assert not ray.is_initialized()
