"""The default PPO training set-up is the one docs/environments.md describes."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs.training import (
    DEFAULT_VECTOR,
    N_EPOCHS,
    ROLLOUT_STEPS,
    make_ppo,
    make_training_env,
    resolve_task,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "environments.md"


def _settings_paragraph() -> str:
    """The "Settings" paragraph of the reinforcement learning section."""
    text = DOCS.read_text()
    start = text.index("Settings (`jointlab.envs.training`)")
    return " ".join(text[start : text.index("\n\n", start)].split())


@pytest.mark.slow
@pytest.mark.parametrize("envs", [8, 2])
def test_the_default_training_env_and_ppo_are_the_documented_ones(envs) -> None:
    pytest.importorskip("stable_baselines3")
    torch = pytest.importorskip("torch")
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from jointlab.envs.vector import AsyncBatchedEnv, SB3VecEnv

    torch.set_num_threads(1)
    env_id, kwargs = resolve_task("reach")
    vec = make_training_env(env_id, kwargs, envs=envs, seed=0)
    try:
        assert DEFAULT_VECTOR == "async"
        assert isinstance(vec, VecNormalize) and vec.norm_obs and vec.norm_reward
        assert isinstance(vec.venv, VecMonitor) and isinstance(vec.venv.venv, SB3VecEnv)
        assert isinstance(vec.venv.venv.vector_env, AsyncBatchedEnv)
        assert vec.num_envs == envs
        model = make_ppo(vec, seed=0)
        assert model.n_steps * model.n_envs == ROLLOUT_STEPS == 2048
        assert (model.batch_size, model.n_epochs) == (256, N_EPOCHS) == (256, 5)
        assert model.gamma == model.gae_lambda == 0.9
        assert model.learning_rate(1.0) == pytest.approx(1e-3)
        assert model.learning_rate(0.0) == 0.0
        before = set(Path(tempfile.gettempdir()).glob("SB3-*"))
        model.learn(total_timesteps=ROLLOUT_STEPS)  # one rollout and update
        assert model.num_timesteps >= ROLLOUT_STEPS
        assert set(Path(tempfile.gettempdir()).glob("SB3-*")) == before  # no log folder
    finally:
        vec.close()


def test_the_docs_state_the_default_settings() -> None:
    settings = _settings_paragraph()
    assert "`AsyncBatchedEnv`" in settings
    assert f"rollouts of {ROLLOUT_STEPS} steps" in settings
    assert re.search(rf"\b{N_EPOCHS} epochs\b", settings)
    assert "batch 256" in settings
