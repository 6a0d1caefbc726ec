"""Pushing on PyBullet and MuJoCo: the contact dynamics and the arm, measured on both engines.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/push_parity.py

Every row is measured on both engines in the same run and printed with the ratio MuJoCo /
PyBullet (1 is parity). Deterministic: no randomness, no wall clock.

* **recovery**: the Push-v0 box (8 x 8 x 14 cm, 0.2 kg) released at rest ``depth`` mm deep
  in the ground: its largest upward speed (m/s) while the contact pushes it out. This is the
  contacts' stiffness and damping as seen by a body: Bullet's penetration recovery, and
  MuJoCo's ``solref`` (:mod:`jointlab.sim.mujoco.contact`).
* **push**: planar2 sweeps its shoulder at ``v`` rad/s (position targets every 20 ms, default
  gains, elbow held) into the Push-v0 box standing at ``r`` m on the x axis, turned ``yaw``
  degrees; after 1.2 s: how far the box moved (m) and its largest tilt (degrees). The box is
  taller than wide and is hit above its centre with friction 1 at the arm and at the ground:
  it wedges against the arm (tilted 10-40 degrees, the arm stalled) or topples (about 90).
  Edge on (yaw 45) with friction 1 on both contacts the wedge is exactly at the limit of
  sliding (``N·(1 - μ²) > μ·m·g`` fails by 0), so those rows fall either way on a detail.
  With MuJoCo's default soft contacts (``solref`` 20 ms, ``solimp`` 0.9-0.95, pyramidal cone)
  every wedge crept open and the box toppled in all 18 rows (14-83 cm) where PyBullet's box
  toppled in 1 (median travel gap 11 cm); with :mod:`jointlab.sim.mujoco.contact` it
  topples in 6 (median gap 1.9 cm; 5.0 cm since PyBullet's objects have friction anchors).
* **arm**: planar2 alone, from rest at its home pose, with its full effort (10, -6 N·m) on
  both joints for 20 ms: the joint speeds reached (rad/s). Not contacts: the arm's own mass
  matrix, which differs because PyBullet carries each joint's armature in the link it moves
  (:func:`jointlab.robots.inertials.realised_inertial`), so the elbow's rotor is also felt
  by the shoulder, where MuJoCo's joint armature is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from jointlab.interface import NJointAction
from jointlab.sim import World
from jointlab.sim.robot import SimRobot

ENGINES = ("pybullet", "mujoco")
#: The Push-v0 box of planar2: half extents (m) and mass (kg).
BOX_HALF = (0.04, 0.04, 0.07)
BOX_MASS = 0.2


def recovery(engine: str, depth: float, dt: float = 0.001) -> float:
    """Largest upward speed (m/s) of the box released ``depth`` m deep in the ground."""
    with World(engine=engine, dt=dt) as world:
        box = world.add_box(BOX_HALF, (0.0, 0.0, BOX_HALF[2] - depth), mass=BOX_MASS)
        fastest = 0.0
        for _ in range(round(0.2 / dt)):
            world.step()
            fastest = max(fastest, float(world.body_velocity(box)[0][2]))
    return fastest


@dataclass(frozen=True)
class Push:
    """One scripted push: shoulder speed (rad/s), box distance (m), elbow (rad), yaw (rad)."""

    speed: float
    radius: float
    elbow: float = 0.0
    yaw: float = 0.0

    @property
    def label(self) -> str:
        """The row's name, e.g. ``v 1 r 0.42 elbow 0 yaw 20``."""
        return (
            f"v {self.speed:g} r {self.radius:g} elbow {self.elbow:g} "
            f"yaw {math.degrees(self.yaw):.0f}"
        )


#: The pushes of the table (the arm starts 0.6 rad before the box, clear of it).
PUSHES = tuple(
    Push(speed, radius, elbow, yaw)
    for speed in (1.0, 3.0)
    for radius, elbow in ((0.42, 0.0), (0.45, 0.8), (0.5, 0.4))
    for yaw in (0.0, math.radians(20.0), math.radians(45.0))
)


