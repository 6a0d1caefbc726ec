"""``AsyncBatchedEnv``: batched environments in several processes, observations shared.

Each worker process holds one :class:`~jointlab.envs.vector.BatchedEnv` with its share of the
sub-environments (sub-environment ``i`` lives in worker ``i * workers // num_envs``). A step
sends each worker its rows of the actions through a pipe; the worker steps its batch and
writes the observations straight into one shared-memory array, so only rewards, flags and
info cross the pipe. Seeding, autoreset and observations are those of one ``BatchedEnv`` of
``num_envs`` (sub-environment ``i`` is seeded ``s + i``).
"""

from __future__ import annotations

import multiprocessing
from enum import Enum
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from jointlab.errors import ConfigurationError, JointLabError

from .batched import BatchedEnv, sub_seeds

__all__ = ["AsyncBatchedEnv"]


class _Command(Enum):
    RESET = "reset"
    STEP = "step"
    CLOSE = "close"


def _worker(pipe: Any, env_id: str, count: int, options: dict[str, Any], buffer: Any,
            rows: slice, shape: tuple[int, ...]) -> None:  # fmt: skip
    """One worker: a BatchedEnv of ``count`` sub-environments; observations into ``buffer``."""
    observations = np.frombuffer(buffer, dtype=np.float32).reshape(shape)[rows]
    try:
        env = BatchedEnv(env_id, count, **options)
    except BaseException as exc:  # reported to the parent, which raises it
        pipe.send(("error", exc))
        return
    pipe.send(("ready", None))
    try:
        while True:
            command, payload = pipe.recv()
            if command is _Command.CLOSE:
                break
            try:
                if command is _Command.RESET:
                    observations[:], info = env.reset(**payload)
                    pipe.send(("ok", info))
                else:
                    observations[:], *result = env.step(payload)
                    pipe.send(("ok", result))
            except Exception as exc:  # sent to the parent, which raises it
                pipe.send(("error", exc))
    finally:
        env.close()
        pipe.close()


def _merge(parts: list[dict[str, Any]], sizes: list[int]) -> dict[str, Any]:
    """Gymnasium vector infos of consecutive batches, merged (absent entries masked off)."""
    total, starts = sum(sizes), np.cumsum([0, *sizes])
    merged: dict[str, Any] = {}
    for k, part in enumerate(parts):
        for key, value in part.items():
            if isinstance(value, dict):
                continue
            if key not in merged:
                dtype = value.dtype if isinstance(value, np.ndarray) else object
                merged[key] = np.zeros(total, dtype=dtype)
            merged[key][starts[k]:starts[k + 1]] = value
    nested = {key for part in parts for key, value in part.items() if isinstance(value, dict)}
    for key in nested:
        merged[key] = _merge([part.get(key, {}) for part in parts], sizes)
    return merged


class AsyncBatchedEnv(VectorEnv):
    """``num_envs`` sub-environments in ``workers`` processes of batched environments.

    Args:
        env_id: A JointLab id (``"jointlab/Reach-v0"``).
        num_envs: Number of sub-environments in all.
        workers: Number of worker processes (at most ``num_envs``).
        context: ``multiprocessing`` start method (default: the platform's).
        **options: Keywords of :class:`BatchedEnv` (``autoreset_mode``, ``max_episode_steps``)
            and of every environment (``robot``, ``action_mode``...).
    """

    def __init__(self, env_id: str = "jointlab/Reach-v0", num_envs: int = 16, workers: int = 2,
                 *, context: str | None = None, **options: Any) -> None:  # fmt: skip
        if not 1 <= int(workers) <= int(num_envs):
            raise ConfigurationError(f"workers must be in [1, num_envs={num_envs}], got {workers}")
        self.num_envs, self.env_id = int(num_envs), env_id
        self.autoreset_mode = AutoresetMode(options.get("autoreset_mode", AutoresetMode.NEXT_STEP))
        self._sizes = [len(part) for part in np.array_split(np.arange(self.num_envs), workers)]
        probe = BatchedEnv(env_id, 1, **options)  # spaces, and options checked here first
        self.single_observation_space = probe.single_observation_space
        self.single_action_space = probe.single_action_space
        self.metadata = probe.metadata
        self.render_mode = None
        probe.close()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        shape = (self.num_envs, *self.single_observation_space.shape)
        ctx = multiprocessing.get_context(context)
        self._buffer = ctx.RawArray("f", int(np.prod(shape)))
        self._observations = np.frombuffer(self._buffer, dtype=np.float32).reshape(shape)
        self._pipes, self._processes = [], []
        start = 0
        for size in self._sizes:
            parent, child = ctx.Pipe()
            process = ctx.Process(target=_worker, daemon=True, args=(
                child, env_id, size, options, self._buffer, slice(start, start + size), shape))
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)
            start += size
        self._gather()

    def _gather(self) -> list[Any]:
        results, error = [], None
        for pipe in self._pipes:
            status, payload = pipe.recv()
            if status == "error" and error is None:
                error = payload
            results.append(payload)
        if error is not None:
            self.close()
            raise error if isinstance(error, JointLabError) else JointLabError(
                f"a worker of AsyncBatchedEnv failed: {error!r}") from error  # fmt: skip
        return results

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-environment; sub-environment ``i`` gets seed ``seed + i``."""
        seeds = sub_seeds(seed, self.num_envs)
        start = 0
        for pipe, size in zip(self._pipes, self._sizes, strict=True):
            pipe.send((_Command.RESET, {"seed": seeds[start:start + size], "options": options}))
            start += size
        infos = self._gather()
        return self._observations.copy(), _merge(infos, self._sizes)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                          dict[str, Any]]:  # fmt: skip
        """Step every worker's batch with its rows of ``actions``."""
        array = np.asarray(actions)
        start = 0
        for pipe, size in zip(self._pipes, self._sizes, strict=True):
            pipe.send((_Command.STEP, array[start:start + size]))
            start += size
        results = self._gather()
        rewards, terminated, truncated = (np.concatenate([r[k] for r in results])
                                          for k in range(3))  # fmt: skip
        info = _merge([r[3] for r in results], self._sizes)
        return self._observations.copy(), rewards, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the workers (they close their environments)."""
        for pipe in getattr(self, "_pipes", []):
            try:
                pipe.send((_Command.CLOSE, None))
            except (BrokenPipeError, OSError):
                pass
        for process in getattr(self, "_processes", []):
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
        self._pipes, self._processes = [], []
