"""Trained policies behind one interface: Stable-Baselines3 models and RLlib checkpoints.

:func:`load_policy` opens an SB3 ``.zip`` (with ``vecnormalize.pkl`` beside it when present)
or an RLlib checkpoint folder; :mod:`jointlab.envs.evaluation` runs them on any backend.
Checkpoints are pickles: load only those you trust.
"""

from __future__ import annotations

import abc
import json
import pickle
import zipfile
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from jointlab.errors import ConfigurationError
from jointlab.extras import require

__all__ = ["Policy", "RLlibPolicy", "SB3Policy", "load_policy"]

_SB3_ALGORITHMS = {"sac": "SAC", "td3": "TD3", "dqn": "DQN"}


class Policy(abc.ABC):
    """A trained policy as the evaluation loop sees it.

    The loop calls ``begin(observation, env)`` after each reset, then ``act(observation)``
    and ``record(...)`` around every ``env.step``.
    """

    #: Id of the training environment, when the checkpoint records it.
    env_id: str | None = None
    #: Keywords of the training environment (RLlib's ``env_config``), when recorded.
    env_config: dict[str, Any] | None = None
    #: Observation shape the policy expects (checked against the environment), if known.
    observation_shape: tuple[int, ...] | None = None

    def begin(self, observation: np.ndarray, env: gymnasium.Env) -> None:  # noqa: B027
        """Start an episode whose first observation is ``observation``."""

    @abc.abstractmethod
    def act(self, observation: np.ndarray) -> np.ndarray:
        """The action for ``observation`` (the environment's action space)."""

    def record(  # noqa: B027 - optional hook
        self, observation: np.ndarray, reward: float, terminated: bool, truncated: bool
    ) -> None:
        """The outcome of the last action (for policies that keep an episode history)."""


class SB3Policy(Policy):
    """A Stable-Baselines3 model, with the observation normalisation it was trained with.

    Args:
        model: A loaded SB3 algorithm (``PPO.load(...)``).
        normalizer: A ``VecNormalize`` (its statistics only) or None.
        deterministic: Use the distribution's mode rather than a sample.
    """

    def __init__(self, model: Any, normalizer: Any = None, *, deterministic: bool = True) -> None:
        self.model = model
        self.normalizer = normalizer
        self.deterministic = deterministic
        self.observation_shape = tuple(model.observation_space.shape)

    def act(self, observation: np.ndarray) -> np.ndarray:
        """``model.predict`` on the (normalised) observation."""
        if self.normalizer is not None:
            observation = self.normalizer.normalize_obs(observation)
        action, _ = self.model.predict(observation, deterministic=self.deterministic)
        return np.asarray(action)


class RLlibPolicy(Policy):
    """An RLlib (new API stack) RLModule with its env-to-module and module-to-env connectors.

    Running observation statistics (a ``MeanStdFilter`` connector) are frozen at their
    checkpoint values, so evaluating twice gives the same result.

    Args:
        module: The RLModule.
        env_to_module: The checkpoint's ``EnvToModulePipeline``.
        module_to_env: The checkpoint's ``ModuleToEnvPipeline``.
        explore: Sample actions (True) or take the distribution's mode (False).
    """

    def __init__(
        self, module: Any, env_to_module: Any, module_to_env: Any, *, explore: bool = False
    ) -> None:
        from ray.rllib.core.columns import Columns

        self.module = module
        self.env_to_module = env_to_module
        self.module_to_env = module_to_env
        self.explore = explore
        self._columns = Columns
        for piece in getattr(env_to_module, "connectors", []):
            if hasattr(piece, "_update_stats"):  # MeanStdFilter: no public switch after init
                piece._update_stats = False
        self._episode: Any = None
        self._action: Any = None
        space = getattr(module, "observation_space", None)
        self.observation_shape = None if space is None else tuple(space.shape)

    def begin(self, observation: np.ndarray, env: gymnasium.Env) -> None:
        """Open a new RLlib episode (the connectors read observations from it)."""
        from ray.rllib.env.single_agent_episode import SingleAgentEpisode

        self._episode = SingleAgentEpisode(
            observations=[observation],
            observation_space=env.observation_space,
            action_space=env.action_space,
        )

    def act(self, observation: np.ndarray) -> np.ndarray:
        """Run env-to-module, ``forward_inference``, module-to-env on the episode so far."""
        if self._episode is None:
            raise ConfigurationError("RLlibPolicy.act() before begin(): no episode is open")
        columns, shared = self._columns, {}
        batch = self.env_to_module(
            episodes=[self._episode],
            rl_module=self.module,
            explore=self.explore,
            shared_data=shared,
        )
        output = (
            self.module.forward_exploration if self.explore else self.module.forward_inference
        )(batch)
        to_env = self.module_to_env(
            batch=output,
            episodes=[self._episode],
            rl_module=self.module,
            explore=self.explore,
            shared_data=shared,
        )
        self._action = to_env[columns.ACTIONS][0]
        return np.asarray(to_env.get(columns.ACTIONS_FOR_ENV, to_env[columns.ACTIONS])[0])

    def record(
        self, observation: np.ndarray, reward: float, terminated: bool, truncated: bool
    ) -> None:
        """Append the step to the episode."""
        self._episode.add_env_step(
            observation, self._action, float(reward), terminated=terminated, truncated=truncated
        )


