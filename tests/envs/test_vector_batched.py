"""The batched vector environment: the same episodes as N single environments, faster."""

from __future__ import annotations

import multiprocessing
import os

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs.vector import AsyncBatchedEnv, BatchedEnv
from jointlab.envs.vector.asynchronous import DEFAULT_SPIN
from jointlab.errors import ActionError, ConfigurationError

ENV_ID = "jointlab/Reach-v0"


def _singles(count, **kwargs):
    return [gymnasium.make(ENV_ID, max_episode_steps=12, **kwargs) for _ in range(count)]


def _reset_alike(vec, singles, seed):
    """Reset the batch with ``seed`` and single env ``i`` with ``seed + i`` (the contract)."""
    observations, _ = vec.reset(seed=seed)
    return observations, np.array([env.reset(seed=seed + i)[0] for i, env in enumerate(singles)])


def _actions(vec, steps, seed=0):
    rng = np.random.default_rng(seed)
    shape = (steps, vec.num_envs, *vec.single_action_space.shape)
    return rng.uniform(-1.3, 1.3, shape).astype(np.float32)  # some outside: clipped


@pytest.mark.parametrize("engine", ["pybullet", "mujoco"])
def test_next_step_autoreset_equals_single_envs_with_the_same_seeds(engine):
    count = 3
    vec = BatchedEnv(ENV_ID, count, max_episode_steps=12, engine=engine)
    singles = _singles(count, engine=engine)
    try:
        observations, expected = _reset_alike(vec, singles, 11)
        np.testing.assert_array_equal(observations, expected)
        ended = np.zeros(count, dtype=bool)
        truncations = 0
        for actions in _actions(vec, 30):
            observations, rewards, terminated, truncated, info = vec.step(actions)
            for i, env in enumerate(singles):
                if ended[i]:  # NEXT_STEP: this step resets, ignores the action, reward 0
                    expected_obs, _ = env.reset()
                    assert rewards[i] == 0.0
                    assert not info.get("_is_success", np.zeros(count, bool))[i]
                    assert not (terminated[i] or truncated[i])
                else:
                    expected_obs, reward, term, trunc, single_info = env.step(actions[i])
                    assert rewards[i] == reward  # bit for bit: the same distance rounding
                    assert info["distance"][i] == single_info["distance"]
                    assert (terminated[i], truncated[i]) == (term, trunc)
                    assert info["is_success"][i] == single_info["is_success"]
                    assert info["action_clipped"][i] == single_info["action_clipped"]
                np.testing.assert_array_equal(observations[i], expected_obs)
            ended = terminated | truncated
            truncations += int(truncated.sum())
        assert truncations == 2 * count  # two episodes of 12 steps each in 30 steps
    finally:
        vec.close()
        for env in singles:
            env.close()


def test_same_step_autoreset_reports_the_final_observation():
    vec = BatchedEnv(ENV_ID, 2, max_episode_steps=5, autoreset_mode=AutoresetMode.SAME_STEP)
    singles = _singles(2)
    try:
        _reset_alike(vec, singles, 4)
        for actions in _actions(vec, 5):
            observations, _, _, truncated, info = vec.step(actions)
            last = [env.step(a)[0] for env, a in zip(singles, actions, strict=True)]
        assert truncated.all() and info["_final_obs"].all()
        for i, env in enumerate(singles):
            np.testing.assert_array_equal(info["final_obs"][i], last[i])
            np.testing.assert_array_equal(observations[i], env.reset()[0])  # already reset
        assert "is_success" in info["final_info"]
    finally:
        vec.close()
        for env in singles:
            env.close()


def test_bad_actions_and_arguments_are_refused_with_the_shape_or_the_env():
    vec = BatchedEnv(ENV_ID, 2)
    try:
        with pytest.raises(ConfigurationError, match="reset"):
            vec.step(np.zeros((2, 6)))
        vec.reset(seed=0)
        with pytest.raises(ActionError, match=r"shape \(3, 6\), expected \(2, 6\)"):
            vec.step(np.zeros((3, 6)))
        bad = np.zeros((2, 6))
        bad[1, 2] = np.nan
        with pytest.raises(ActionError, match=r"environments \[1\]"):
            vec.step(bad)
        with pytest.raises(ActionError, match="real numbers"):
            vec.step(np.zeros((2, 6)) + 1j)
        with pytest.raises(ActionError, match="real numbers"):
            vec.step([["0.1"] * 6] * 2)
    finally:
        vec.close()
    with pytest.raises(ConfigurationError, match="flat action mode"):
        BatchedEnv(ENV_ID, 1, action_mode="njoint")
    with pytest.raises(ConfigurationError, match="unknown JointLab id"):
        BatchedEnv("jointlab/Rech-v0", 1)


