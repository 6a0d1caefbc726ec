"""Scaling: environment steps/s with 1 and 2 workers, for three engines, in one run.

Run from the repository root (needs the ``rl`` and ``distributed`` extras)::

    .venv/bin/python benchmarks/scaling.py [--seconds 3] [--repeats 3] [--json out.json]

The environment is ``jointlab/Reach-v0`` (arm6, position mode: one step = 20 physics steps of
1 ms), random actions, one environment per worker process:

* ``AsyncVectorEnv``: Gymnasium's, ``N`` sub-processes stepped in lock step by this process;
* ``SubprocVecEnv``: Stable-Baselines3's, the same design;
* ``Ray RLlib``: ``N`` RLlib env runners (Ray actors, one CPU each) each sampling ``--chunk``
  steps per call with ``random_actions=True`` (no policy), all runners in parallel; the
  steps are counted in the runners (the episodes are not shipped back);
* ``independent``: ``N`` processes each running its own env loop, no communication: what
  this machine gives two processes, the ceiling of any engine.

Each figure is the best of ``--repeats`` measurements of ``--seconds`` each, with the 1- and
2-worker measurements interleaved so that a change in background load hits both. Total env
steps/s are reported; ``2/1`` is the 2-worker figure over the 1-worker one (target >= 1.7).

Where the time goes: ``cores`` is the CPU time the worker processes (and, after the ``+``,
this driver process) got per wall-clock second, read from ``/proc``; ``steps/CPU-s`` is the
throughput per second of worker CPU time. On an idle 2-core machine 2 workers get close to 2
cores; when other processes load the machine they get less, and ``2/1`` drops with them
while ``steps/CPU-s`` (the engine's own cost) stays put.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import gymnasium
import numpy as np
from _processes import in_processes  # benchmarks/ is on sys.path when run as a script

import jointlab.envs  # noqa: F401  (registers the ids)

ENV_ID = "jointlab/Reach-v0"
ENV_KWARGS = {"robot": "arm6", "action_mode": "position"}
TARGET = 1.7
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Measure:
    """One timed measurement."""

    #: Total environment steps per wall-clock second.
    steps_per_s: float
    #: CPU seconds the worker processes used per wall-clock second.
    worker_cores: float
    #: CPU seconds this (driver) process used per wall-clock second.
    driver_cores: float

    @property
    def steps_per_cpu_s(self) -> float:
        """Environment steps per second of worker CPU time."""
        return self.steps_per_s / self.worker_cores if self.worker_cores > 0 else float("nan")


def make_env() -> gymnasium.Env:
    """The benchmarked environment (module-level, so every engine can pickle it)."""
    return gymnasium.make(ENV_ID, **ENV_KWARGS)


def cpu_seconds(pids: Sequence[int]) -> float:
    """User + system CPU seconds used so far by the processes ``pids`` (Linux ``/proc``)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        total += int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15
    return total / _TICK


def timed(step: Callable[[], int], seconds: float, pids: Sequence[int], warmup: int) -> Measure:
    """Time repeated ``step()`` calls (each returns the env steps it made) for ``seconds``."""
    for _ in range(warmup):
        step()
    steps, workers, driver = 0, cpu_seconds(pids), time.process_time()
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds or steps == 0:
        steps += step()
    return Measure(
        steps / elapsed,
        (cpu_seconds(pids) - workers) / elapsed,
        (time.process_time() - driver) / elapsed,
    )


def actions(workers: int) -> np.ndarray:
    """Pre-drawn random actions, shape ``(256, workers, 6)``."""
    return np.random.default_rng(0).uniform(-1, 1, size=(256, workers, 6)).astype(np.float32)


# ----------------------------------------------------------------------------- engines
class Single:
    """One env in this process: the cost of a step without any worker machinery."""

    def __init__(self) -> None:
        self.env = make_env()
        self.env.reset(seed=0)
        self.actions, self.i = actions(1)[:, 0], 0

    def step(self) -> int:
        """One env step (resets at episode end)."""
        _, _, terminated, truncated, _ = self.env.step(self.actions[self.i % 256])
        self.i += 1
        if terminated or truncated:
            self.env.reset()
        return 1

    def measure(self, seconds: float) -> Measure:
        """Steps/s of this process alone (worker = driver = this process)."""
        return timed(self.step, seconds, [os.getpid()], warmup=20)

    def close(self) -> None:
        """Close the env."""
        self.env.close()


class Vector:
    """A vector env with one env per worker process (auto-reset inside the workers)."""

    def __init__(self, vec: object, workers: int) -> None:
        self.vec, self.workers, self.actions, self.i = vec, workers, actions(workers), 0
        self.pids = [process.pid for process in vec.processes]

    def step(self) -> int:
        """One vector step: one env step in every worker."""
        self.vec.step(self.actions[self.i % 256])
        self.i += 1
        return self.workers

    def measure(self, seconds: float) -> Measure:
        """Total steps/s of the vector env."""
        return timed(self.step, seconds, self.pids, warmup=20)

    def close(self) -> None:
        """Stop the worker processes."""
        self.vec.close()


def async_vector(workers: int) -> Vector:
    """Gymnasium ``AsyncVectorEnv``."""
    vec = gymnasium.vector.AsyncVectorEnv([make_env] * workers)
    vec.reset(seed=0)
    return Vector(vec, workers)


def subproc_vector(workers: int) -> Vector:
    """Stable-Baselines3 ``SubprocVecEnv`` (its default start method)."""
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv([make_env] * workers)
    vec.seed(0)
    vec.reset()
    return Vector(vec, workers)


