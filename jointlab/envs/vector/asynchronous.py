"""``AsyncBatchedEnv``: batched environments in several processes, results in shared memory.

The sub-environments are split into ``workers`` consecutive shares (``numpy.array_split``),
each stepped by one :class:`~jointlab.envs.vector.BatchedEnv`. With ``local=True`` (the
default) this process steps the first share itself and starts ``workers - 1`` child
processes for the others, so two workers are this process and one child; with
``local=False`` every share has its own child and this process only waits. Seeding,
autoreset and results are those of one ``BatchedEnv`` of ``num_envs`` either way
(sub-environment ``i`` is seeded ``s + i``).

One step costs each child one wake-up and as little else as possible, because the workers
wait for the slowest of them and for this process (lock-step):

* this process checks the actions, writes them into shared memory and sends each child a
  one-byte command through its pipe, steps its own share (``local=True``; its results go
  into the same shared arrays), then blocks in ``recv`` (no polling);
* a worker steps its rows and writes observations, rewards and flags straight into shared
  memory; its ``info`` (Gymnasium's dict of per-environment arrays) crosses the pipe as the
  raw bytes of one structured array (:class:`_InfoCodec`; the layout is sent once, again
  only when it changes, and an ``info`` that is not flat arrays is pickled);
* this process joins the workers' records into one and returns fields of it (its own
  share's ``info`` goes through the same record, so both modes return the same ``info``).

Stepping a share locally is what makes two processes worth two cores: this process would
otherwise spend its core waiting, and on a two-core machine the two children and this
process's bookkeeping compete for the same two cores.

Waiting spins before it sleeps (``spin``, 2 ms by default when there are no more processes
than cores this process may run on): a worker waiting for its next command, and this
process waiting for the workers' answers, first poll the pipe without blocking, and block
in ``recv`` only when nothing came within ``spin`` seconds. A process that slept wakes late
and on cold caches (on the 2-core machine of docs/benchmarks.md a sleeping worker spent
about a fifth more CPU per step than the same env stepped without pauses); a short spin
keeps the core and its caches while the other side is busy for a fraction of a millisecond,
and gives the core back when it is busy for longer (a PPO update, a slow policy). A waiter
spins only while the machine has a core for it (:class:`_Waiter`): on a machine busy with
other work it blocks at once, as with ``spin=0``.
"""

from __future__ import annotations

import math
import multiprocessing
import numbers
import os
import pickle
import time
from enum import Enum
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from jointlab.errors import ConfigurationError, JointLabError

from .batched import BatchedEnv, check_actions, sub_seeds

__all__ = ["DEFAULT_SPIN", "AsyncBatchedEnv"]

#: Seconds a waiting process polls its pipe before it blocks, when it has a core of its own.
DEFAULT_SPIN = 0.002


def usable_cores() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class _Waiter:
    """Receives a pipe's next message, spinning for up to ``spin`` seconds first.

    It spins only while the machine has a core for it: when the tasks ready to run (Linux's
    ``/proc/loadavg``, one ``pread`` of about 2 µs per wait) are at most ``cores``. On a
    machine busy with other work a spinning process would take the core that the process it
    waits for needs (with one busy loop beside two workers on two cores, the async env ran
    25 % slower spinning than blocking), so there it blocks at once. Without
    ``/proc/loadavg`` it spins as asked.
    """

    def __init__(self, spin: float, cores: int) -> None:
        self.spin, self.cores = spin, cores
        self._loadavg: int | None = None
        if spin > 0.0:
            try:
                self._loadavg = os.open("/proc/loadavg", os.O_RDONLY)
            except OSError:
                pass

    def receive(self, pipe: Any) -> bytes:
        """The next message of ``pipe`` (polled without blocking first, if a core is free)."""
        if self.spin > 0.0 and not pipe.poll(0) and self._core_free():
            deadline = time.perf_counter() + self.spin
            while not pipe.poll(0) and time.perf_counter() < deadline:
                pass
        return pipe.recv_bytes()

    def _core_free(self) -> bool:
        if self._loadavg is None:
            return True
        try:  # "0.52 0.58 0.59 2/467 12345": the tasks ready to run, this one included
            return int(os.pread(self._loadavg, 64, 0).split()[3].split(b"/")[0]) <= self.cores
        except (OSError, ValueError, IndexError):
            self.close()  # an unexpected format: spin as asked from now on
            return True

    def close(self) -> None:
        """Release ``/proc/loadavg``."""
        if self._loadavg is not None:
            os.close(self._loadavg)
            self._loadavg = None


