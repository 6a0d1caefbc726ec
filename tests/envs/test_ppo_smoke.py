"""A short PPO run on jointlab/Reach-v0: the env trains end to end (the full run is an example)."""

import gymnasium
import numpy as np
import pytest

import jointlab.envs  # noqa: F401  (registers the ids)


@pytest.mark.slow
def test_ppo_smoke_run_trains_and_predicts():
    sb3 = pytest.importorskip("stable_baselines3")
    torch = pytest.importorskip("torch")
    from stable_baselines3.common.env_util import make_vec_env

    torch.set_num_threads(1)
    vec = make_vec_env(
        "jointlab/Reach-v0",
        n_envs=2,
        seed=0,
        env_kwargs={"robot": "arm6", "action_mode": "position"},
    )
    model = sb3.PPO(
        "MlpPolicy",
        vec,
        n_steps=512,
        batch_size=256,
        n_epochs=2,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [32, 32]},
    )
    model.learn(total_timesteps=3072)
    assert model.num_timesteps >= 3072
    env = gymnasium.make("jointlab/Reach-v0")
    observation, _ = env.reset(seed=0)
    for _ in range(5):
        action, _ = model.predict(observation, deterministic=True)
        assert env.action_space.contains(np.asarray(action, dtype=np.float32))
        observation, reward, *_ = env.step(action)
        assert np.isfinite(reward)
    env.close()
    vec.close()
