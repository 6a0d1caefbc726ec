"""Batched vector environments: N JointLab environments per process, and adapters.

* :class:`BatchedEnv`: a Gymnasium 1.x ``VectorEnv`` stepping N environments in one process
  with the action mapping, torque law, observation and reward in numpy across them;
* :class:`AsyncBatchedEnv`: several ``BatchedEnv`` processes (one per core, this process
  one of them by default), observations in shared memory;
* :class:`SB3VecEnv`: either one as a Stable-Baselines3 ``VecEnv`` (needs the ``rl`` extra;
  imported on first use).
"""

from typing import Any

from .asynchronous import AsyncBatchedEnv
from .batched import BatchedEnv

__all__ = ["AsyncBatchedEnv", "BatchedEnv", "SB3VecEnv"]


def __getattr__(name: str) -> Any:
    if name == "SB3VecEnv":  # Stable-Baselines3 (and torch) only when asked for
        from .sb3 import SB3VecEnv

        return SB3VecEnv
    raise AttributeError(f"module 'jointlab.envs.vector' has no attribute {name!r}")