def test_other_tasks_are_evaluated_env_by_env_with_the_same_results():
    vec = BatchedEnv("jointlab/Hold-v0", 2, max_episode_steps=6)
    singles = [gymnasium.make("jointlab/Hold-v0", max_episode_steps=6) for _ in range(2)]
    try:
        _reset_alike(vec, singles, 2)
        for actions in _actions(vec, 4):
            observations, rewards, _, _, _ = vec.step(actions)
            for i, env in enumerate(singles):
                expected, reward, *_ = env.step(actions[i])
                np.testing.assert_array_equal(observations[i], expected)
                assert rewards[i] == reward
    finally:
        vec.close()
        for env in singles:
            env.close()


def _assert_same_info(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], dict):
            _assert_same_info(a[key], b[key])
        elif a[key].dtype == object:  # final_obs: arrays where the mask is set
            for i in np.flatnonzero(a[f"_{key}"]):
                np.testing.assert_array_equal(a[key][i], b[key][i])
        else:
            np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.slow  # starts worker processes
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize(
    ("local", "spin"),
    [(True, None), (False, None), (False, 0.001)],
    ids=["local", "children", "children-spinning"],
)
def test_async_batched_env_equals_one_batched_env(mode, local, spin):
    options = {"max_episode_steps": 7, "autoreset_mode": mode}
    # 3 + 2 environments: this process and one child (local), or two children
    parallel = AsyncBatchedEnv(ENV_ID, 5, workers=2, local=local, spin=spin, **options)
    assert len(parallel._processes) == (1 if local else 2)
    processes = 2 if local else 3  # by default they spin only if each has a core
    default = DEFAULT_SPIN if processes <= len(os.sched_getaffinity(0)) else 0.0
    assert parallel.spin == (default if spin is None else spin)
    local = BatchedEnv(ENV_ID, 5, **options)
    try:
        a, _ = parallel.reset(seed=5)
        b, _ = local.reset(seed=5)
        np.testing.assert_array_equal(a, b)
        within = _actions(local, 3, seed=1) / np.float32(1.3)  # none clipped
        for actions in [*_actions(local, 9), *within]:
            a, ra, ta, tra, ia = parallel.step(actions)
            b, rb, tb, trb, ib = local.step(actions)
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(ra, rb)
            np.testing.assert_array_equal(tra, trb)
            np.testing.assert_array_equal(ta, tb)
            _assert_same_info(ia, ib)
        bad = np.zeros((5, 6))
        bad[3, 1] = np.inf  # in the second worker: named by its index among all five
        with pytest.raises(ActionError, match=r"environments \[3\]"):
            parallel.step(bad)
        with pytest.raises(ActionError, match=r"expected \(5, 6\)"):
            parallel.step(np.zeros((4, 6)))
    finally:
        parallel.close()
        local.close()


@pytest.mark.parametrize("spin", [-0.001, float("nan"), float("inf"), True, "0.002"])
def test_async_spin_must_be_a_finite_non_negative_number_of_seconds(spin):
    with pytest.raises(ConfigurationError, match="spin must be"):
        AsyncBatchedEnv(ENV_ID, 2, workers=1, spin=spin)


@pytest.mark.slow  # starts worker processes
def test_async_workers_do_not_spin_when_they_outnumber_the_cores():
    workers = len(os.sched_getaffinity(0)) + 1  # this process and `cores` children
    parallel = AsyncBatchedEnv(ENV_ID, workers, workers=workers, max_episode_steps=3)
    try:
        assert parallel.spin == 0.0
        parallel.reset(seed=0)
        observations, *_ = parallel.step(np.zeros((workers, 6)))
        assert observations.shape == (workers, *parallel.single_observation_space.shape)
    finally:
        parallel.close()


