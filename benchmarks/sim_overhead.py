"""Overhead of ``SimRobot`` over a hand-written PyBullet torque loop, per physics step.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/sim_overhead.py [--steps N] [--runs N] [--breakdown]

For ``arm6`` and a 30-actuator chain it times, in one process and interleaved:

* **raw**: the plain PyBullet loop on the same URDF (``description.to_urdf()``) in the same
  kind of world (ground plane, same ``dt``, default motors disabled, no link damping):
  ``getJointStates`` -> numpy PD -> ``setJointMotorControlArray(TORQUE_CONTROL)`` ->
  ``stepSimulation``, passing the numpy torque array as most code does;
* **raw-list**: the same loop tuned by hand (torques passed as a Python list);
* **SimRobot** with ``apply + step + read`` every control period, ``control_dt = dt`` and
  ``control_dt = 20 dt`` (a constant ``Position(home)`` action, as the raw loop's PD).

Times are CPU time of this process (``time.process_time``: PyBullet DIRECT runs in this
thread), so other jobs on a shared machine disturb them less than wall-clock time would.
Each figure is the median over ``--runs`` runs of physics steps per second; the ratio is
SimRobot's time per physics step over raw's (target <= 1.15). Note that SimRobot does more
physics than the raw loop: the effort clamp always, and on ``arm6`` the DC-motor curve and
Coulomb friction of the description.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable

import numpy as np
import pybullet
import pybullet_data

from jointlab.interface import NJointAction
from jointlab.robots import RobotDescription, load_robot
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
    return RobotDescription.from_dict({"name": f"chain{n}", "actuators": actuators})


def frictionless_ideal(description: RobotDescription) -> RobotDescription:
    """``description`` with ideal motors and no Coulomb friction: the raw loop's physics."""
    data = description.to_dict()
    for actuator in data["actuators"]:
        if "motor" in actuator:
            actuator["motor"] = {"model": "ideal"}
        if "dynamics" in actuator:
            actuator["dynamics"]["static_friction"] = 0.0
    data["name"] = f"{description.name}-ideal"
    return RobotDescription.from_dict(data)


def raw_loop(description: RobotDescription, steps: int, as_list: bool) -> float:
    """Physics steps per second of the hand-written loop."""
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
                handle.write(description.to_urdf())
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
            body, joints, pybullet.VELOCITY_CONTROL, forces=[0.0] * len(joints),
            physicsClientId=client,
        )  # fmt: skip
        kp, kd = np.array(description.default_kp), np.array(description.default_kd)
        home = np.array(description.home)
        mode = pybullet.TORQUE_CONTROL
        start = time.process_time()
        for _ in range(steps):
            states = pybullet.getJointStates(body, joints, physicsClientId=client)
            q = np.array([s[0] for s in states])
            qd = np.array([s[1] for s in states])
            tau = kp * (home - q) - kd * qd
            pybullet.setJointMotorControlArray(
                body, joints, mode, forces=tau.tolist() if as_list else tau,
                physicsClientId=client,
            )  # fmt: skip
            pybullet.stepSimulation(physicsClientId=client)
        return steps / (time.process_time() - start)
    finally:
        pybullet.disconnect(client)


def sim_loop(description: RobotDescription, steps: int, every: int) -> float:
    """Physics steps per second of SimRobot with apply + step + read per control period."""
    with SimRobot(description, dt=0.001, control_dt=0.001 * every) as robot:
        action = NJointAction.Position(description.home)
        apply, step, read = robot.apply, robot.step, robot.read
        periods = steps // every
        start = time.process_time()
        for _ in range(periods):
            apply(action)
            step()
            read()
        return periods * every / (time.process_time() - start)


def breakdown(description: RobotDescription, number: int = 20000) -> None:
    """Print microseconds per call of each part of SimRobot's period (``--breakdown``).

    The robot holds home under its PD meanwhile; ``stepSimulation`` itself is the rest of
    ``TorqueLoop.run(1)`` (not timed alone: without torques the robot would fall).
    """
    with SimRobot(description) as robot:
        robot.apply(NJointAction.Position(description.home))
        loop, body = robot._loop, robot._body
        cid, body_id, joints = body.client_id, body.body_id, body.indices
        tau = np.zeros(robot.dof)
        parts = {
            "pybullet.getJointStates": lambda: pybullet.getJointStates(
                body_id, joints, physicsClientId=cid
            ),
            "setJointMotorControlArray(list)": lambda: pybullet.setJointMotorControlArray(
                body_id, joints, pybullet.TORQUE_CONTROL, forces=tau.tolist(), physicsClientId=cid
            ),
            "setJointMotorControlArray(numpy)": lambda: pybullet.setJointMotorControlArray(
                body_id, joints, pybullet.TORQUE_CONTROL, forces=tau, physicsClientId=cid
            ),
            "torque law (PD, delay, clamp, friction)": lambda: loop.law(loop.q, loop.qd),
            "TorqueLoop.run(1) (one physics step)": lambda: loop.run(1),
            "SimRobot.step() (one physics step)": robot.step,
            "SimRobot.read() (builds ArrayState)": lambda: (
                setattr(robot, "_state", None),
                robot.read(),
            ),
        }
        print(f"\n{description.name}: microseconds per call (median of 5 x {number})")
        for label, call in parts.items():
            runs = []
            for _ in range(5):
                start = time.process_time()
                for _ in range(number):
                    call()
                runs.append((time.process_time() - start) / number * 1e6)
            print(f"  {label:42s} {statistics.median(runs):6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000, help="physics steps per run")
    parser.add_argument("--runs", type=int, default=5, help="runs per case (median)")
    parser.add_argument(
        "--breakdown", action="store_true", help="also time each part of a control period"
    )
    args = parser.parse_args()
    arm6 = load_robot("arm6")
    robots = {"arm6": arm6, "arm6-ideal": frictionless_ideal(arm6), "chain30": chain(30)}
    cases: dict[str, Callable[[RobotDescription], float]] = {
        "raw (numpy forces)": lambda d: raw_loop(d, args.steps, as_list=False),
        "raw-list (tuned)": lambda d: raw_loop(d, args.steps, as_list=True),
        "SimRobot control_dt=dt": lambda d: sim_loop(d, args.steps, 1),
        "SimRobot control_dt=20dt": lambda d: sim_loop(d, args.steps, 20),
    }
    for name, description in robots.items():
        for case in cases.values():  # warm-up (imports, caches)
            case(description)
        rates: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.runs):
            for label, case in cases.items():
                rates[label].append(case(description))
        median = {k: statistics.median(v) for k, v in rates.items()}
        raw, tuned = median["raw (numpy forces)"], median["raw-list (tuned)"]
        print(f"\n{name} ({description.dof} joints), {args.steps} steps x {args.runs} runs")
        for label, rate in median.items():
            line = f"  {label:26s} {rate:9.0f} steps/s  {1e6 / rate:6.2f} us/step"
            if label.startswith("SimRobot"):
                line += f"   ratio {raw / rate:5.3f} (vs raw)  {tuned / rate:5.3f} (vs raw-list)"
            print(line)
        if args.breakdown:
            breakdown(description)


if __name__ == "__main__":
    main()
