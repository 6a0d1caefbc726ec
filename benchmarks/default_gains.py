"""Default gains: the per-joint design (diagonal of M at home) against the coupled design.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/default_gains.py [--random 50]
        [--engines pybullet,mujoco]

Both designs are computed in the same run from the same description: ``per-joint`` is the
rule JointLab used before the coupled check (critically damped at 150 rad/s on the diagonal
of the joint-space inertia at home: :func:`jointlab.robots.gains.critical_gains` on
:func:`~jointlab.robots.gains.effective_inertia`), ``coupled`` the loader's default now
(:func:`jointlab.robots.gain_design.design_gains`). Gains a robot file gives are the same in
both. Each robot runs on each engine at dt = 1 ms with each design's gains passed in the
action, holding as the Commander holds (PD to the target plus the model's gravity torque):

* **hold**: 2 s at home from rest: velocity RMS over the joints after 0.5 s (rad/s) and the
  number of physics steps with some joint at its effort limit (``sat``);
* **worst-q**: 2 s at the configuration (home or one of the 24 seeded samples of the coupled
  check) where the per-joint design's one-step map has its largest spectral radius, from
  rest 10 mrad away (the robot lifted 3 m so that no pose meets the ground);
* **step**: every independent joint stepped by +0.05 rad (or -0.05 rad where that stays in
  range) from rest at home, 1 s: RMS tracking error over the second (mrad) and settling time
  (the last time some joint is more than 10 % of the step away, ms).

Rows: every built-in robot and ``arm4``, a four-joint arm written from geometry only (base
yaw, three parallel pitch joints, links 0.12-0.2 m, no gains, no inertials). Then
``--random`` seeded geometry-only chains and trees (``tests/random_robots.py``, effort
limits sized to twice the weight at home) held for 2 s: how many fail (velocity RMS above
0.01 rad/s after 0.5 s, or a saturated step) per design and engine. The last column of each
row is the ratio coupled / per-joint (below 1 is better).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

from jointlab.interface import NJointAction
from jointlab.robots import RobotDescription, builtin_path, builtin_robots, load_robot
from jointlab.robots.dynamics import DynamicsModel
from jointlab.robots.gain_design import (
    SAMPLES,
    coupled_plants,
    one_step_maps,
    sample_configurations,
    spectral_radius,
)
from jointlab.robots.gains import UnstableGainsWarning, critical_gains, effective_inertia
from jointlab.robots.schema import description_from_dict
from jointlab.sim.robot import SimRobot

ARM4 = {
    "name": "arm4",
    "base": {"position": [0.0, 0.0, 0.05], "fixed": True},
    "actuators": [
        {
            "name": "yaw",
            "type": "rotary",
            "axis": [0, 0, 1],
            "length": 0.12,
            "orientation": [0, -1.5708, 0],
            "min": -3,
            "max": 3,
        },
        {
            "name": "shoulder",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.2,
            "orientation": [0, 1.5708, 0],
            "min": -2,
            "max": 2,
            "home": -0.5,
        },
        {
            "name": "elbow",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.18,
            "min": -2.5,
            "max": 2.5,
            "home": 0.6,
        },
        {
            "name": "wrist",
            "type": "rotary",
            "axis": [0, 1, 0],
            "length": 0.12,
            "min": -2,
            "max": 2,
            "home": 0.4,
        },
    ],
}
DT = 1e-3
LABELS = (
    ("hold", "hold vel RMS rad/s"),
    ("sat", "hold saturated steps"),
    ("worst", "worst-q vel RMS rad/s"),
    ("worst_sat", "worst-q saturated"),
    ("rms", "step RMS error mrad"),
    ("settle", "step settling ms"),
    ("step_sat", "step saturated steps"),
)
STEP = 0.05


def per_joint_gains(description: RobotDescription, data: dict | None) -> tuple[np.ndarray, ...]:
    """The per-joint design's gains (the given ones kept), shape ``(dof,)`` each."""
    home = description.apply_coupling(description.home)
    inertia = effective_inertia(description, DynamicsModel(description).joint_inertia(home))
    given = {}
    for spec in (data or {}).get("actuators", []):
        given[spec["name"]] = spec.get("gains", {})
    if data is None:  # built-in: read the file's own gains
        import yaml

        raw = yaml.safe_load(builtin_path(description.name).read_text())
        given = {a["name"]: a.get("gains", {}) for a in raw["actuators"]}
    kp = np.array([given.get(n, {}).get("kp", np.nan) for n in description.joint_names], float)
    kd = np.array([given.get(n, {}).get("kd", np.nan) for n in description.joint_names], float)
    return critical_gains(inertia, description.damping, kp, kd)


