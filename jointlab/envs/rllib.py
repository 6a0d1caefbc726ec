"""Ray RLlib support: every JointLab environment under its Gymnasium id, seeded per runner.

After :func:`register_rllib_envs` the ids of :data:`~jointlab.envs.ENV_SPECS` work as RLlib
environment names, on a local Ray instance or a cluster::

    from ray.rllib.algorithms.ppo import PPOConfig
    from jointlab.envs.rllib import log_success, register_rllib_envs

    register_rllib_envs()
    config = (
        PPOConfig()
        .environment("jointlab/Reach-v0", env_config={"robot": "arm6", "seed": 0})
        .env_runners(num_env_runners=2)
        .callbacks(on_episode_end=log_success)
        .debugging(seed=0)
    )

``env_config`` holds the keyword arguments of the environment (``robot``, ``action_mode``,
task weights...) plus an optional ``seed``: the base seed of the run. Each environment's
first reset is seeded with :func:`derive_seed` ``(seed, worker_index, vector_index)``, so
every sub-environment of every env runner draws its own, reproducible stream; later resets
continue that stream. The seed RLlib itself passes to the first reset (``config.seed +
worker_index + sub-env index``, which overlaps between runners) is replaced by the derived
one. ``.debugging(seed=...)`` is still needed for the network initialisation and the action
sampling.

The sub-environment index is ``EnvContext.vector_index`` when RLlib sets it (old API
stack); on the new API stack every sub-environment of a runner gets the same context, and
they are numbered in creation order, which is deterministic with RLlib's default
``gym_env_vectorize_mode="sync"``. With ``"async"`` each sub-environment is built in its own
process from a copy of the context and they cannot be told apart: use ``"sync"``.

Ray is imported only inside :func:`register_rllib_envs` (``import jointlab.envs`` never
imports it). The environment creator is a module-level function, so env runners on other
nodes import it from their own installed ``jointlab``.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium
import numpy as np

from jointlab.errors import ConfigurationError

from .registration import ENV_SPECS

__all__ = [
    "SEED_KEY",
    "SeedFirstReset",
    "derive_seed",
    "env_indices",
    "log_success",
    "make_rllib_env",
    "register_rllib_envs",
    "split_env_config",
]

#: ``env_config`` key of the run's base seed (not passed to the environment).
SEED_KEY = "seed"
#: Attribute of an ``EnvContext`` counting the sub-environments built from it.
_CREATED = "_jointlab_envs_created"
_IDS = tuple(entry.id for entry in ENV_SPECS)


def derive_seed(base_seed: int, worker_index: int = 0, vector_index: int = 0) -> int:
    """The seed of one environment of a distributed run, from the run's base seed.

    Uses ``numpy.random.SeedSequence(base_seed, spawn_key=(worker_index, vector_index))``:
    distinct indices give statistically independent streams (unlike ``base + index``, where
    runner 1's second env and runner 2's first share a seed).

    Args:
        base_seed: The run's seed, a non-negative integer.
        worker_index: The env runner's index (0 is the local runner, remote ones start at 1).
        vector_index: The sub-environment's index within its runner.

    Returns:
        A seed in ``[0, 2**32)`` for ``env.reset(seed=...)``.

    Raises:
        ConfigurationError: a negative or non-integer value.
    """
    values = {"seed": base_seed, "worker_index": worker_index, "vector_index": vector_index}
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise ConfigurationError(f"{name} must be a non-negative integer, got {value!r}")
    sequence = np.random.SeedSequence(
        int(base_seed), spawn_key=(int(worker_index), int(vector_index))
    )
    return int(sequence.generate_state(1, np.uint32)[0])


def env_indices(env_config: Mapping[str, Any]) -> tuple[int, int]:
    """``(worker_index, vector_index)`` of the environment about to be built from ``env_config``.

    An RLlib ``EnvContext`` carries ``worker_index`` and ``vector_index``; a plain mapping
    (a local, non-Ray use) counts as worker 0. When ``vector_index`` is 0 the environments
    built from the same context object are numbered in creation order (see the module
    docstring), and the count is kept on the context.
    """
    worker = int(getattr(env_config, "worker_index", 0) or 0)
    vector = int(getattr(env_config, "vector_index", 0) or 0)
    if vector == 0 and hasattr(env_config, "worker_index"):
        vector = int(getattr(env_config, _CREATED, 0))
        setattr(env_config, _CREATED, vector + 1)
    return worker, vector


def split_env_config(env_config: Mapping[str, Any]) -> tuple[int | None, dict[str, Any]]:
    """Split an RLlib ``env_config`` into the base seed (or None) and the env's keywords.

    Raises:
        ConfigurationError: RLlib asked for a whole vector env (``num_envs``, the
            ``"vector_entry_point"`` vectorize mode), which this creator does not build.
    """
    kwargs = dict(env_config)
    if "num_envs" in kwargs:
        raise ConfigurationError(
            "JointLab environments are built one at a time: use gym_env_vectorize_mode='sync' "
            "(RLlib's default) or 'async', not 'vector_entry_point'"
        )
    seed = kwargs.pop(SEED_KEY, None)
    return (None if seed is None else int(seed)), kwargs


class SeedFirstReset(gymnasium.Wrapper):
    """Seeds the first ``reset`` with a fixed seed, whatever seed it is called with.

    Later resets behave as usual (an explicit seed reseeds; None continues the stream). The
    action space is seeded too, so ``action_space.sample()`` is reproducible.

    Args:
        env: The environment to wrap.
        seed: The seed of the first reset.
    """

    def __init__(self, env: gymnasium.Env, seed: int) -> None:
        super().__init__(env)
        #: The seed used at the first reset.
        self.first_seed = int(seed)
        self._pending = True
        self.action_space.seed(self.first_seed)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset; the first call uses :attr:`first_seed` instead of ``seed``."""
        if self._pending:
            self._pending = False
            seed = self.first_seed
        return self.env.reset(seed=seed, options=options)


