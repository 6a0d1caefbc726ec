"""Benchmark: the cost of actuator identification, against peers measured in the same run.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/identification.py [--seconds 8] [--runs 5]

Records one planted-gap excitation of arm6 (``--seconds`` of simultaneous multisine at 1 kHz
on the deterministic planted device), then times, ``--runs`` times each, interleaved:

* **rigid-body torques**: the batched recursive Newton–Euler of ``jointlab.identify`` over
  every row of the log, against ``DynamicsModel.inverse_dynamics`` (the controllers' one
  state per call) on a sample of rows, both per row;
* **replay**: ``jointlab.identify.replay`` of the whole log, against a bare ``SimRobot``
  loop of ``apply`` + ``step`` + ``read`` of the same actions, built beforehand, both per
  control period;
* **fit**: the whole ``fit()`` (alignment, regression, torque constant, three replays for
  the latency), as a multiple of the log's duration (below 1: faster than the robot ran).

Times are CPU time of this process (``time.process_time``), medians with the spread
(min-max) over the runs; the load average is printed at start and end. On a shared machine
trust the ratios, not the absolute figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import jointlab
from jointlab.controllers import DynamicsModel
from jointlab.identify import connect_planted, excitation, fit, plant, record_excitation
from jointlab.identify.data import prepare
from jointlab.identify.replay import replay
from jointlab.identify.rigid_body import rigid_body_torque
from jointlab.interface import NJointAction
from jointlab.sim import SimRobot


def cpu(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def spread(values: list[float], scale: float = 1.0, unit: str = "") -> str:
    values = [v * scale for v in values]
    return f"{statistics.median(values):.4g} {unit} (min {min(values):.4g}, max {max(values):.4g})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="excitation length, s")
    parser.add_argument("--runs", type=int, default=5, help="repeats of each measurement")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    nominal = jointlab.load_robot("arm6")
    planted = plant(nominal, static_friction=1.5, damping=1.4, delay=1, torque_constant=1.15)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "excite.npz"
        with connect_planted(planted, nominal) as device:
            record_excitation(
                device, excitation(nominal, duration=args.seconds, sequential=False), path
            )
        data = prepare(path, nominal)
        rows = data.rows
        sample = np.linspace(0, rows - 2, 200).astype(int)
        model = DynamicsModel(nominal)
        q, qd, qdd = data.position[:-1], data.velocity[:-1], data.acceleration[:-1]
        commands = data.commands
        actions = [
            NJointAction.from_validated(
                commands.torque[k].copy(),
                commands.position[k].copy(),
                commands.kp[k].copy(),
                commands.kd[k].copy(),
                commands.velocity[k].copy(),
            )
            for k in range(rows)
        ]

        def per_sample() -> None:
            for k in sample:
                model.inverse_dynamics(q[k], qd[k], qdd[k])

        def bare_loop() -> None:
            with SimRobot(planted) as robot:
                for action in actions:
                    robot.apply(action)
                    robot.step()
                    robot.read()

        names = ("batched", "single", "replay", "bare", "fit")
        times: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(args.runs):
            times["batched"].append(cpu(lambda: rigid_body_torque(nominal, q, qd, qdd)) / len(q))
            times["single"].append(cpu(per_sample) / len(sample))
            times["replay"].append(cpu(lambda: replay(data, planted)) / rows)
            times["bare"].append(cpu(bare_loop) / rows)
            times["fit"].append(cpu(lambda: fit(path, nominal)) / (rows * data.dt))
    batched = statistics.median(times["batched"])
    single = statistics.median(times["single"])
    print(f"log: {rows} rows of arm6 at 1 kHz ({rows * data.dt:.1f} s), {args.runs} runs")
    print(
        f"rigid-body torques per row: batched {spread(times['batched'], 1e6, 'us')}, "
        f"one state per call {spread(times['single'], 1e6, 'us')}: "
        f"{single / batched:.0f}x faster batched"
    )
    replayed, bare = statistics.median(times["replay"]), statistics.median(times["bare"])
    print(
        f"replay per control period: {spread(times['replay'], 1e6, 'us')}, bare SimRobot "
        f"loop {spread(times['bare'], 1e6, 'us')}: {replayed / bare:.2f}x"
    )
    print(f"fit: {spread(times['fit'], 1.0, 's of CPU per second of log')}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
