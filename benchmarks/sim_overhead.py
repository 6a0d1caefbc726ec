"""Overhead of ``SimRobot`` over a hand-written PyBullet torque loop, per physics step.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/sim_overhead.py [--steps N] [--rounds N] [--quick]

For arm6 with ideal motors (the raw loop's physics), arm6 as described (DC-motor curve and
Coulomb friction) and a 30-actuator chain, each round times, interleaved in one process:

* **raw**: the plain PyBullet loop on the same URDF (``description_to_urdf(description)``) in
  the same kind of world (ground plane, same ``dt``, default motors disabled, no link
  damping): per
  physics step ``getJointStates`` -> numpy PD towards this period's target ->
  ``setJointMotorControlArray(TORQUE_CONTROL)`` (numpy forces, as most code passes them)
  -> ``stepSimulation``; **raw-list** passes the forces as a list (tuned by hand);
* **user loop**: what a user's controller writes: every control period a new
  ``NJointAction.Position(target)`` from a numpy target, ``apply``, ``step``, ``read``, at
  ``control_dt = dt`` and ``20 dt``; the targets are the raw loop's (a slow sine around home);
* **reused action**: the same, applying one action object every period (a controller that
  holds a target; ``apply`` of the same object is free).

Times are CPU time of this process (``time.process_time``: PyBullet DIRECT runs in this
thread). Ratios are paired: each round divides a case's time per physics step by the raw
loop's of the same round; the report gives the median ratio with the lowest and highest
round in brackets, ratios first, then the absolute figures (this machine's) and the cost
of each part of a period. Targets (arm6, ideal motors): user loop <= 1.15x raw at one physics
step per period and <= 1.03x at 20; ``Position`` construction and ``apply`` of a new action
<= 5 us, ``read`` <= 2 us. arm6's DC-motor and friction law is reported separately (physics
the raw loop does not do).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pybullet
import pybullet_data

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import header, load, per_call, row, spread, write_summary

from jointlab.interface import NJointAction
from jointlab.robots import (
    RobotDescription,
    description_from_dict,
    description_to_dict,
    description_to_urdf,
    load_robot,
)
from jointlab.sim import SimRobot


def chain(n: int = 30) -> RobotDescription:
    """A serial chain of ``n`` rotary actuators alternating z and y axes."""
    actuators = [
        {
            "name": f"j{i}",
            "type": "rotary",
            "axis": [0, 0, 1] if i % 2 == 0 else [0, 1, 0],
            "length": 0.05,
            "orientation": [0, -1.5707963267948966, 0] if i == 0 else [0, 0, 0],
            "min": -2.5,
            "max": 2.5,
            "home": 0.0 if i % 2 == 0 else 0.05,
            "limits": {"effort": 20.0},
            "dynamics": {"damping": 0.01},
            "link": {"mass": 0.1, "radius": 0.01},
            "gains": {"kp": 50.0, "kd": 0.5},
        }
        for i in range(n)
    ]
    return description_from_dict({"name": f"chain{n}", "actuators": actuators})


def frictionless_ideal(description: RobotDescription) -> RobotDescription:
    """``description`` with ideal motors and no Coulomb friction: the raw loop's physics."""
    data = description_to_dict(description)
    for actuator in data["actuators"]:
        if "motor" in actuator:
            actuator["motor"] = {"model": "ideal"}
        if "dynamics" in actuator:
            actuator["dynamics"]["static_friction"] = 0.0
    data["name"] = f"{description.name}-ideal"
    return description_from_dict(data)


def targets(description: RobotDescription, periods: int) -> np.ndarray:
    """Position targets of each period, ``(periods, dof)``: a slow sine around home."""
    span = 0.05 * (description.upper - description.lower)
    phase = np.sin(np.linspace(0.0, 2 * np.pi, periods))[:, None]
    return description.home + np.where(np.isfinite(span), span, 0.1) * phase


