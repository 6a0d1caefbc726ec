"""Batched vector environments: env steps per second against one environment, same run.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/vector_env.py [--steps 2000] [--rounds 7]

Each round has three parts.

**Turns** (the in-process ratio): each round builds ``single`` (``gymnasium.make`` of one
environment, stepped in this process) and ``batched``
(:class:`jointlab.envs.vector.BatchedEnv` with ``--envs`` (8) environments in this process:
action mapping, law, observation and reward in numpy across them) on ``jointlab/Reach-v0``
(arm6, position mode, random actions in [-1, 1], autoreset), resets and steps each once,
then steps them in turns: each variant's steps are cut into ten chunks and the variants
take turns chunk by chunk (about a tenth of a second each, the order reversed every
chunk), so the machine's drift over a round reaches both alike.

**Alone** (the two-process ratios): each of these is built, stepped 10 times untimed and
then timed over its steps with nothing else running, then closed, one after the other
(the order reversed every round):

* **batched**: ``BatchedEnv`` of ``--envs``, before the others and again after them (the
  reference: the mean of the two);
* **async**: :class:`jointlab.envs.vector.AsyncBatchedEnv` of ``2 x --envs`` environments
  in two processes (``local=True``, the default): this process steps the first ``--envs``
  while one worker process steps the others; both spin for up to ``DEFAULT_SPIN`` (2 ms)
  waiting for each other before they block, while the machine has a core free for it
  (the default on two cores);
* **blocking**: the same with ``spin=0``: a waiting process blocks in ``recv`` at once;
* **children**: the same with ``local=False``: two worker processes, this process sleeping
  in ``recv`` while they step (the layout before ``local=True``).

A multi-process environment is measured alone because it cannot take turns fairly: between
its chunks its worker would wait (spinning into the next variant's chunk for 2 ms, then
blocked), and every chunk would start on a worker woken cold. In training it is stepped
without such pauses for a whole rollout.

**Ceiling**: two independent processes, each stepping its own ``BatchedEnv`` as the
variants alone are stepped (no IPC; they meet at a barrier after their untimed steps): what
two processes can give on this machine.

``--ppo`` instead trains PPO on Reach with ``examples/02_train_reach.py --stop-at 0.9``, in
the earlier default configuration (``--vector dummy --epochs 10``: SB3's ``DummyVecEnv`` of
8, 10 passes per rollout) and in the current one (``AsyncBatchedEnv`` of 8 in 2 workers, 5
passes), one after the other, ``--ppo-runs`` times (1), and prints for each the training
wall time (evaluations excluded) to 90 % success, median [lowest - highest], the
environment steps it took and the CPU time of the whole run (all its processes).

Ratios are paired within a round: batched / single (target >= 1.3) from the turns, and
async / batched (target >= 1.8 on two free cores), blocking / batched, children / batched and
ceiling / batched with the batched reference measured alone, in environment steps per
wall-clock second. Because wall-clock figures on a busy machine measure the load, the
script also prints batched / single per CPU second (the async envs' CPU time counts their
spinning, so it is not shown). Medians [lowest - highest] over the rounds, ratios first,
load average at the start and end.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import header, load, row, spread, write_summary

import jointlab.envs  # noqa: F401  (registers the ids)
from jointlab.envs.vector import AsyncBatchedEnv, BatchedEnv

ENV_ID = "jointlab/Reach-v0"
KWARGS = {"robot": "arm6", "action_mode": "position"}


#: Chunks each round's steps are split into; the variants take turns chunk by chunk.
CHUNKS = 10


class Stepper:
    """Steps one variant's environment chunk by chunk and sums its wall and CPU time.

    ``env`` is a single Gymnasium env (reset on episode end) or a vector env (autoreset);
    ``steps`` env steps in all, over :data:`CHUNKS` chunks (whole vector calls).
    """

    def __init__(self, env: Any, steps: int) -> None:
        self.env = env
        self.vector = isinstance(env, gymnasium.vector.VectorEnv)
        width = env.num_envs if self.vector else 1
        calls = max(CHUNKS, steps // width)
        shape = (calls, width, 6) if self.vector else (calls, 6)
        self.actions = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
        self.width, self.calls, self.done = width, calls, 0
        self.wall = self.cpu = 0.0
        env.reset(seed=0)
        env.step(self.actions[0])  # warm-up

    def chunk(self, index: int) -> None:
        """Step the ``index``-th of :data:`CHUNKS` parts of the actions, timed."""
        env, vector = self.env, self.vector
        part = self.actions[index * self.calls // CHUNKS : (index + 1) * self.calls // CHUNKS]
        start, cpu = time.perf_counter(), time.thread_time()
        for action in part:
            if vector:
                env.step(action)
            else:
                _, _, terminated, truncated, _ = env.step(action)
                if terminated or truncated:
                    env.reset()
        self.wall += time.perf_counter() - start
        self.cpu += time.thread_time() - cpu
        self.done += len(part)

    @property
    def rate(self) -> float:
        """Env steps per wall-clock second over the chunks stepped."""
        return self.done * self.width / self.wall

    @property
    def cpu_rate(self) -> float:
        """Env steps per CPU second of this thread over the chunks stepped."""
        return self.done * self.width / self.cpu


def interleaved(steppers: dict[str, Stepper]) -> dict[str, Stepper]:
    """Step every variant chunk by chunk, taking turns (reversing the order each chunk).

    Machine speed drifts over seconds on a shared host; variants that take turns every
    tenth of a second see the same drift, so their ratio does not carry it.
    """
    order = list(steppers)
    try:
        for index in range(CHUNKS):
            for name in order if index % 2 == 0 else reversed(order):
                steppers[name].chunk(index)
    finally:
        for stepper in steppers.values():
            stepper.env.close()
    return steppers


#: Untimed steps of an environment measured alone, before its timed steps.
WARM_UP = 10


def alone(
    env: gymnasium.vector.VectorEnv, steps: int, ready: Callable[[], object] | None = None
) -> float:
    """Env steps per wall-clock second of ``env`` stepped by itself, then closed.

    ``steps`` env steps in all (whole vector calls), after :data:`WARM_UP` untimed calls;
    ``ready`` is called between the two (the ceiling's processes meet at a barrier there).
    """
    try:
        actions = _actions(env, steps + WARM_UP * env.num_envs)
        env.reset(seed=0)
        for action in actions[:WARM_UP]:
            env.step(action)
        if ready is not None:
            ready()
        start = time.perf_counter()
        for action in actions[WARM_UP:]:
            env.step(action)
        return (len(actions) - WARM_UP) * env.num_envs / (time.perf_counter() - start)
    finally:
        env.close()


def _actions(env: gymnasium.vector.VectorEnv, steps: int) -> np.ndarray:
    calls = max(1, steps // env.num_envs)
    rng = np.random.default_rng(0)
    return rng.uniform(-1, 1, (calls, env.num_envs, 6)).astype(np.float32)


def _independent(envs: int, steps: int, barrier: Any, queue: Any) -> None:
    """One of the ceiling's processes: its ``BatchedEnv`` measured as :func:`alone` does."""
    queue.put(alone(BatchedEnv(ENV_ID, envs, **KWARGS), steps, ready=barrier.wait))


def ceiling(envs: int, steps: int) -> float:
    """Env steps per wall-clock second of two independent ``BatchedEnv`` processes, summed."""
    context = multiprocessing.get_context("fork")
    barrier, queue = context.Barrier(2), context.Queue()
    processes = [
        context.Process(target=_independent, args=(envs, steps, barrier, queue)) for _ in range(2)
    ]
    for process in processes:
        process.start()
    rates = [queue.get() for _ in processes]
    for process in processes:
        process.join()
    return sum(rates)


#: ``--ppo``'s configurations: the earlier default and the current one (examples/02 options).
PPO_CONFIGS = {
    "old (dummy, 10 epochs)": ["--vector", "dummy", "--epochs", "10"],
    "new (async, 5 epochs)": [],
}


def ppo(stop_at: float, steps: int, runs: int) -> None:
    """Time PPO on Reach to ``stop_at`` success, old and new default (module docstring)."""
    script = Path(__file__).resolve().parents[1] / "examples" / "02_train_reach.py"
    minutes: dict[str, list[float]] = {name: [] for name in PPO_CONFIGS}
    cpu: dict[str, list[float]] = {name: [] for name in PPO_CONFIGS}
    reached_at: dict[str, list[int]] = {name: [] for name in PPO_CONFIGS}
    with tempfile.TemporaryDirectory(prefix="jointlab-ppo-") as folder:
        for run in range(runs):
            for index, (name, options) in enumerate(PPO_CONFIGS.items()):
                out = Path(folder) / f"run{run}-config{index}"
                print(f"run {run + 1}, {name}: {load()}", flush=True)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                command = [
                    sys.executable,
                    str(script),
                    *options,
                    "--steps",
                    str(steps),
                    "--stop-at",
                    str(stop_at),
                    "--out",
                    str(out),
                ]
                subprocess.run(command, check=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                point = json.loads((out / "results.json").read_text())["final"]["reached"]
                cpu[name].append(
                    after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                )
                if point is not None:
                    minutes[name].append(point["train_seconds"] / 60)
                    reached_at[name].append(int(point["steps"]))
    print(
        f"PPO on {ENV_ID} (arm6, position mode, 8 envs, seed 0) to {stop_at:.0%} success, "
        f"{runs} run(s) each:"
    )
    for name in PPO_CONFIGS:
        if len(minutes[name]) < runs:
            print(f"  {name:24s} not reached in {steps} steps in {runs - len(minutes[name])} runs")
        if minutes[name]:
            print(
                f"  {name:24s} {np.median(minutes[name]):.2f} min "
                f"[{min(minutes[name]):.2f}-{max(minutes[name]):.2f}] of training "
                f"(evaluations excluded) at {sorted(set(reached_at[name]))} steps; "
                f"CPU of the whole run (all processes, evaluations included) "
                f"{np.median(cpu[name]) / 60:.2f} min"
            )
    old, new = (minutes[name] for name in PPO_CONFIGS)
    if old and new:
        print(
            f"  new / old wall time: {np.median(new) / np.median(old):.2f} "
            f"({np.median(old) / np.median(new):.2f}x faster)"
        )
    print(f"end {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000, help="env steps per process")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (median, spread)")
    parser.add_argument("--envs", type=int, default=8, help="environments per process")
    parser.add_argument("--quick", action="store_true", help="400 steps, 3 rounds")
    parser.add_argument(
        "--ppo",
        action="store_true",
        help="time PPO on Reach to 90 %% success instead (minutes per run)",
    )
    parser.add_argument(
        "--ppo-runs", type=int, default=1, help="runs of each PPO configuration (median, spread)"
    )
    args = parser.parse_args()
    if args.quick:
        args.steps, args.rounds = 400, 3
    header("vector_env")
    if args.ppo:
        ppo(0.9, 300_000, args.ppo_runs)
        return
    n = args.envs
    one, one_cpu, two, two_max, blocking, children = [], [], [], [], [], []
    rates: dict[str, list[float]] = {
        "single": [],
        "batched": [],
        "batched alone": [],
        "async": [],
        "blocking": [],
        "children": [],
        "ceiling": [],
    }
    makers = {
        "async": lambda: AsyncBatchedEnv(ENV_ID, 2 * n, workers=2, **KWARGS),
        "blocking": lambda: AsyncBatchedEnv(ENV_ID, 2 * n, workers=2, spin=0, **KWARGS),
        "children": lambda: AsyncBatchedEnv(ENV_ID, 2 * n, workers=2, local=False, **KWARGS),
    }
    for index in range(args.rounds):
        turns = interleaved(
            {
                "single": Stepper(gymnasium.make(ENV_ID, **KWARGS), args.steps // 2),
                "batched": Stepper(BatchedEnv(ENV_ID, n, **KWARGS), args.steps),
            }
        )
        single_rate, batched_rate = turns["single"].rate, turns["batched"].rate
        one.append(batched_rate / single_rate)
        one_cpu.append(turns["batched"].cpu_rate / turns["single"].cpu_rate)
        before = alone(BatchedEnv(ENV_ID, n, **KWARGS), args.steps)
        measured = {
            name: alone(makers[name](), 2 * args.steps)
            for name in (makers if index % 2 == 0 else reversed(makers))
        }
        reference = (before + alone(BatchedEnv(ENV_ID, n, **KWARGS), args.steps)) / 2
        both = ceiling(n, args.steps)
        for name, value in (
            ("single", single_rate),
            ("batched", batched_rate),
            ("batched alone", reference),
            *measured.items(),
            ("ceiling", both),
        ):
            rates[name].append(value)
        two.append(measured["async"] / reference)
        blocking.append(measured["blocking"] / reference)
        children.append(measured["children"] / reference)
        two_max.append(both / reference)
    print(f"{ENV_ID}, {args.rounds} rounds; ratios paired within rounds, median [min-max]:")
    print(f"  BatchedEnv({n}) / one env, one process      {spread(one)}x  (target >= 1.3)")
    print(f"    the same in CPU time                   {spread(one_cpu)}x")
    print(f"  2 processes of {n} / one process             {spread(two)}x  (target >= 1.8)")
    print(f"    spin=0 (waits block at once)           {spread(blocking)}x")
    print(f"    local=False (2 workers, this one idle) {spread(children)}x")
    print(f"    ceiling: 2 independent processes       {spread(two_max)}x")
    print("  this machine, env steps per wall-clock second:")
    print(f"    one env                      {spread(rates['single'], 1, 0)}")
    print(
        f"    BatchedEnv({n})                {spread(rates['batched'], 1, 0)} (turns),"
        f" {spread(rates['batched alone'], 1, 0)} (alone)"
    )
    print(f"    AsyncBatchedEnv(2 x {n})       {spread(rates['async'], 1, 0)}")
    print(f"      spin=0                     {spread(rates['blocking'], 1, 0)}")
    print(f"      local=False                {spread(rates['children'], 1, 0)}")
    print(f"    2 independent BatchedEnv({n})  {spread(rates['ceiling'], 1, 0)}")
    write_summary(
        [
            row(f"BatchedEnv({n}) / one env, steps/s", one, "x", ">= 1.3"),
            row(f"2 processes x BatchedEnv({n}) / one process", two, "x", ">= 1.8"),
            row(f"2 independent BatchedEnv({n}) processes / one (ceiling)", two_max, "x"),
        ]
    )
    print(f"end {load()}")


if __name__ == "__main__":
    main()
