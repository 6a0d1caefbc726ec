"""Benchmark: Commander + trajectory on arm6 at 1 kHz control.

Measures the controller's compute per tick (``Commander.compute``: command sampling, gravity
compensation and inertia feed-forward, action building, safety layer) as a fraction of the 1
ms control period. Each round runs ``--seconds`` of simulated time; the compute of each tick
is timed in CPU time of this thread (``time.thread_time``, so other processes on a shared
machine disturb it less than wall-clock time would). The report gives, over the rounds, the
median [lowest - highest] of each round's median and 99th percentile, ratios to the budget
first, then the load average at the start and end. Targets: median <= 5 %, p99 <= 10 % of
the period.

``--breakdown`` adds one instrumented round that times the parts of each tick (microseconds
of CPU, median over the ticks): the state's position, which the simulated robot derives
on first access (``SimState``; the stall check asks ``state.stalled()``, which builds no
flags), the commands (trajectory sampling, stall check), the model's ``g(q) + M(q)·q̈_ref``
(one inverse dynamics by Bullet's rigid-body algorithms, see
``jointlab.sim.pybullet.dynamics``), the safety layer, and the rest of ``compute`` (the
viscous and armature terms, building the action, bookkeeping). Each
timer adds a fraction of a microsecond; the timed rounds above carry no such timers.

Run::

    PYTHONPATH=. .venv/bin/python benchmarks/control_loop.py [--seconds 3] [--rounds 7]
    PYTHONPATH=. .venv/bin/python benchmarks/control_loop.py --quick --breakdown
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import header, load, row, spread, write_summary

import jointlab
from jointlab.controllers import Commander, run
from jointlab.controllers.commands import ActiveCommand


class Timed:
    """A controller that times another's ``compute`` in CPU time of this thread."""

    def __init__(self, controller: Commander) -> None:
        self.controller = controller
        self.times: list[float] = []

    @property
    def idle(self) -> bool:
        """The wrapped controller's ``idle``."""
        return self.controller.idle

    def reset(self, state: jointlab.ArrayState) -> None:
        """The wrapped controller's ``reset``."""
        self.controller.reset(state)

    def compute(self, state: jointlab.ArrayState) -> jointlab.NJointAction:
        """The wrapped controller's action, timed."""
        start = time.thread_time()
        action = self.controller.compute(state)
        self.times.append(time.thread_time() - start)
        return action


def follow(robot: jointlab.Robot) -> Commander:
    """A Commander following the benchmark's repeating trajectory on ``robot``."""
    description = robot.description
    home = description.home
    span = 0.1 * (description.soft_upper - description.soft_lower)
    waypoints = [
        {"position": home + 0.5 * span, "time_from_start": 0.6},
        {"position": home - 0.5 * span, "time_from_start": 1.4},
        {"position": home, "time_from_start": 2.0},
    ]
    commander = Commander(robot)
    commander.follow_trajectory(waypoints, repeat="forever")
    return commander


def one_round(robot_name: str, seconds: float, control_dt: float) -> dict[str, float]:
    """One run; the compute's median and p99 as fractions of the period, and tracking."""
    url = f"sim://{robot_name}?dt={control_dt}&control_dt={control_dt}"
    with jointlab.connect(url) as robot:
        commander = follow(robot)
        timed = Timed(commander)
        summary = run(robot, timed, duration=seconds)
        times = np.array(timed.times[50:])  # after the first ticks (imports, caches)
        budget = robot.control_dt
        return {
            "median": float(np.median(times)) / budget,
            "p99": float(np.percentile(times, 99)) / budget,
            "max_error": summary.max_tracking_error,
            "rms_error": summary.rms_tracking_error,
        }


@contextmanager
def timing(owner: Any, name: str, times: list[float]) -> Iterator[None]:
    """Within the block, ``owner.name(...)`` appends its CPU time (seconds) to ``times``."""
    original: Callable[..., Any] = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        result = original(*args, **kwargs)
        times.append(time.thread_time() - start)
        return result

    setattr(owner, name, timed)
    try:
        yield
    finally:
        if isinstance(owner, type):
            setattr(owner, name, original)
        else:
            delattr(owner, name)