def raw_loop(description: RobotDescription, steps: int, every: int, as_list: bool) -> float:
    """CPU seconds per physics step of the hand-written loop."""
    client = pybullet.connect(pybullet.DIRECT)
    try:
        pybullet.setTimeStep(0.001, physicsClientId=client)
        pybullet.setGravity(0, 0, -9.81, physicsClientId=client)
        pybullet.loadURDF(
            os.path.join(pybullet_data.getDataPath(), "plane.urdf"), physicsClientId=client
        )
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "robot.urdf")
            with open(path, "w") as handle:
                handle.write(description_to_urdf(description))
            body = pybullet.loadURDF(
                path,
                basePosition=description.base.position,
                useFixedBase=True,
                flags=pybullet.URDF_USE_INERTIA_FROM_FILE,
                physicsClientId=client,
            )
        names = [
            pybullet.getJointInfo(body, j, physicsClientId=client)[1].decode()
            for j in range(pybullet.getNumJoints(body, physicsClientId=client))
        ]
        joints = [names.index(n) for n in description.joint_names]
        for link in range(-1, len(names)):
            pybullet.changeDynamics(
                body, link, linearDamping=0, angularDamping=0, physicsClientId=client
            )
        for j, q in zip(joints, description.home.tolist(), strict=True):
            pybullet.resetJointState(body, j, q, 0.0, physicsClientId=client)
        pybullet.setJointMotorControlArray(
            body,
            joints,
            pybullet.VELOCITY_CONTROL,
            forces=[0.0] * len(joints),
            physicsClientId=client,
        )
        kp, kd = np.array(description.default_kp), np.array(description.default_kd)
        goals = targets(description, steps // every)
        mode = pybullet.TORQUE_CONTROL
        start = time.process_time()
        for step in range(steps):
            target = goals[step // every]
            states = pybullet.getJointStates(body, joints, physicsClientId=client)
            q = np.array([s[0] for s in states])
            qd = np.array([s[1] for s in states])
            tau = kp * (target - q) - kd * qd
            pybullet.setJointMotorControlArray(
                body,
                joints,
                mode,
                forces=tau.tolist() if as_list else tau,
                physicsClientId=client,
            )
            pybullet.stepSimulation(physicsClientId=client)
        return (time.process_time() - start) / steps
    finally:
        pybullet.disconnect(client)


def user_loop(description: RobotDescription, steps: int, every: int, reuse: bool) -> float:
    """CPU seconds per physics step of SimRobot driven as a user's controller drives it."""
    with SimRobot(description, dt=0.001, control_dt=0.001 * every) as robot:
        periods = steps // every
        goals = targets(description, periods)
        apply, step, read = robot.apply, robot.step, robot.read
        position = NJointAction.Position
        start = time.process_time()
        if reuse:
            action = position(description.home)
            for _ in range(periods):
                apply(action)
                step()
                read()
        else:
            for target in goals:
                apply(position(target))
                step()
                read()
        return (time.process_time() - start) / (periods * every)


def parts(description: RobotDescription, number: int, repeats: int) -> dict[str, list[float]]:
    """CPU seconds per call of each part of a period (median over ``repeats``)."""
    with SimRobot(description) as robot:
        goals = targets(description, 64)
        actions = [NJointAction.Position(g) for g in goals]
        robot.apply(actions[0])
        loop = robot._loop
        cycle = iter(range(1 << 62))

        def apply_new() -> None:
            robot.apply(actions[next(cycle) & 63])

        def fresh_read() -> None:
            robot._state = None  # what step() does: the next read builds a new state
            robot.read()

        target = goals[3]
        return {
            "NJointAction.Position(target)": per_call(
                lambda: NJointAction.Position(target), number, repeats
            ),
            "apply(new action)": per_call(apply_new, number, repeats),
            "read()": per_call(fresh_read, number, repeats),
            "read().position (first access)": per_call(
                lambda: (setattr(robot, "_state", None), robot.read().position), number, repeats
            ),
            "torque law per physics step": per_call(
                lambda: loop.law(loop.q, loop.qd), number, repeats
            ),
            "step() (one physics step)": per_call(robot.step, number // 4, repeats),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000, help="physics steps per run")
    parser.add_argument("--rounds", type=int, default=7, help="rounds (median, spread)")
    parser.add_argument("--quick", action="store_true", help="2000 steps, 3 rounds")
    args = parser.parse_args()
    if args.quick:
        args.steps, args.rounds = 2000, 3
    header("sim_overhead")
    arm6 = load_robot("arm6")
    robots = {"arm6-ideal": frictionless_ideal(arm6), "arm6": arm6, "chain30": chain(30)}
    steps = args.steps
    cases: dict[str, Callable[[RobotDescription], float]] = {
        "raw (numpy forces)": lambda d: raw_loop(d, steps, 1, as_list=False),
        "raw-list (tuned)": lambda d: raw_loop(d, steps, 1, as_list=True),
        "user loop, 1 step/period": lambda d: user_loop(d, steps, 1, reuse=False),
        "user loop, 20 steps/period": lambda d: user_loop(d, steps, 20, reuse=False),
        "reused action, 1 step/period": lambda d: user_loop(d, steps, 1, reuse=True),
        "reused action, 20 steps/period": lambda d: user_loop(d, steps, 20, reuse=True),
    }
    summary: list[dict[str, object]] = []
    for name, description in robots.items():
        raw_loop(description, 400, 1, as_list=False)  # warm-up (imports, caches)
        user_loop(description, 400, 1, reuse=False)
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.rounds):
            for label, case in cases.items():
                times[label].append(case(description))
        raw, tuned = times["raw (numpy forces)"], times["raw-list (tuned)"]
        print(
            f"\n{name} ({description.dof} joints), {steps} physics steps x {args.rounds} rounds;"
            " ratio = time per physics step / raw's, median [min-max] over rounds"
        )
        for label, values in times.items():
            line = f"  {label:32s}"
            if label.startswith(("user", "reused")):
                line += f" {spread([v / r for v, r in zip(values, raw, strict=True)])}x raw"
                line += f"  {spread([v / r for v, r in zip(values, tuned, strict=True)])}x list"
            line += f"   {spread(values, 1e6)} us/step"
            print(line)
        ratios = {
            label: [v / r for v, r in zip(values, raw, strict=True)]
            for label, values in times.items()
        }
        if name == "arm6-ideal":
            summary += [
                row(
                    "user loop / raw, arm6 ideal, 1 step",
                    ratios["user loop, 1 step/period"],
                    "x",
                    "<= 1.15",
                ),
                row(
                    "user loop / raw, arm6 ideal, 20 steps",
                    ratios["user loop, 20 steps/period"],
                    "x",
                    "<= 1.03",
                ),
            ]
        elif name == "arm6":
            summary.append(
                row(
                    "user loop / raw, arm6 DC+friction, 1 step",
                    ratios["user loop, 1 step/period"],
                    "x",
                )
            )
        if name != "chain30":
            print(f"  parts of a period (us per call, median [min-max] of {args.rounds}):")
            number = max(1000, steps // 2)
            measured = parts(description, number, args.rounds)
            for label, values in measured.items():
                print(f"    {label:34s} {spread(values, 1e6)}")
            micro = [1e6 * v for v in measured["torque law per physics step"]]
            if name == "arm6-ideal":
                summary += [
                    row(
                        "NJointAction.Position construction, us",
                        [1e6 * v for v in measured["NJointAction.Position(target)"]],
                        "us",
                        "<= 5",
                    ),
                    row(
                        "apply() of a new action, us",
                        [1e6 * v for v in measured["apply(new action)"]],
                        "us",
                        "<= 5",
                    ),
                    row("read(), us", [1e6 * v for v in measured["read()"]], "us", "<= 2"),
                    row("torque law per physics step, ideal motors, us", micro, "us"),
                ]
            else:
                summary.append(
                    row("torque law per physics step, DC motor + friction, us", micro, "us")
                )
    write_summary(summary)
    print(f"\nend {load()}")


if __name__ == "__main__":
    main()
