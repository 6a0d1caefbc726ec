"""Reach on the two servo arms: it trains like arm6's, and the policy runs on the emulated bus."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs.evaluation import evaluate_policy
from jointlab.envs.policies import SB3Policy
from jointlab.envs.training import make_ppo, make_training_env, resolve_task


@pytest.mark.parametrize("robot", ["so101", "koch"])
def test_reach_targets_are_reachable_and_above_the_table(robot) -> None:
    env = gymnasium.make("jointlab/Reach-v0", robot=robot, action_mode="position")
    observation, info = env.reset(seed=3)
    assert env.observation_space.contains(observation)
    goal = info["goal"] if "goal" in info else observation[-9:-6]
    assert goal[2] >= 0.05 and np.linalg.norm(goal) < 0.6
    for _ in range(5):
        observation, reward, *_ = env.step(env.action_space.sample())
        assert np.isfinite(reward)
    env.close()


@pytest.mark.slow
@pytest.mark.parametrize("robot", ["so101", "koch"])
def test_a_reach_policy_trains_and_runs_alike_on_sim_and_on_the_emulated_bus(robot) -> None:
    """so101 on the emulated Feetech bus, koch on the emulated Dynamixel bus (lockstep)."""
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    env_id, kwargs = resolve_task(f"reach-{robot}")
    vec = make_training_env(env_id, kwargs, envs=2, seed=0)
    model = make_ppo(vec, seed=0)
    model.learn(total_timesteps=512)
    vec.training = False
    policy = SB3Policy(model, vec)
    results = [
        evaluate_policy(policy, url, env_id=env_id, env_kwargs=kwargs, episodes=1, seed=7)
        for url in (f"sim://{robot}", f"emulated://{robot}?lockstep=1")
    ]
    vec.close()
    sim, bus = results
    assert sim.lengths[0] == bus.lengths[0] == 50
    # The same policy from the same start: the arm ends up in the same place on both.
    assert bus.mean_return == pytest.approx(sim.mean_return, rel=0.05, abs=0.5)
