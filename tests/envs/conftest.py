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
