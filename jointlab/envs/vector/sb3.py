"""``SB3VecEnv``: a batched JointLab vector environment as a Stable-Baselines3 ``VecEnv``.

Stable-Baselines3 resets an environment in the step that ended its episode and hands the
last observation over in ``infos[i]["terminal_observation"]``; the adapter therefore runs
the vector environment with ``autoreset_mode=SAME_STEP`` and translates its ``final_obs``.
``TimeLimit.truncated`` is set as SB3's own wrappers set it (truncated and not terminated),
and ``is_success`` is passed on for SB3's success-rate logging. ``seed(s)`` then ``reset()``
seeds sub-environment ``i`` with ``s + i``, like SB3's own vector environments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from jointlab.errors import ConfigurationError

__all__ = ["SB3VecEnv"]


class SB3VecEnv(VecEnv):
    """Stable-Baselines3 view of a :class:`~jointlab.envs.vector.BatchedEnv` (or async one).

    Args:
        vector_env: A JointLab vector environment built with ``autoreset_mode=SAME_STEP``.
    """

    def __init__(self, vector_env: Any) -> None:
        if vector_env.autoreset_mode is not AutoresetMode.SAME_STEP:
            raise ConfigurationError(
                "SB3VecEnv needs a vector env built with autoreset_mode=AutoresetMode.SAME_STEP"
                " (Stable-Baselines3 resets in the step that ends an episode)"
            )
        self.vector_env = vector_env
        super().__init__(
            vector_env.num_envs, vector_env.single_observation_space, vector_env.single_action_space
        )
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        """Reset every sub-environment (with the seeds given to ``seed()``, once)."""
        seeds = self._seeds if any(s is not None for s in self._seeds) else None
        observations, _ = self.vector_env.reset(seed=seeds)
        self._reset_seeds()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the actions of the next ``step_wait``."""
        self._actions = actions

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step; ``(observations, rewards, dones, infos)`` in SB3's conventions."""
        observations, rewards, terminated, truncated, info = self.vector_env.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        success = info.get("is_success")
        if success is not None:
            for i, value in enumerate(success.tolist()):
                infos[i]["is_success"] = value
        if dones.any():
            final = info["final_obs"]
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = final[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return observations, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        """Close the vector environment."""
        self.vector_env.close()

    # ------------------------------------------------------------------ attributes
    def _targets(self, indices: VecEnvIndices) -> Sequence[Any]:
        envs = getattr(self.vector_env, "envs", None)
        if envs is None:
            raise ConfigurationError("the sub-environments live in other processes")
        return [envs[i] for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """An attribute of each sub-environment.

        Sub-environments in other processes (``AsyncBatchedEnv``) answer only for what the
        vector environment holds for all of them (``render_mode``, ``metadata``...).
        """
        if getattr(self.vector_env, "envs", None) is None and hasattr(self.vector_env, attr_name):
            return [getattr(self.vector_env, attr_name) for _ in self._get_indices(indices)]
        return [getattr(env, attr_name) for env in self._targets(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of each sub-environment (in-process vector environments only)."""
        for env in self._targets(indices):
            setattr(env, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call a method of each sub-environment (in-process vector environments only)."""
        return [
            getattr(env, method_name)(*method_args, **method_kwargs)
            for env in self._targets(indices)
        ]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        """Sub-environments are never wrapped (time limits are the vector env's own)."""
        return [False for _ in self._get_indices(indices)]