def make_rllib_env(env_id: str, env_config: Mapping[str, Any] | None = None) -> gymnasium.Env:
    """Build ``env_id`` from an RLlib ``env_config`` (the creator registered with Ray).

    The environment is made with ``gymnasium.make`` (so the registered episode length
    applies), with every ``env_config`` key except ``seed`` as keyword arguments. With a
    ``seed`` it is wrapped in :class:`SeedFirstReset` with :func:`derive_seed` of the
    runner's and sub-environment's indices.

    Args:
        env_id: A JointLab id (``"jointlab/Reach-v0"``).
        env_config: The keywords and optional ``seed``; an RLlib ``EnvContext`` or any
            mapping (None: defaults, unseeded).

    Raises:
        ConfigurationError: unknown id, or invalid keywords (names the id and keywords).
    """
    if env_id not in _IDS:
        hint = difflib.get_close_matches(str(env_id), _IDS, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        raise ConfigurationError(
            f"unknown JointLab environment {env_id!r}; known: {list(_IDS)}{suggestion}"
        )
    config = {} if env_config is None else env_config
    seed, kwargs = split_env_config(config)
    env = gymnasium.make(env_id, **kwargs)
    if seed is None:
        return env
    worker, vector = env_indices(config)
    return SeedFirstReset(env, derive_seed(seed, worker, vector))


def register_rllib_envs(env_ids: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """Register JointLab environments with Ray's tune registry (idempotent).

    Call it in the driver before building the algorithm; works before or after
    ``ray.init`` (Ray ships the registry to the cluster on init).

    Args:
        env_ids: The ids to register; None means every id of :data:`ENV_SPECS`.

    Returns:
        The registered ids.

    Raises:
        ConfigurationError: Ray (the ``distributed`` extra) is not installed, or an
            unknown id.
    """
    try:
        from ray.tune.registry import register_env
    except ImportError as exc:
        raise ConfigurationError(
            "Ray RLlib is not installed; install the extra: pip install -e '.[distributed]'"
        ) from exc
    ids = _IDS if env_ids is None else tuple(env_ids)
    for env_id in ids:
        if env_id not in _IDS:
            make_rllib_env(env_id)  # raises with a suggestion
        register_env(env_id, _creator(env_id))
    return ids


def _creator(env_id: str) -> Callable[[Mapping[str, Any]], gymnasium.Env]:
    return functools.partial(make_rllib_env, env_id)


def log_success(*, episode: Any, metrics_logger: Any = None, **_: Any) -> None:
    """RLlib ``on_episode_end`` callback: log ``is_success`` of the episode's last step.

    Use as ``config.callbacks(on_episode_end=log_success)``; the training results then hold
    ``result["env_runners"]["episode_success_rate"]``, the mean over the last 100 episodes
    of each runner. Episodes whose last info has no ``is_success`` are not counted.
    """
    if metrics_logger is None:
        return
    info = episode.get_infos(-1)
    if isinstance(info, Mapping) and "is_success" in info:
        metrics_logger.log_value(
            "episode_success_rate", float(bool(info["is_success"])), reduce="mean", window=100
        )
