"""Manipulation environment steps per CPU second: JointLab's tasks against panda-gym's.

All figures come from one run of this script::

    PYTHONPATH=. .venv/bin/python benchmarks/manipulation_speed.py --panda-python PYTHON

(``PYTHON``: an interpreter with panda-gym; ``--steps 400 --rounds 3`` are the defaults).

Each round steps, one after the other, every JointLab task on each engine and its panda-gym
counterpart (``Lift`` and ``PickPlace`` against ``PandaPickAndPlace-v3``, ``Push`` against
``PandaPush-v3``, ``Stack`` against ``PandaStack-v3``), with a fixed random action sequence
and resets at the time limit, and reports steps per CPU second of the stepping process (per
core: the process is single-threaded, so a loaded machine slows the wall clock, not the CPU
time). Ratios are paired within a round and given as the median [lowest - highest] over the
rounds. Both sides do the same work per step: 25 Hz actions over 2 ms physics steps (20
substeps; panda-gym: 20 PyBullet substeps of 2 ms), in the end-effector action space with
the IK solved every step (panda-gym: PyBullet's ``calculateInverseKinematics``). The target
of issue 42 is ``JointLab MuJoCo / panda-gym >= 5``. panda-gym pins its own gymnasium and
pybullet: give it a venv of its own (never a JointLab dependency)::

    python -m venv /tmp/pandagym && /tmp/pandagym/bin/pip install panda-gym
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import gymnasium
import numpy as np

import jointlab.envs  # noqa: F401  (registers the ids)

PAIRS = {
    "jointlab/Lift-v0": "PandaPickAndPlace-v3",
    "jointlab/Push-v1": "PandaPush-v3",
    "jointlab/PickPlace-v0": "PandaPickAndPlace-v3",
    "jointlab/Stack-v0": "PandaStack-v3",
}

PANDA_SNIPPET = r"""
import json, sys, time
import gymnasium, numpy as np, panda_gym  # noqa: F401
env_id, count = sys.argv[1], int(sys.argv[2])
env = gymnasium.make(env_id)
env.reset(seed=0)
actions = np.random.default_rng(0).uniform(-1, 1, (4096,) + env.action_space.shape)
for i in range(20):
    env.step(actions[i].astype(np.float32))
start = time.process_time()
for steps in range(count):
    _, _, terminated, truncated, _ = env.step(actions[steps % 4096].astype(np.float32))
    if terminated or truncated:
        env.reset()
print(json.dumps({"steps_per_s": count / (time.process_time() - start)}))
"""


def jointlab_rate(env_id: str, engine: str, steps: int) -> float:
    """Steps per CPU second of ``env_id`` on ``engine`` (random actions, resets at the limit)."""
    env = gymnasium.make(env_id, engine=engine)
    env.reset(seed=0)
    actions = np.random.default_rng(0).uniform(-1, 1, (4096, *env.action_space.shape))
    for i in range(20):
        env.step(actions[i].astype(np.float32))
    start = time.process_time()
    for count in range(steps):
        _, _, terminated, truncated, _ = env.step(actions[count % 4096].astype(np.float32))
        if terminated or truncated:
            env.reset()
    rate = steps / (time.process_time() - start)
    env.close()
    return rate


def panda_rate(env_id: str, steps: int, python: str) -> float | None:
    """Steps per CPU second of a panda-gym id run by ``python`` (None when it cannot)."""
    result = subprocess.run(
        [python, "-c", PANDA_SNIPPET, env_id, str(steps)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if result.returncode != 0:
        print(f"panda-gym {env_id} failed: {result.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    return float(json.loads(result.stdout.strip().splitlines()[-1])["steps_per_s"])


def spread(values: list[float], digits: int = 2) -> str:
    """``median [lowest - highest]``."""
    return (
        f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f} - "
        f"{max(values):.{digits}f}]"
    )


def main() -> None:
    """Run the rounds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--panda-python", default="/tmp/pandagym/bin/python")
    parser.add_argument("--engines", default="mujoco,pybullet")
    args = parser.parse_args()
    engines = args.engines.split(",")
    rates: dict[tuple[str, str], list[float]] = {}
    pandas: dict[str, list[float]] = {}
    print(f"load average at start: {os.getloadavg()}")
    for _ in range(args.rounds):
        for env_id, panda_id in PAIRS.items():
            for engine in engines:
                rates.setdefault((env_id, engine), []).append(
                    jointlab_rate(env_id, engine, args.steps)
                )
            if panda_id not in pandas or len(pandas[panda_id]) < len(rates[(env_id, engines[0])]):
                value = panda_rate(panda_id, args.steps, args.panda_python)
                if value is not None:
                    pandas.setdefault(panda_id, []).append(value)
    print(f"load average at end: {os.getloadavg()}")
    print(f"steps per CPU second, median [lowest - highest] of {args.rounds} rounds")
    for env_id, panda_id in PAIRS.items():
        panda = pandas.get(panda_id)
        line = f"{env_id:24s}"
        for engine in engines:
            values = rates[(env_id, engine)]
            line += f" {engine} {spread(values, 0)}"
            if panda:
                ratios = [v / p for v, p in zip(values, panda, strict=False)]
                line += f" (x{spread(ratios)} of {panda_id})"
        if panda:
            line += f"; {panda_id} {spread(panda, 0)}"
        print(line)


if __name__ == "__main__":
    main()
