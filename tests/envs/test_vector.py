"""Vectorised environments: Gymnasium's Sync/Async vector envs and SB3's VecEnvs."""

import functools

import gymnasium
import numpy as np
import pytest

import jointlab.envs  # noqa: F401  (registers the ids)


def _make(env_id="jointlab/Reach-v0", **kwargs):
    # "module:id" makes Gymnasium import jointlab.envs (which registers the ids) in workers
    # started with spawn or forkserver (SB3's SubprocVecEnv), whatever the parent imported.
    return functools.partial(gymnasium.make, f"jointlab.envs:{env_id}", **kwargs)


def _run(vec, steps=60):
    observations, infos = vec.reset(seed=3)
    assert observations.shape == (vec.num_envs, *vec.single_observation_space.shape)
    vec.action_space.seed(0)
    resets = 0
    for _ in range(steps):
        observations, rewards, terminated, truncated, infos = vec.step(vec.action_space.sample())
        assert observations.dtype == np.float32 and rewards.shape == (vec.num_envs,)
        resets += int(np.sum(terminated | truncated))
    assert "is_success" in infos and "state" in infos
    return observations, resets


def test_sync_and_async_vector_envs_agree():
    sync = gymnasium.vector.SyncVectorEnv([_make(), _make()])
    asynchronous = gymnasium.vector.AsyncVectorEnv([_make(), _make()])
    try:
        a, resets = _run(sync)
        b, _ = _run(asynchronous)
    finally:
        sync.close()
        asynchronous.close()
    assert resets == 2  # both envs hit the 50-step limit once and were auto-reset
    np.testing.assert_array_equal(a, b)


def test_make_vec_with_kwargs():
    vec = gymnasium.make_vec(
        "jointlab/JointTracking-v0", num_envs=2, vectorization_mode="sync", action_mode="torque"
    )
    try:
        _run(vec, steps=5)
        assert vec.single_action_space.shape == (2,)
    finally:
        vec.close()


@pytest.mark.slow  # importing torch and starting SB3's worker processes takes seconds
@pytest.mark.parametrize("kind", ["DummyVecEnv", "SubprocVecEnv"])
def test_sb3_vec_envs(kind):
    vec_env = pytest.importorskip("stable_baselines3.common.vec_env")
    vec = getattr(vec_env, kind)([_make("jointlab/Hold-v0"), _make("jointlab/Hold-v0")])
    try:
        vec.seed(0)
        observations = vec.reset()
        assert observations.shape == (2, *vec.observation_space.shape)
        for _ in range(5):
            actions = np.stack([vec.action_space.sample() for _ in range(2)])
            observations, rewards, _dones, infos = vec.step(actions)
        assert rewards.shape == (2,) and len(infos) == 2 and "hold_error" in infos[0]
    finally:
        vec.close()