# ---------------------------------------------------------------------------- loading
def load_policy(
    path: str | Path,
    *,
    algorithm: str | type | None = None,
    vecnormalize: str | Path | None = "auto",
    module_id: str = "default_policy",
    deterministic: bool = True,
) -> Policy:
    """Load an RLlib algorithm checkpoint (a folder) or an SB3 model (a ``.zip``).

    Args:
        path: The folder ``Algorithm.save()`` wrote, or the file ``model.save()`` wrote
            (with or without its ``.zip``); ``~`` is expanded.
        algorithm: SB3 only: the algorithm class or its name (``"PPO"``); None infers it
            from the saved policy class.
        vecnormalize: SB3 only: a pickled ``VecNormalize`` whose observation statistics the
            model was trained with; ``"auto"`` takes ``vecnormalize.pkl`` beside the model
            when present; None uses none.
        module_id: RLlib only: the module to load.
        deterministic: Take the distribution's mode (True) or sample actions.

    Raises:
        ConfigurationError: the path is neither, or its algorithm cannot be told.
    """
    path = Path(path).expanduser()
    if not path.exists() and not path.with_name(path.name + ".zip").is_file():
        raise ConfigurationError(f"{path}: no such policy file or checkpoint folder")
    if path.is_dir():
        if not (path / "rllib_checkpoint.json").exists():
            raise ConfigurationError(
                f"{path} is a folder but not an RLlib algorithm checkpoint "
                "(no rllib_checkpoint.json)"
            )
        return _load_rllib(path, module_id, deterministic)
    if path.suffix != ".zip" and path.with_name(path.name + ".zip").is_file():
        path = path.with_name(path.name + ".zip")
    if path.is_file() and zipfile.is_zipfile(path):
        return _load_sb3(path, algorithm, vecnormalize, deterministic)
    raise ConfigurationError(f"{path}: expected an RLlib checkpoint folder or an SB3 model .zip")


def _load_sb3(
    path: Path, algorithm: str | type | None, vecnormalize: str | Path | None, deterministic: bool
) -> SB3Policy:
    (stable_baselines3,) = require("rl", "an SB3 policy", "stable_baselines3")

    if algorithm is None:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
        module = str(data.get("policy_class", {}).get("__module__", ""))
        family = module.split(".")[1] if module.count(".") >= 2 else ""
        algorithm = _SB3_ALGORITHMS.get(family)
        if family == "common":
            algorithm = "PPO" if "clip_range" in data else "A2C"
        if algorithm is None:
            raise ConfigurationError(
                f"{path}: cannot tell the SB3 algorithm from policy class "
                f"module {module!r}; pass algorithm='PPO' (or the class)"
            )
    cls = getattr(stable_baselines3, algorithm, None) if isinstance(algorithm, str) else algorithm
    if cls is None:
        raise ConfigurationError(f"unknown SB3 algorithm {algorithm!r}")
    model = cls.load(path, device="cpu")
    if vecnormalize == "auto":
        candidate = path.with_name("vecnormalize.pkl")
        vecnormalize = candidate if candidate.exists() else None
    normalizer = None
    if vecnormalize is not None:
        with open(vecnormalize, "rb") as handle:
            normalizer = pickle.load(handle)
        normalizer.training = False
    return SB3Policy(model, normalizer, deterministic=deterministic)


def _load_rllib(path: Path, module_id: str, deterministic: bool) -> RLlibPolicy:
    from ray.rllib.connectors.env_to_module import EnvToModulePipeline
    from ray.rllib.connectors.module_to_env import ModuleToEnvPipeline
    from ray.rllib.core import (
        COMPONENT_ENV_RUNNER,
        COMPONENT_ENV_TO_MODULE_CONNECTOR,
        COMPONENT_LEARNER,
        COMPONENT_LEARNER_GROUP,
        COMPONENT_MODULE_TO_ENV_CONNECTOR,
        COMPONENT_RL_MODULE,
    )
    from ray.rllib.core.rl_module.rl_module import RLModule

    module_path = path / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE
    if not (module_path / module_id).is_dir():
        found = sorted(p.name for p in module_path.glob("*") if p.is_dir())
        raise ConfigurationError(
            f"{path}: no RLModule {module_id!r} in the checkpoint; found {found}"
        )
    runner = path / COMPONENT_ENV_RUNNER
    policy = RLlibPolicy(
        RLModule.from_checkpoint(module_path / module_id),
        EnvToModulePipeline.from_checkpoint(runner / COMPONENT_ENV_TO_MODULE_CONNECTOR),
        ModuleToEnvPipeline.from_checkpoint(runner / COMPONENT_MODULE_TO_ENV_CONNECTOR),
        explore=not deterministic,
    )
    config = _rllib_config(path)
    if isinstance(config.get("env"), str):
        policy.env_id = config["env"]
        policy.env_config = dict(config.get("env_config") or {})
    return policy


def _rllib_config(path: Path) -> dict[str, Any]:
    """The algorithm config recorded in an RLlib checkpoint (empty if unreadable)."""
    try:
        with open(path / "class_and_ctor_args.pkl", "rb") as handle:
            record = pickle.load(handle)
        config = record["ctor_args_and_kwargs"][0][0]
    except (OSError, KeyError, IndexError, TypeError, pickle.UnpicklingError):
        return {}
    return config if isinstance(config, dict) else getattr(config, "to_dict", dict)()
