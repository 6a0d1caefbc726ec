"""Cold code: what a small computation costs when it runs once per control period.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/cold_code.py [--rounds 7] [--calls 300]

An environment's own work (action mapping, observation, reward), a Commander tick and a
batched environment's per-robot bookkeeping each run once per control period, between long
stretches of physics or waiting. This script times one such computation, the Reach task's
tool kinematics on arm6 (``ChainKinematics.position``: seven numpy calls), back to back and
right after a gap in which none of it runs:

* ``busy 0.5 ms`` and ``busy 2 ms``: a busy-wait on the clock (almost no memory touched);
* ``sleep 0.5 ms``: ``time.sleep``;
* ``physics``: 20 PyBullet physics steps of arm6 (one Reach env step's physics, ~0.4 ms).

If the gap's own work evicted the computation's code and data, only ``physics`` would slow
it. On a virtual machine that shares its cores' caches with other guests, the computation
also slows after a busy-wait or a sleep that touches nothing: its cost then depends on how
long ago it last ran, not on what ran in between. That is why figures timed once per period
(env layer, Commander tick, BatchedEnv's gain) are worse than their instruction counts
(``instructions.py``) on such a machine.

Each round times every case (``--calls`` each, the cases taking turns call by call) and
takes each case's median; the ratios to back to back are paired within the round. Medians
[lowest - highest] over the rounds, ratios first, load average at the start and end.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

from _report import header, load, row, spread, write_summary  # noqa: E402

from jointlab.envs.tasks import ChainKinematics  # noqa: E402
from jointlab.interface import NJointAction  # noqa: E402
from jointlab.sim import SimRobot  # noqa: E402

_clock = time.perf_counter_ns


def busy(seconds: float) -> Callable[[], None]:
    """A gap: wait ``seconds`` on the clock, touching (almost) no memory."""
    nanoseconds = round(seconds * 1e9)

    def gap() -> None:
        end = _clock() + nanoseconds
        while _clock() < end:
            pass

    return gap


def sleep(seconds: float) -> Callable[[], None]:
    """A gap: ``time.sleep(seconds)``."""
    return lambda: time.sleep(seconds)


def measure(calls: int, robot: SimRobot) -> dict[str, float]:
    """Median µs of the tool kinematics after each gap, the cases taking turns call by call."""
    kinematics = ChainKinematics(robot.description)
    q = np.asarray(robot.description.home, dtype=np.float64) + 0.05
    cases: dict[str, Callable[[], None]] = {
        "back to back": lambda: None,
        "busy 0.5 ms": busy(0.0005),
        "sleep 0.5 ms": sleep(0.0005),
        "physics (20 steps)": robot.step,
        "busy 2 ms": busy(0.002),
    }
    times: dict[str, list[int]] = {name: [] for name in cases}
    position = kinematics.position
    for _ in range(calls):
        for name, gap in cases.items():
            gap()
            start = _clock()
            position(q)
            times[name].append(_clock() - start)
    return {name: float(np.median(values)) / 1e3 for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="3 rounds of 60 calls")
    args = parser.parse_args()
    rounds, calls = (3, 60) if args.quick else (args.rounds, args.calls)
    header("cold code: Reach's tool kinematics (arm6) after a gap, against back to back")
    robot = SimRobot("arm6", control_dt=0.02, seed=0)
    robot.apply(NJointAction.Position(np.asarray(robot.description.home) + 0.1))
    measure(20, robot)  # warm-up
    results = []
    for index in range(rounds):
        results.append(measure(calls, robot))
        print(
            f"round {index + 1}/{rounds}: "
            + ", ".join(f"{name} {value:.1f} µs" for name, value in results[-1].items()),
            flush=True,
        )
    robot.close()
    names = list(results[0])
    base = names[0]
    print(
        f"\nTool kinematics, median [lowest - highest] over {rounds} rounds; ratios paired "
        f"within a round:"
    )
    summary = []
    for name in names[1:]:
        ratios = [r[name] / r[base] for r in results]
        print(f"    after {name:<20} / back to back  {spread(ratios)}x")
        summary.append(row(f"tool kinematics after {name} / back to back", ratios, "x"))
    for name in names:
        print(f"    {name:<26} {spread([r[name] for r in results], 1, 1)} µs (this machine)")
    print(load())
    write_summary(summary)


if __name__ == "__main__":
    main()
