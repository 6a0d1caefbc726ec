"""Wrappers: domain randomisation per episode, observation noise, action latency."""

import gymnasium
import numpy as np
import pytest

from jointlab.envs import ActionLatency, DomainRandomization, ObservationNoise
from jointlab.errors import ConfigurationError
from jointlab.sim import Randomization

RANGES = Randomization(mass_scale=(0.5, 1.5), damping_scale=(0.5, 2.0), kp_scale=(0.8, 1.2))


def test_domain_randomization_draws_per_episode_reproducibly(make):
    env = DomainRandomization(make("jointlab/Reach-v0", randomization=RANGES))
    _, info = env.reset(seed=1)
    first = info["randomization"].mass_scale
    _, info = env.reset()
    second = info["randomization"].mass_scale
    _, info = env.reset(seed=1)
    np.testing.assert_array_equal(info["randomization"].mass_scale, first)
    assert not np.allclose(first, second)
    assert np.all((first >= 0.5) & (first <= 1.5))


def test_domain_randomization_changes_the_physics(make):
    def final_positions(env):
        env.reset(seed=5)
        torque = np.full(6, 0.3, np.float32)
        for _ in range(10):
            _, _, _, _, info = env.step(torque)
        return info["state"].position

    nominal = final_positions(make("jointlab/Reach-v0", action_mode="torque"))
    randomized = final_positions(
        DomainRandomization(make("jointlab/Reach-v0", action_mode="torque", randomization=RANGES))
    )
    assert not np.allclose(nominal, randomized)


def test_domain_randomization_needs_ranges(make):
    with pytest.raises(ConfigurationError, match="give the ranges"):
        DomainRandomization(make("jointlab/Reach-v0"))


def test_observation_noise_is_seeded_and_only_on_the_chosen_parts(make):
    env = ObservationNoise(make("jointlab/Reach-v0"), std={"position": 0.01, "goal": 0.0})
    clean = make("jointlab/Reach-v0")
    a, _ = env.reset(seed=4)
    b, _ = clean.reset(seed=4)
    layout = env.unwrapped.observation_layout
    noise = a - b
    assert np.all(noise[layout.slices["position"]] != 0)
    assert np.std(noise[layout.slices["position"]]) < 0.05
    np.testing.assert_array_equal(noise[layout.slices["velocity"]], 0)
    np.testing.assert_array_equal(noise[layout.slices["goal"]], 0)
    again, _ = env.reset(seed=4)
    np.testing.assert_array_equal(a, again)
    assert env.observation_space.contains(a)


def test_observation_noise_names_unknown_parts(make):
    with pytest.raises(ConfigurationError, match=r"unknown observation part.*'positon'"):
        ObservationNoise(make("jointlab/Reach-v0"), std={"positon": 0.1})


def test_action_latency_applies_actions_late(make):
    env = ActionLatency(make("jointlab/Reach-v0"), steps=2)
    env.reset(seed=0)
    base = env.unwrapped
    hold = base.actions.hold(base.state)
    actions = [np.full(6, v, np.float32) for v in (0.1, 0.2, 0.3, 0.4)]
    applied = [env.step(a)[4]["applied_action"] for a in actions]
    np.testing.assert_array_equal(applied[0], hold)
    np.testing.assert_array_equal(applied[1], hold)
    np.testing.assert_array_equal(applied[2], actions[0])
    np.testing.assert_array_equal(applied[3], actions[1])


def test_action_latency_zero_is_transparent(make):
    delayed = ActionLatency(make("jointlab/Reach-v0"), steps=0)
    plain = make("jointlab/Reach-v0")
    delayed.reset(seed=0)
    plain.reset(seed=0)
    action = np.full(6, 0.2, np.float32)
    np.testing.assert_array_equal(delayed.step(action)[0], plain.step(action)[0])
    with pytest.raises(ConfigurationError, match="integer >= 0"):
        ActionLatency(plain, steps=-1)


def test_wrapped_observations_stay_in_the_space(make):
    env = ActionLatency(ObservationNoise(make("jointlab/Reach-v0"), std=0.5), steps=1)
    observation, _ = env.reset(seed=0)
    assert env.observation_space.contains(observation)
    for _ in range(10):
        observation, *_ = env.step(env.action_space.sample())
        assert env.observation_space.contains(observation)
    assert isinstance(env, gymnasium.Wrapper)