def breakdown(robot_name: str, seconds: float, control_dt: float) -> dict[str, float]:
    """One instrumented run: median CPU time of each part of a tick, in microseconds."""
    url = f"sim://{robot_name}?dt={control_dt}&control_dt={control_dt}"
    parts: dict[str, list[float]] = {
        name: [] for name in ("state", "commands", "model", "safety", "tick")
    }
    with jointlab.connect(url) as robot:
        commander = follow(robot)
        dynamics = commander.dynamics
        commander.reset(robot.read())
        with (
            timing(ActiveCommand, "tick", parts["commands"]),
            timing(dynamics, "rigid_torque_at_rest", parts["model"]),
            timing(commander.safety, "filter", parts["safety"]),
        ):
            for _ in range(round(seconds / robot.control_dt)):
                state = robot.read()
                start = time.thread_time()
                _ = state.position  # derived here: the one field compute reads every tick
                derived = time.thread_time()
                action = commander.compute(state)
                end = time.thread_time()
                parts["state"].append(derived - start)
                parts["tick"].append(end - derived)
                robot.apply(action)
                robot.step()
    skip = 50  # the first ticks (imports, caches), as in the timed rounds
    medians = {
        name: 1e6 * float(np.median(times[skip:] if len(times) > 10 * skip else times))
        for name, times in parts.items()
    }
    medians["rest"] = medians["tick"] - medians["commands"] - medians["safety"] - medians["model"]
    return medians


def print_breakdown(parts: dict[str, float]) -> None:
    """The per-part table of :func:`breakdown`."""
    print("per-part CPU time of a tick, us (median over one instrumented round's ticks):")
    for label, key in (
        ("state.position, derived on first access", "state"),
        ("commands (trajectory sampling, stall check)", "commands"),
        ("model: g(q) + M(q)·q̈_ref, one inverse dynamics", "model"),
        ("safety layer", "safety"),
        ("rest: feed-forward product, action, bookkeeping", "rest"),
        ("Commander.compute (position derived before)", "tick"),
    ):
        print(f"  {label:50s} {parts[key]:6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="arm6", help="built-in robot name (default arm6)")
    parser.add_argument("--seconds", type=float, default=3.0, help="simulated seconds a round")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (median, spread)")
    parser.add_argument("--control-dt", type=float, default=0.001, help="control period, s")
    parser.add_argument("--quick", action="store_true", help="1 s, 3 rounds")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="add one instrumented round timing each part of a tick",
    )
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.rounds = 1.0, 3
    header("control_loop")
    rounds = [one_round(args.robot, args.seconds, args.control_dt) for _ in range(args.rounds)]
    medians = [r["median"] for r in rounds]
    p99s = [r["p99"] for r in rounds]
    print(
        f"{args.robot}, Commander following a trajectory, control period "
        f"{args.control_dt * 1e3:g} ms, {args.rounds} rounds of {args.seconds:g} s; "
        "compute per tick as % of the period, median [min-max] over rounds"
    )
    print(f"  median tick  {spread(medians, 100)} %   (target <= 5 %)")
    print(f"  p99 tick     {spread(p99s, 100)} %   (target <= 10 %)")
    print(
        f"  tracking error: max {max(r['max_error'] for r in rounds):.2e} rad, "
        f"rms {np.median([r['rms_error'] for r in rounds]):.2e} rad"
    )
    write_summary(
        [
            row("Commander tick median, % of 1 ms", [100 * m for m in medians], "%", "<= 5"),
            row("Commander tick p99, % of 1 ms", [100 * p for p in p99s], "%", "<= 10"),
        ]
    )
    if args.breakdown:
        print_breakdown(breakdown(args.robot, args.seconds, args.control_dt))
    print(f"end {load()}")


if __name__ == "__main__":
    main()
