"""BatchedEnv(64) on MuJoCo against one Reach-v0 on MuJoCo, env steps per CPU second, one run.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/batched_mujoco.py [--envs 64] [--rounds 7]
        [--seconds 1.5] [--panda-python /tmp/bench-venv/bin/python [--panda-steps 1500]]

Both variants are ``jointlab/Reach-v0`` on MuJoCo (arm6, position mode, 20 physics steps of
1 ms per env step, random actions in [-1, 1], autoreset), in this process and on one core
(single-threaded): ``single`` is ``gymnasium.make`` of one env, ``batched`` a
:class:`~jointlab.envs.vector.BatchedEnv` of ``--envs``. Each round measures both for about
``--seconds`` of this thread's CPU time (``time.thread_time``: waiting for a core on a shared
machine is left out, which keeps the ratio a per-core figure), the order reversed every
round. Printed: env steps per CPU second of each (median, min-max) and the per-round ratio
batched / single (median, min-max), the ceiling being the raw physics: ``mj_step`` alone for
the same 20 steps of arm6, measured in the same rounds.

With ``--panda-python PYTHON`` (an interpreter that has panda-gym, in a separate venv:
``python -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install panda-gym``; never the
project's) every round also runs panda-gym's ``PandaReach-v3`` for ``--panda-steps`` steps
in that interpreter (CPU time of its single-threaded process, ``env_throughput.py``'s
snippet) and prints batched / PandaReach-v3 per core, with the same ceiling: raw ``mj_step``
of the same physics / PandaReach-v3.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402
from _report import header, load, spread  # noqa: E402

import jointlab.envs  # noqa: E402,F401  (registers the ids)
from jointlab.envs.vector import BatchedEnv  # noqa: E402
from jointlab.sim import SimRobot  # noqa: E402

ID = "jointlab/Reach-v0"
OPTIONS = {"robot": "arm6", "action_mode": "position", "engine": "mujoco"}


def _rate(step, per_call: int, seconds: float) -> float:
    """Env steps per CPU second of ``step`` (which advances ``per_call`` env steps)."""
    for _ in range(3):
        step()
    calls, start = 0, time.thread_time()
    while (used := time.thread_time() - start) < seconds:
        step()
        calls += 1
    return calls * per_call / used


def _panda_rate(python: str, steps: int) -> float:
    """PandaReach-v3 steps per CPU second in ``python`` (``env_throughput.py``'s snippet)."""
    from env_throughput import bench_panda

    result = bench_panda(steps, python)
    if isinstance(result, str):
        raise SystemExit(f"PandaReach-v3 with {python}: {result}")
    return float(result["steps_per_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument(
        "--panda-python", default=None, help="a Python with panda-gym: also measure PandaReach-v3"
    )
    parser.add_argument("--panda-steps", type=int, default=1500)
    args = parser.parse_args()
    header("batched_mujoco")
    rng = np.random.default_rng(0)
    single = gymnasium.make(ID, **OPTIONS)
    single.reset(seed=0)
    batched = BatchedEnv(ID, args.envs, **OPTIONS)
    batched.reset(seed=0)
    robot = SimRobot("arm6", engine="mujoco", control_dt=0.02)
    model, data = robot._body.model, robot._body.data
    import mujoco

    def step_single() -> None:
        _, _, terminated, truncated, _ = single.step(rng.uniform(-1, 1, 6).astype(np.float32))
        if terminated or truncated:
            single.reset()

    def step_batched() -> None:
        batched.step(rng.uniform(-1, 1, (args.envs, 6)).astype(np.float32))

    def step_raw() -> None:
        mujoco.mj_step(model, data, 20)

    rates: dict[str, list[float]] = {"single": [], "batched": [], "raw mj_step": []}
    if args.panda_python:
        rates["PandaReach-v3"] = []
    ratios = []
    for k in range(args.rounds):
        order = [
            ("single", step_single, 1),
            ("batched", step_batched, args.envs),
            ("raw mj_step", step_raw, 1),
        ]
        if args.panda_python:
            order.append(("PandaReach-v3", None, 1))
        for name, step, per_call in order if k % 2 == 0 else order[::-1]:
            if step is None:
                rates[name].append(_panda_rate(args.panda_python, args.panda_steps))
                continue
            rates[name].append(_rate(step, per_call, args.seconds))
        ratios.append(rates["batched"][-1] / rates["single"][-1])
    print(
        f"{ID} on MuJoCo (arm6, position mode, 20 x 1 ms per env step), env steps per CPU "
        f"second, {args.rounds} rounds (median [min - max]):"
    )
    for name, values in rates.items():
        print(f"  {name:12s} {spread(values, digits=0)}")
    print(f"  BatchedEnv({args.envs}) / one env, per core: {spread(ratios)}x")
    ceiling = [r / s for r, s in zip(rates["raw mj_step"], rates["single"], strict=True)]
    print(f"  ceiling (raw mj_step of the physics alone / one env): {spread(ceiling)}x")
    share = statistics.median(rates["batched"]) / statistics.median(rates["raw mj_step"])
    print(f"  a batched env step runs at {100 * share:.0f} % of the raw physics' rate")
    if args.panda_python:
        panda = rates["PandaReach-v3"]
        versus = [b / p for b, p in zip(rates["batched"], panda, strict=True)]
        single_versus = [s / p for s, p in zip(rates["single"], panda, strict=True)]
        raw_versus = [r / p for r, p in zip(rates["raw mj_step"], panda, strict=True)]
        print(f"  BatchedEnv({args.envs}) / PandaReach-v3, per core: {spread(versus)}x")
        print(f"  one env / PandaReach-v3, per core: {spread(single_versus)}x")
        print(
            f"  ceiling (raw mj_step of the physics alone / PandaReach-v3): {spread(raw_versus)}x"
        )
    print(f"end {load()}")
    single.close()
    batched.close()
    robot.close()


if __name__ == "__main__":
    main()