class _Command(Enum):
    """What this process asks a worker (one byte through its pipe)."""

    RESET = b"R"  # followed by a pickled (seeds, options)
    STEP = b"S"  # the checked actions are in shared memory, some outside [-1, 1]
    STEP_WITHIN = b"W"  # the same, every action in [-1, 1]
    CLOSE = b"C"


class _Reply(Enum):
    """What a worker answers (the first byte of its message; the payload follows)."""

    READY = b"r"
    RECORD = b"d"  # the info record's bytes, layout as last sent
    LAYOUT = b"l"  # a pickled (dtype, bytes): a new layout and its record
    INFO = b"i"  # a pickled info dict (not flat arrays)
    ERROR = b"e"  # a pickled exception


class _InfoCodec:
    """A vector ``info`` of flat arrays as one structured array's bytes, and back.

    Args:
        count: Rows (sub-environments) of every array.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        self.dtype: np.dtype | None = None

    def encode(self, info: dict[str, Any]) -> bytes:
        """One message (tag byte and payload) for ``info``."""
        count, values = self.count, list(info.values())
        if values and all(
            isinstance(v, np.ndarray) and v.shape == (count,) and v.dtype.kind in "biuf"
            for v in values
        ):
            dtype = np.dtype([(key, value.dtype) for key, value in info.items()])
            record = np.empty(self.count, dtype=dtype)
            for key, value in info.items():
                record[key] = value
            if dtype == self.dtype:
                return _Reply.RECORD.value + record.tobytes()
            self.dtype = dtype
            return _Reply.LAYOUT.value + pickle.dumps((dtype, record.tobytes()), protocol=5)
        return _Reply.INFO.value + pickle.dumps(info, protocol=5)

    def decode(self, message: bytes) -> np.ndarray | dict[str, Any]:
        """A worker's record (structured array) or info dict, from ``encode``'s message."""
        tag, payload = _Reply(message[:1]), memoryview(message)[1:]
        if tag is _Reply.RECORD:
            return np.frombuffer(payload, dtype=self.dtype)
        if tag is _Reply.LAYOUT:
            self.dtype, data = pickle.loads(payload)
            return np.frombuffer(data, dtype=self.dtype)
        return pickle.loads(payload)


def _worker(
    pipe: Any,
    env_id: str,
    count: int,
    options: dict[str, Any],
    shared: dict[str, Any],
    rows: slice,
    spin: float,
) -> None:
    """One worker: a BatchedEnv of ``count`` sub-environments stepped on command.

    ``spin``: seconds it polls for the next command before it blocks (see :class:`_Waiter`).
    """
    views = {name: view[rows] for name, view in _views(shared).items()}
    observations, actions = views["observations"], views["actions"]
    codec = _InfoCodec(count)
    try:
        env = BatchedEnv(env_id, count, **options)
    except BaseException as exc:  # reported to the parent, which raises it
        pipe.send_bytes(_Reply.ERROR.value + pickle.dumps(exc))
        return
    pipe.send_bytes(_Reply.READY.value)
    waiter = _Waiter(spin, usable_cores())
    try:
        while True:
            command = _Command(waiter.receive(pipe))
            if command is _Command.CLOSE:
                break
            try:
                if command is _Command.STEP_WITHIN or command is _Command.STEP:
                    info = _step_into(env, actions, command is _Command.STEP_WITHIN, views)
                else:
                    seeds, reset_options = pipe.recv()
                    observations[:], info = env.reset(seed=seeds, options=reset_options)
                message = codec.encode(info)
            except Exception as exc:  # sent to the parent, which raises it
                message = _Reply.ERROR.value + pickle.dumps(exc)
            pipe.send_bytes(message)
    finally:
        waiter.close()
        env.close()
        pipe.close()


def _step_into(
    env: BatchedEnv, actions: np.ndarray, within: bool, views: dict[str, np.ndarray]
) -> dict[str, Any]:
    """Step ``env`` on its rows of checked ``actions``, its results written into ``views``."""
    rewards, terminated, truncated = views["rewards"], views["terminated"], views["truncated"]
    rewards.fill(0.0)
    terminated.fill(False)
    truncated.fill(False)
    return env.step_checked(actions, within, views["observations"], rewards, terminated, truncated)


def _views(shared: dict[str, Any]) -> dict[str, np.ndarray]:
    """Views of the shared arrays (``shared`` maps name to (buffer, dtype, shape))."""
    return {
        name: np.frombuffer(buffer, dtype=dtype).reshape(shape)
        for name, (buffer, dtype, shape) in shared.items()
    }


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
            merged[key][starts[k] : starts[k + 1]] = value
    nested = {key for part in parts for key, value in part.items() if isinstance(value, dict)}
    for key in nested:
        merged[key] = _merge([part.get(key, {}) for part in parts], sizes)
    return merged


class AsyncBatchedEnv(VectorEnv):
    """``num_envs`` sub-environments in ``workers`` processes of batched environments.

    Args:
        env_id: A JointLab id (``"jointlab/Reach-v0"``).
        num_envs: Number of sub-environments in all.
        workers: Number of processes stepping environments (at most ``num_envs``); one per
            free core. With ``local=True`` this process is one of them.
        local: Step the first share in this process (``workers - 1`` children) rather than
            in a child of its own (``workers`` children).
        context: ``multiprocessing`` start method (default: the platform's).
        spin: Seconds a waiting process (a worker between commands, this process for the
            workers' answers) polls its pipe before it blocks; 0 blocks at once. Default:
            :data:`DEFAULT_SPIN` if the processes (``workers``, plus this one when
            ``local=False``) are at most the cores this process may run on, else 0
            (spinning would take cores the other processes need).
        **options: Keywords of :class:`BatchedEnv` (``autoreset_mode``, ``max_episode_steps``)
            and of every environment (``robot``, ``action_mode``...).
    """

    def __init__(
        self,
        env_id: str = "jointlab/Reach-v0",
        num_envs: int = 16,
        workers: int = 2,
        *,
        local: bool = True,
        context: str | None = None,
        spin: float | None = None,
        **options: Any,
    ) -> None:
        if not 1 <= int(workers) <= int(num_envs):
            raise ConfigurationError(f"workers must be in [1, num_envs={num_envs}], got {workers}")
        cores = usable_cores()
        if spin is None:  # a process per worker, and this one if it does not step a share
            processes = int(workers) + (0 if local else 1)
            spin = DEFAULT_SPIN if processes <= cores else 0.0
        if (
            isinstance(spin, bool)
            or not isinstance(spin, numbers.Real)
            or not math.isfinite(spin)
            or spin < 0.0
        ):
            raise ConfigurationError(f"spin must be a finite number of seconds >= 0, got {spin!r}")
        #: Seconds a waiting process polls its pipe before it blocks.
        self.spin = float(spin)
        self._waiter: _Waiter | None = None
        self.num_envs, self.env_id = int(num_envs), env_id
        self.autoreset_mode = AutoresetMode(options.get("autoreset_mode", AutoresetMode.NEXT_STEP))
        self.local = bool(local)
        self._sizes = [len(part) for part in np.array_split(np.arange(self.num_envs), workers)]
        self._local_env: BatchedEnv | None = None
        self._pipes, self._processes = [], []
        probe = BatchedEnv(env_id, 1, **options)  # spaces, and options checked here first
        self.single_observation_space = probe.single_observation_space
        self.single_action_space = probe.single_action_space
        self.metadata = probe.metadata
        self.render_mode = None
        self._action_mode = probe.envs[0].action_mode
        probe.close()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._action_shape = (self.num_envs, *self.single_action_space.shape)
        ctx = multiprocessing.get_context(context)
        n = self.num_envs
        layout = {
            "observations": (np.float32, (n, *self.single_observation_space.shape)),
            "actions": (np.float64, self._action_shape),
            "rewards": (np.float64, (n,)),
            "terminated": (np.bool_, (n,)),
            "truncated": (np.bool_, (n,)),
        }
        shared = {
            name: (ctx.RawArray("b", int(np.prod(shape)) * np.dtype(dtype).itemsize), dtype, shape)
            for name, (dtype, shape) in layout.items()
        }
        self._shared = _views(shared)
        self._codecs = [_InfoCodec(size) for size in self._sizes]
        start, remote = (self._sizes[0], self._sizes[1:]) if self.local else (0, self._sizes)
        self._local_views = {name: view[:start] for name, view in self._shared.items()}
        for size in remote:
            parent, child = ctx.Pipe()
            process = ctx.Process(
                target=_worker,
                daemon=True,
                args=(child, env_id, size, options, shared, slice(start, start + size), self.spin),
            )
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)
            start += size
        if self.local:  # built after the children start: they inherit no PyBullet client
            try:
                self._local_env = BatchedEnv(env_id, self._sizes[0], **options)
            except BaseException:
                self.close()
                raise
        self._waiter = _Waiter(self.spin, cores)  # after the children, like the env
        self._gather()

    def _gather(self, local: Any = None) -> list[np.ndarray | dict[str, Any]]:
        """Every worker's answer, decoded; a worker's error is raised (after closing).

        ``local`` is this process's own share's answer (an ``info`` or the exception its
        step raised), or ``None`` when there is none; it comes first.
        """
        results, error = [], None
        codecs = self._codecs
        if self.local:
            if isinstance(local, BaseException):
                error = local
            elif local is not None:
                results.append(codecs[0].decode(codecs[0].encode(local)))
            codecs = codecs[1:]
        for pipe, codec in zip(self._pipes, codecs, strict=True):
            message = self._waiter.receive(pipe)
            if message[:1] == _Reply.ERROR.value:
                error = error or pickle.loads(message[1:])
            elif message[:1] != _Reply.READY.value:
                results.append(codec.decode(message))
        if error is not None:
            self.close()
            raise (
                error
                if isinstance(error, JointLabError)
                else JointLabError(f"a worker of AsyncBatchedEnv failed: {error!r}")
            ) from error
        return results

    def _info(self, parts: list[np.ndarray | dict[str, Any]]) -> dict[str, Any]:
        """One vector info from the workers' records (fields of their join) or dicts."""
        first = parts[0]
        if isinstance(first, np.ndarray) and all(
            isinstance(p, np.ndarray) and p.dtype == first.dtype for p in parts
        ):
            record = np.concatenate(parts)
            return {name: record[name] for name in record.dtype.names}
        dicts = [p if isinstance(p, dict) else {k: p[k] for k in p.dtype.names} for p in parts]
        return _merge(dicts, self._sizes)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-environment; sub-environment ``i`` gets seed ``seed + i``."""
        seeds = sub_seeds(seed, self.num_envs)
        start, sizes = (self._sizes[0], self._sizes[1:]) if self.local else (0, self._sizes)
        for pipe, size in zip(self._pipes, sizes, strict=True):
            pipe.send_bytes(_Command.RESET.value)
            pipe.send((seeds[start : start + size], options))
            start += size
        local = None
        if self._local_env is not None:
            try:
                self._local_views["observations"][:], local = self._local_env.reset(
                    seed=seeds[: self._sizes[0]], options=options
                )
            except Exception as exc:  # raised once the children have answered
                local = exc
        info = self._info(self._gather(local))
        return self._shared["observations"].copy(), info

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every worker's batch with its rows of ``actions``."""
        shared = self._shared
        shared["actions"][:], within = check_actions(actions, self._action_shape, self._action_mode)
        command = (_Command.STEP_WITHIN if within else _Command.STEP).value
        for pipe in self._pipes:
            pipe.send_bytes(command)
        local = None
        if self._local_env is not None:
            views = self._local_views
            try:
                local = _step_into(self._local_env, views["actions"], within, views)
            except Exception as exc:  # raised once the children have answered
                local = exc
        info = self._info(self._gather(local))
        return (
            shared["observations"].copy(),
            shared["rewards"].copy(),
            shared["terminated"].copy(),
            shared["truncated"].copy(),
            info,
        )

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the children (they close their environments) and close this process's share."""
        if getattr(self, "_local_env", None) is not None:
            self._local_env.close()
            self._local_env = None
        for pipe in getattr(self, "_pipes", []):
            try:
                pipe.send_bytes(_Command.CLOSE.value)
            except (BrokenPipeError, OSError):
                pass
        for process in getattr(self, "_processes", []):
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
        self._pipes, self._processes = [], []
        if getattr(self, "_waiter", None) is not None:
            self._waiter.close()
