"""Default gains hold any geometry-only chain or tree at home, on PyBullet and on MuJoCo.

The property of issue "default gains from the coupled dynamics": random robots written from
geometry only (``tests/random_robots.py``: 2-7 rotary joints, parallel axes included, links
0.05-0.5 m, chains and trees, no gains, no inertials), held at home as the Commander holds
(PD to home plus the model's gravity torque) for 2 s from rest: velocity RMS at most
0.01 rad/s after 0.5 s and no physics step with a joint at its effort limit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from jointlab.interface import NJointAction
from jointlab.robots import RobotDescription
from jointlab.robots.dynamics import DynamicsModel
from jointlab.sim.robot import SimRobot

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from random_robots import random_robot
from robots.test_gain_design import ARM4

from jointlab.robots import description_from_dict

ENGINES = ("pybullet", "mujoco")


def hold(description: RobotDescription, engine: str) -> tuple[float, int]:
    """Velocity RMS after 0.5 s (rad/s) and saturated physics steps of a 2 s hold at home."""
    with SimRobot(description, engine=engine, dt=0.001) as robot:
        home = description.apply_coupling(description.home)
        robot.apply(
            NJointAction.TorqueAndPosition(DynamicsModel(description).gravity_torque(home), home)
        )
        limit = description.effort_limit * (1 - 1e-9)
        velocity, saturated = [], 0
        for step in range(2000):
            robot.step()
            state = robot.read()
            if step >= 500:
                velocity.append(state.velocity)
            saturated += bool(np.any(np.abs(state.torque) >= limit))
    return float(np.sqrt(np.mean(np.square(velocity)))), saturated


def assert_holds(seeds: range) -> None:
    failures = []
    for seed in seeds:
        description = random_robot(seed, tree=seed % 2 == 1)
        for engine in ENGINES:
            rms, saturated = hold(description, engine)
            if rms > 0.01 or saturated:
                failures.append((seed, engine, description.dof, rms, saturated))
    assert not failures, failures


@pytest.mark.parametrize("engine", ENGINES)
def test_the_four_joint_arm_holds_home_without_chatter(engine: str) -> None:
    """Before the coupled design: 0.8 rad/s RMS and 928 saturated steps on PyBullet."""
    rms, saturated = hold(description_from_dict(ARM4), engine)
    assert rms < 1e-6 and saturated == 0


def test_a_few_random_chains_and_trees_hold_home() -> None:
    assert_holds(range(200, 210))


@pytest.mark.slow
def test_200_random_geometry_only_chains_and_trees_hold_home_on_both_engines() -> None:
    assert_holds(range(200))
