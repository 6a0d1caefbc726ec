"""Benchmark: Commander + trajectory on arm6 at 1 kHz control.

Measures the controller's compute time per tick (``Commander.compute``: command sampling,
gravity compensation, action building, safety layer) as a fraction of the 1 ms control
budget. Target: median < 10 % of the budget.

Run::

    PYTHONPATH=. .venv/bin/python benchmarks/control_loop.py [--seconds 5] [--robot arm6]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import jointlab
from jointlab.controllers import Commander, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="arm6", help="built-in robot name (default arm6)")
    parser.add_argument("--seconds", type=float, default=5.0, help="simulated seconds to run")
    parser.add_argument("--control-dt", type=float, default=0.001, help="control period, s")
    args = parser.parse_args()

    url = f"sim://{args.robot}?dt={args.control_dt}&control_dt={args.control_dt}"
    with jointlab.connect(url) as robot:
        description = robot.description
        home = description.home
        span = 0.1 * (description.soft_upper - description.soft_lower)
        waypoints = [
            {"position": home + 0.5 * span, "time_from_start": 0.6},
            {"position": home - 0.5 * span, "time_from_start": 1.4},
            {"position": home, "time_from_start": 2.0},
        ]
        commander = Commander(robot)
        handle = commander.follow_trajectory(waypoints, repeat="forever")
        started = time.perf_counter()
        summary = run(robot, commander, duration=args.seconds)
        wall = time.perf_counter() - started
        budget = robot.control_dt
        print(f"robot {args.robot}, {robot.dof} joints, control period {budget * 1e3:.3g} ms, "
              f"{summary.ticks} ticks ({summary.duration:.2f} s simulated in {wall:.2f} s wall), "
              f"python {platform.python_version()}, numpy {np.__version__}")
        print(f"command {handle.verb} id {handle.command_id}: {handle.status.value}")
        for label, value in (
            ("median", summary.compute_time_median),
            ("p99", summary.compute_time_p99),
            ("max", summary.compute_time_max),
        ):
            print(f"compute time {label:>6}: {value * 1e6:8.1f} us = {100 * value / budget:5.1f} % "
                  "of the budget")
        print(f"tracking error: max {summary.max_tracking_error:.2e} rad, "
              f"rms {summary.rms_tracking_error:.2e} rad")
        print(f"loop rate {summary.achieved_rate:.0f} ticks/s wall (sim + controller)")
        verdict = "met" if summary.compute_time_median < 0.1 * budget else "NOT met"
        print(f"target median < 10 % of the budget: {verdict}")


if __name__ == "__main__":
    main()
