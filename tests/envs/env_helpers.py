"""Helpers of the environment tests (ids, modes, seeded rollouts)."""

import numpy as np

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs import ACTION_MODES, ENV_SPECS

IDS = [entry.id for entry in ENV_SPECS]
FLAT_MODES = [m for m in ACTION_MODES if m != "njoint"]


def rollout(env, seed, steps, action_seed=0):
    """Observations, rewards and positions of ``steps`` seeded random steps."""
    env.action_space.seed(action_seed)
    observation, info = env.reset(seed=seed)
    observations, rewards, positions = [observation], [], [info["state"].position]
    for _ in range(steps):
        observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
        observations.append(observation)
        rewards.append(reward)
        positions.append(info["state"].position)
        if terminated or truncated:
            break
    return np.array(observations), np.array(rewards), np.array(positions)