class RayRunners:
    """RLlib env runners of one PPO algorithm; ``measure(n, ...)`` samples on the first n."""

    def __init__(self, workers: int, chunk: int) -> None:
        import ray
        from ray.rllib.algorithms.ppo import PPOConfig

        from jointlab.envs.rllib import register_rllib_envs

        ray.init(
            address="local",
            num_cpus=workers,
            include_dashboard=False,
            log_to_driver=False,
            object_store_memory=150 * 1024**2,
        )
        register_rllib_envs()
        config = (
            PPOConfig()
            .environment(ENV_ID, env_config={**ENV_KWARGS, "seed": 0})
            .env_runners(num_env_runners=workers, num_envs_per_env_runner=1)
            .debugging(seed=0)
        )
        self.ray, self.chunk = ray, chunk
        self.algo = config.build_algo()
        group = self.algo.env_runner_group
        self.ids = group.healthy_worker_ids()[:workers]
        self.pids = group.foreach_env_runner(
            lambda runner: os.getpid(), local_env_runner=False, remote_worker_ids=self.ids
        )

    def measure(self, workers: int, seconds: float) -> Measure:
        """Total env steps/s of the first ``workers`` runners sampling in parallel."""
        chunk, ids, group = self.chunk, self.ids[:workers], self.algo.env_runner_group

        def sample(runner) -> int:
            episodes = runner.sample(num_timesteps=chunk, random_actions=True)
            return sum(len(e) for e in episodes)

        def step() -> int:
            return sum(
                group.foreach_env_runner(sample, local_env_runner=False, remote_worker_ids=ids)
            )

        return timed(step, seconds, self.pids[:workers], warmup=1)

    def close(self) -> None:
        """Stop the algorithm and Ray."""
        self.algo.stop()
        self.ray.shutdown()


def _single_measure(seconds: float) -> Measure:
    single = Single()
    try:
        return single.measure(seconds)
    finally:
        single.close()


def independent(workers: int, seconds: float) -> Measure:
    """``workers`` processes each stepping its own env (each measures itself)."""
    measures = in_processes(_single_measure, workers, seconds)
    return Measure(sum(m.steps_per_s for m in measures), sum(m.worker_cores for m in measures), 0.0)


# ----------------------------------------------------------------------------- main
def best_of(
    repeats: int, one: Callable[[], Measure], two: Callable[[], Measure]
) -> tuple[Measure, Measure]:
    """Interleave 1- and 2-worker measurements ``repeats`` times; the fastest of each."""
    ones, twos = [], []
    for _ in range(repeats):
        ones.append(one())
        twos.append(two())
    return max(ones, key=lambda m: m.steps_per_s), max(twos, key=lambda m: m.steps_per_s)


def run(seconds: float, repeats: int, chunk: int) -> tuple[Measure, dict[str, tuple]]:
    """Every engine with 1 and 2 workers; returns the single-env figure and the rows."""
    single = Single()
    reference = max((single.measure(seconds) for _ in range(repeats)), key=lambda m: m.steps_per_s)
    single.close()
    rows = {
        "independent processes": best_of(
            repeats, lambda: independent(1, seconds), lambda: independent(2, seconds)
        )
    }
    for name, build in (("AsyncVectorEnv", async_vector), ("SubprocVecEnv", subproc_vector)):
        one, two = build(1), build(2)
        try:
            rows[name] = best_of(
                repeats, lambda one=one: one.measure(seconds), lambda two=two: two.measure(seconds)
            )
        finally:
            one.close()
            two.close()
    runners = RayRunners(2, chunk)
    try:
        rows["Ray RLlib env runners"] = best_of(
            repeats, lambda: runners.measure(1, seconds), lambda: runners.measure(2, seconds)
        )
    finally:
        runners.close()
    return reference, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of one measure")
    parser.add_argument("--repeats", type=int, default=3, help="measures per figure (best)")
    parser.add_argument("--chunk", type=int, default=250, help="Ray: steps per sample call")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    load_before, start = os.getloadavg()[0], time.perf_counter()
    reference, rows = run(args.seconds, args.repeats, args.chunk)

    print(
        f"{ENV_ID} (arm6, position mode), random actions, {os.cpu_count()} CPUs, load average "
        f"{load_before:.2f} -> {os.getloadavg()[0]:.2f}, {time.perf_counter() - start:.0f} s"
    )
    print(
        f"single env in this process: {reference.steps_per_s:.0f} steps/s "
        f"({1e3 / reference.steps_per_s:.3f} ms/step, {reference.worker_cores:.2f} cores)"
    )
    print(
        f"{'engine':<22} {'1 worker':>9} {'2 workers':>9} {'2/1':>6}  {'cores 1w':>11} "
        f"{'cores 2w':>11}  steps/CPU-s 1w, 2w"
    )
    for name, (one, two) in rows.items():
        print(
            f"{name:<22} {one.steps_per_s:>9.0f} {two.steps_per_s:>9.0f} "
            f"{two.steps_per_s / one.steps_per_s:>5.2f}x  "
            f"{one.worker_cores:>5.2f}+{one.driver_cores:<5.2f} "
            f"{two.worker_cores:>5.2f}+{two.driver_cores:<5.2f}  "
            f"{one.steps_per_cpu_s:>6.0f}, {two.steps_per_cpu_s:>6.0f}"
        )
    print(f"target: 2 workers >= {TARGET}x one for each engine")
    if args.json:
        figures = {
            name: {
                "one": asdict(one),
                "two": asdict(two),
                "ratio": two.steps_per_s / one.steps_per_s,
            }
            for name, (one, two) in rows.items()
        }
        figures["single"] = {"one": asdict(reference)}
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
