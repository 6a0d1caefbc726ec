"""Fixtures of the environment tests."""

import gymnasium
import pytest

import jointlab.envs  # noqa: F401  (registers the ids)


@pytest.fixture
def make():
    """``make(id, **kwargs)``: build an env with gymnasium.make and close it after the test."""
    envs = []

    def _make(env_id, **kwargs):
        env = gymnasium.make(env_id, **kwargs)
        envs.append(env)
        return env

    yield _make
    for env in envs:
        env.close()


ENV_ID = "jointlab/Reach-v0"
ENV_KWARGS = {"robot": "arm6", "action_mode": "position"}


@pytest.fixture(scope="session")
def sb3_model(tmp_path_factory):
    """A PPO model after 128 steps, saved with its VecNormalize statistics beside it."""
    sb3 = pytest.importorskip("stable_baselines3")
    torch = pytest.importorskip("torch")
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("sb3")
    vec = VecNormalize(make_vec_env(ENV_ID, n_envs=1, seed=0, env_kwargs=ENV_KWARGS))
    model = sb3.PPO(
        "MlpPolicy",
        vec,
        n_steps=64,
        batch_size=64,
        n_epochs=1,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": [16, 16]},
    )
    model.learn(total_timesteps=128)
    model.save(folder / "model")
    vec.save(str(folder / "vecnormalize.pkl"))
    vec.close()
    return folder / "model.zip"
