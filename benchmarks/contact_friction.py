"""Contact friction on PyBullet and MuJoCo: the same declared coefficients, the same outcome.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/contact_friction.py [--push-episodes 100]

Three rows, each measured on both engines in the same run, printed with the ratio MuJoCo /
PyBullet (1 is parity; the issue's bar is within 5 %):

* **slope**: a 0.5 kg box (10 x 10 x 4 cm, coefficient ``box``) from rest on a static slope
  (coefficient ``slope``); the stick/slip angle (the smallest angle at which it slides more
  than 3 cm in 1 s, bisection to 0.05 degrees) against ``atan(box * slope)``, the product
  rule (:func:`jointlab.sim.scene.combined_friction`). Below the angle the box creeps at most
  0.5 mm in 1 s (44 degrees on 1.0 on 1.0; 1.3 cm with MuJoCo's default soft contacts, before
  :mod:`jointlab.sim.mujoco.contact`); a slide accelerates (12 cm at 46 degrees).
* **ssl_robot**: the wheeled robot (planar drive joints ``base_x``, ``base_y``, ``base_w``)
  driving a fixed program with its default gains: a 1.5 s straight-line ramp of its position
  targets to (0.6 m, 0.4 m, 1.0 rad), then 0.5 s holding; the final pose and the path's
  RMS tracking error.
* **Push-v0** (``--push-episodes`` > 0): the shipped policy
  ``notebooks/models/sim_to_sim_push/mujoco-nominal`` (PPO, trained 3 M steps on MuJoCo)
  evaluated on both engines over the same seeded episodes: success rate with its Wilson 95 %
  interval. Needs the ``rl`` extra.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from jointlab.interface import NJointAction
from jointlab.sim import World
from jointlab.sim.robot import SimRobot
from jointlab.sim.scene import combined_friction

ENGINES = ("pybullet", "mujoco")
ROOT = Path(__file__).resolve().parent.parent
PUSH_POLICY = ROOT / "notebooks" / "models" / "sim_to_sim_push" / "mujoco-nominal" / "model.zip"


def slide(engine: str, angle: float, box: float, slope: float) -> float:
    """Metres the box slides in 1 s from rest on a slope of ``angle`` radians."""
    world = World(dt=0.001, engine=engine)
    try:
        world.add_box((1.0, 0.5, 0.05), (0.0, 0.0, 0.5), (0.0, angle, 0.0), friction=slope)
        normal = np.array([math.sin(angle), 0.0, math.cos(angle)])
        centre = np.array([0.0, 0.0, 0.5]) + normal * (0.05 + 0.02 + 1e-4)
        body = world.add_box(
            (0.05, 0.05, 0.02), tuple(centre), (0.0, angle, 0.0), mass=0.5, friction=box
        )
        start = np.array(world.body_pose(body)[0])
        for _ in range(1000):
            world.step()
        return float(np.linalg.norm(np.array(world.body_pose(body)[0]) - start))
    finally:
        world.close()


def slip_angle(engine: str, box: float, slope: float) -> float:
    """The stick/slip angle in degrees (bisection on the 1 cm-in-1 s criterion)."""
    lo, hi = 0.0, 70.0
    while hi - lo > 0.05:
        mid = 0.5 * (lo + hi)
        if slide(engine, math.radians(mid), box, slope) > 0.03:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def drive(engine: str) -> tuple[np.ndarray, float]:
    """ssl_robot's final (x, y, w) and the RMS tracking error of the drive joints."""
    with SimRobot("ssl_robot", engine=engine, dt=0.001) as robot:
        description = robot.description
        drive_joints = [description.joint_names.index(n) for n in ("base_x", "base_y", "base_w")]
        home = description.apply_coupling(description.home)
        goal = np.array([0.6, 0.4, 1.0])
        errors = []
        for step in range(2000):
            fraction = min(1.0, (step + 1) / 1500)
            target = home.copy()
            target[drive_joints] = home[drive_joints] + fraction * (goal - home[drive_joints])
            robot.apply(NJointAction.Position(target))
            robot.step()
            errors.append(robot.read().position[drive_joints] - target[drive_joints])
        final = robot.read().position[drive_joints]
    return final, float(np.sqrt(np.mean(np.square(errors))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--push-episodes", type=int, default=100)
    args = parser.parse_args()
    print(f"{'row':<34}{'pybullet':>12}{'mujoco':>12}{'ratio':>8}{'expected':>10}")
    for box, slope in ((0.3, 1.0), (0.5, 1.0), (0.5, 0.8), (1.0, 1.0)):
        angles = [slip_angle(engine, box, slope) for engine in ENGINES]
        expected = math.degrees(math.atan(combined_friction(box, slope)))
        print(
            f"{f'slope: slip angle deg, {box} on {slope}':<34}{angles[0]:>12.2f}"
            f"{angles[1]:>12.2f}{angles[1] / angles[0]:>8.3f}{expected:>10.2f}"
        )
    drives = [drive(engine) for engine in ENGINES]
    for k, name in enumerate(("x m", "y m", "w rad")):
        first, second = drives[0][0][k], drives[1][0][k]
        print(
            f"{f'ssl_robot program: final {name}':<34}{first:>12.4f}{second:>12.4f}"
            f"{second / first:>8.3f}"
        )
    print(
        f"{'ssl_robot program: RMS error m|rad':<34}{drives[0][1]:>12.4g}{drives[1][1]:>12.4g}"
        f"{drives[1][1] / drives[0][1]:>8.3f}"
    )
    if args.push_episodes <= 0:
        return
    from jointlab.envs.evaluation import evaluate_policy

    rates = []
    for engine in ENGINES:
        result = evaluate_policy(
            PUSH_POLICY,
            f"sim://planar2?engine={engine}",
            env_id="jointlab/Push-v0",
            env_kwargs={"robot": "planar2", "action_mode": "position", "success_threshold": 0.10},
            episodes=args.push_episodes,
            seed=0,
        )
        low, high = result.success_interval
        rates.append((result.success_rate, low, high, result.mean_return))
    (a, a_lo, a_hi, a_ret), (b, b_lo, b_hi, b_ret) = rates
    print(
        f"{f'Push-v0 success, {args.push_episodes} episodes':<34}{a:>12.3f}{b:>12.3f}"
        f"{(b / a if a else float('nan')):>8.3f}"
    )
    intervals = f"{f'{a_lo:.3f}-{a_hi:.3f}':>12}{f'{b_lo:.3f}-{b_hi:.3f}':>12}"
    print(f"{'  Wilson 95 % interval':<34}{intervals}")
    print(f"{'  mean return':<34}{a_ret:>12.2f}{b_ret:>12.2f}")


if __name__ == "__main__":
    main()