def test_one_local_worker_starts_no_process_and_equals_one_batched_env():
    options = {"max_episode_steps": 4, "autoreset_mode": AutoresetMode.SAME_STEP}
    alone = AsyncBatchedEnv(ENV_ID, 3, workers=1, **options)  # local=True: this process only
    local = BatchedEnv(ENV_ID, 3, **options)
    try:
        assert alone._processes == []
        np.testing.assert_array_equal(alone.reset(seed=1)[0], local.reset(seed=1)[0])
        for actions in _actions(local, 6):
            a, ra, ta, tra, ia = alone.step(actions)
            b, rb, tb, trb, ib = local.step(actions)
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(ra, rb)
            np.testing.assert_array_equal(ta | tra, tb | trb)
            _assert_same_info(ia, ib)
    finally:
        alone.close()
        alone.close()  # safe twice
        local.close()


@pytest.mark.slow  # imports Stable-Baselines3 and torch
def test_sb3_adapter_follows_sb3_conventions_and_trains():
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import VecNormalize

    from jointlab.envs.vector import SB3VecEnv

    with pytest.raises(ConfigurationError, match="SAME_STEP"):
        SB3VecEnv(BatchedEnv(ENV_ID, 1))
    vec = SB3VecEnv(
        BatchedEnv(ENV_ID, 2, max_episode_steps=4, autoreset_mode=AutoresetMode.SAME_STEP)
    )
    vec.seed(3)
    first = vec.reset()
    assert first.shape == (2, *vec.observation_space.shape)
    for _ in range(4):
        vec.step_async(np.zeros((2, 6), dtype=np.float32))
        observations, rewards, dones, infos = vec.step_wait()
    assert observations.shape == first.shape
    assert dones.all() and rewards.dtype == np.float32
    assert all(info["TimeLimit.truncated"] and "terminal_observation" in info for info in infos)
    assert all("is_success" in info for info in infos)
    assert vec.get_attr("action_mode") == ["position", "position"]
    assert vec.env_is_wrapped(gymnasium.Wrapper) == [False, False]
    model = sb3.PPO(
        "MlpPolicy", VecNormalize(vec), n_steps=8, batch_size=8, n_epochs=1, device="cpu", seed=0
    )
    model.learn(total_timesteps=16)
    vec.close()
    remote = SB3VecEnv(
        AsyncBatchedEnv(
            ENV_ID, 2, workers=2, max_episode_steps=4, autoreset_mode=AutoresetMode.SAME_STEP
        )
    )
    try:
        assert remote.render_mode is None  # answered by the vector env
        remote.reset()
        remote.step_async(np.zeros((2, 6), dtype=np.float32))
        assert remote.step_wait()[0].shape == first.shape
        with pytest.raises(ConfigurationError, match="other processes"):
            remote.get_attr("action_mode")
    finally:
        remote.close()


def test_a_sub_environments_task_observes_its_own_state_after_a_batched_step():
    vec = BatchedEnv(ENV_ID, 2)
    try:
        observations, _ = vec.reset(seed=0)
        for actions in _actions(vec, 3):
            observations, *_ = vec.step(actions)
        for i, env in enumerate(vec.envs):
            goal, tool, to_goal = env.task.observe(env.state)
            np.testing.assert_array_equal(tool, env.task.kinematics.position(env.state.position))
            np.testing.assert_array_equal(to_goal, goal - tool)
            parts = env.observation_layout.split(observations[i])
            np.testing.assert_allclose(parts["tool"], tool, atol=1e-6)
    finally:
        vec.close()


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="Linux's /proc/loadavg")
def test_a_waiter_spins_only_while_the_machine_has_a_core_for_it():
    from jointlab.envs.vector.asynchronous import _Waiter

    busy, free = _Waiter(0.001, cores=0), _Waiter(0.001, cores=10**6)  # this process runs
    try:
        assert not busy._core_free() and free._core_free()
        sender, receiver = multiprocessing.Pipe()
        sender.send_bytes(b"S")
        assert busy.receive(receiver) == b"S" and not receiver.poll(0)
    finally:
        busy.close()
        free.close()
    blocking = _Waiter(0.0, cores=1)  # spin 0: /proc/loadavg is not even opened
    assert blocking._loadavg is None and blocking._core_free()