def run(
    description: RobotDescription,
    engine: str,
    kp: np.ndarray,
    kd: np.ndarray,
    target: np.ndarray,
    seconds: float,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Hold ``target`` from rest at ``start`` (default home).

    Returns:
        Positions and velocities per physics step, and the number of saturated steps.
    """
    robot = SimRobot(description, engine=engine, dt=DT, gain_check="warn")
    try:
        if start is not None:
            robot.reset(start)
        gravity = DynamicsModel(description).gravity_torque(target)
        robot.apply(NJointAction.TorqueAndPosition(gravity, target, kp, kd))
        limit = description.effort_limit * (1 - 1e-9)
        q, qd, saturated = [], [], 0
        for _ in range(round(seconds / DT)):
            robot.step()
            state = robot.read()
            q.append(state.position)
            qd.append(state.velocity)
            saturated += bool(np.any(np.abs(state.torque) >= limit))
    finally:
        robot.close()
    return np.array(q), np.array(qd), saturated


def figures(
    description: RobotDescription, engine: str, kp: np.ndarray, kd: np.ndarray
) -> dict[str, float]:
    """Hold and step figures of one robot, engine and gain set."""
    independent = ~description.dependent
    home = description.apply_coupling(description.home)
    _, qd, saturated = run(description, engine, kp, kd, home, 2.0)
    hold = float(np.sqrt(np.mean(qd[500:, independent] ** 2)))
    hi = np.array([a.max for a in description.joints])
    step = np.where(home + STEP <= hi, STEP, -STEP) * independent
    target = description.apply_coupling(home + step)
    q, _, step_saturated = run(description, engine, kp, kd, target, 1.0)
    error = (q - target)[:, independent]
    away = np.flatnonzero(np.abs(error).max(axis=1) > 0.1 * STEP)
    # the configuration (home and 24 seeded samples) where the per-joint design's one-step
    # map has its largest spectral radius, held from 10 mrad away
    worst = worst_configuration(description, engine)
    start = description.apply_coupling(np.clip(worst + 0.01, description.lower, description.upper))
    _, qd, worst_saturated = run(lifted(description), engine, kp, kd, worst, 2.0, start)
    return {
        "worst": float(np.sqrt(np.mean(qd[500:, independent] ** 2))),
        "worst_sat": worst_saturated,
        "hold": hold,
        "sat": saturated,
        "rms": float(np.sqrt(np.mean(error**2))) * 1e3,
        "settle": (away[-1] + 1) * DT * 1e3 if away.size else 0.0,
        "step_sat": step_saturated,
    }


def lifted(description: RobotDescription) -> RobotDescription:
    """A fixed-base robot 3 m higher (same dynamics), so that no sampled pose meets the ground."""
    base = description.base
    if not base.fixed:
        return description
    x, y, z = base.position
    return replace(description, base=replace(base, position=(x, y, z + 3.0)))


def worst_configuration(description: RobotDescription, engine: str) -> np.ndarray:
    """Home or the sample where the per-joint design's loop is least stable on ``engine``."""
    plant = next(p for p in coupled_plants(description) if p.engine == engine)
    kp, kd = per_joint_gains(description, None if description.name in builtin_robots() else {})
    independent = ~description.dependent
    radius = spectral_radius(one_step_maps(plant, kp[independent], kd[independent], DT))
    return sample_configurations(description, SAMPLES, 0)[int(np.argmax(radius))]


def ratio(after: float, before: float) -> str:
    if before == 0:
        return "=" if after == 0 else "inf"
    return f"{after / before:.3g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=50, help="random robots to hold")
    parser.add_argument("--engines", default="pybullet,mujoco")
    args = parser.parse_args()
    engines = args.engines.split(",")
    warnings.simplefilter("ignore", UnstableGainsWarning)
    robots: list[tuple[str, RobotDescription, dict | None]] = [
        (name, load_robot(name), None) for name in builtin_robots()
    ]
    robots.append(("arm4", description_from_dict(ARM4, source="<arm4>"), ARM4))
    print(f"{'robot':<16}{'engine':<10}{'figure':<22}{'per-joint':>12}{'coupled':>12}{'ratio':>10}")
    for name, description, data in robots:
        before = per_joint_gains(description, data)
        after = (description.default_kp, description.default_kd)
        for engine in engines:
            old = figures(description, engine, *before)
            new = figures(description, engine, *after)
            for key, label in LABELS:
                print(
                    f"{name:<16}{engine:<10}{label:<22}{old[key]:>12.4g} {new[key]:>11.4g}"
                    f"{ratio(new[key], old[key]):>10}"
                )
    if args.random <= 0:
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from random_robots import random_robot

    failed = {(engine, design): 0 for engine in engines for design in ("per-joint", "coupled")}
    for seed in range(args.random):
        description = random_robot(seed)
        home = description.apply_coupling(description.home)
        designs = {
            "per-joint": per_joint_gains(description, {}),
            "coupled": (description.default_kp, description.default_kd),
        }
        for engine in engines:
            for design, gains in designs.items():
                _, qd, saturated = run(description, engine, *gains, home, 2.0)
                if saturated or np.sqrt(np.mean(qd[500:] ** 2)) > 0.01:
                    failed[(engine, design)] += 1
    for engine in engines:
        print(
            f"random robots on {engine}: {args.random} held 2 s; fail (velocity RMS > 0.01 "
            f"rad/s after 0.5 s or a saturated step): per-joint "
            f"{failed[(engine, 'per-joint')]}, coupled {failed[(engine, 'coupled')]}"
        )


if __name__ == "__main__":
    main()