def push(engine: str, case: Push, seconds: float = 1.2) -> tuple[float, float]:
    """Box travel (m, horizontal) and largest tilt (degrees) of one scripted push."""
    start_angle = -0.6
    with World(engine=engine, dt=0.001) as world:
        robot = SimRobot("planar2", world=world)
        robot.reset(np.array([start_angle, case.elbow]), np.zeros(2))
        box = world.add_box(
            BOX_HALF, (case.radius, 0.0, BOX_HALF[2]), (0.0, 0.0, case.yaw), mass=BOX_MASS
        )
        start = world.body_pose(box)[0]
        tilt = 0.0
        for step in range(round(seconds / 0.001)):
            if step % 20 == 0:
                shoulder = min(start_angle + case.speed * step * 0.001, -start_angle)
                robot.apply(NJointAction.Position(np.array([shoulder, case.elbow])))
            world.step()
            roll, pitch, _ = world.body_pose(box)[1]
            tilt = max(tilt, abs(roll), abs(pitch))
        travel = float(np.linalg.norm((world.body_pose(box)[0] - start)[:2]))
    return travel, math.degrees(tilt)


def arm_speeds(engine: str, seconds: float = 0.02) -> np.ndarray:
    """planar2's joint speeds (rad/s) after ``seconds`` of full effort from rest at home."""
    with World(engine=engine, dt=0.001, ground=False) as world:
        robot = SimRobot("planar2", world=world)
        effort = robot.description.effort_limit * np.array([1.0, -1.0])
        robot.apply(NJointAction.Torque(effort))
        for _ in range(round(seconds / 0.001)):
            robot.step()
        return robot.read().velocity


def ratio(pybullet: float, mujoco: float) -> str:
    """``mujoco / pybullet`` formatted, or ``-`` when PyBullet's value is 0."""
    return f"{mujoco / pybullet:8.3f}" if pybullet else f"{'-':>8}"


def main() -> None:
    print(f"{'row':<40}{'pybullet':>10}{'mujoco':>10}{'ratio':>8}")
    for depth in (0.001, 0.003, 0.006):
        a, b = (recovery(engine, depth) for engine in ENGINES)
        print(
            f"{f'recovery: {depth * 1000:g} mm deep, up m/s':<40}{a:>10.4f}{b:>10.4f}{ratio(a, b)}"
        )
    travels, tilts = [], []
    for case in PUSHES:
        (ta, da), (tb, db) = (push(engine, case) for engine in ENGINES)
        travels.append((ta, tb))
        tilts.append((da, db))
        print(f"{f'push {case.label}: travel m':<40}{ta:>10.4f}{tb:>10.4f}{ratio(ta, tb)}")
        print(f"{'  largest tilt deg':<40}{da:>10.1f}{db:>10.1f}{ratio(da, db)}")
    travel, tilt = np.array(travels), np.array(tilts)
    gap = np.abs(travel[:, 1] - travel[:, 0])
    print(
        f"{'push: travel |MuJoCo - PyBullet| m':<40}{'median':>10}{np.median(gap):>10.4f}"
        f"  [{gap.min():.4f}-{gap.max():.4f}]"
    )
    print(
        f"{'push: toppled (tilt > 60 deg), rows':<40}{int(np.sum(tilt[:, 0] > 60)):>10d}"
        f"{int(np.sum(tilt[:, 1] > 60)):>10d}  of {len(PUSHES)}"
    )
    a, b = (arm_speeds(engine) for engine in ENGINES)
    for k, name in enumerate(("shoulder", "elbow")):
        print(
            f"{f'arm: {name} rad/s after 20 ms at effort':<40}{a[k]:>10.3f}{b[k]:>10.3f}"
            f"{ratio(a[k], b[k])}"
        )


if __name__ == "__main__":
    main()
