"""Arming never moves a robot: every backend holds its present pose from the instant it arms.

On every backend (PyBullet, MuJoCo, the JointLab device emulator in lockstep over a pty, the
emulated SO-101 servo bus in lockstep), an arm resting under gravity at a loaded pose is
disarmed and armed again with no time between, then left alone for 500 ms: the largest joint
deviation stays within 2 mrad and no joint's torque reaches its limit. A property test
arms simulated robots after random sequences of the other verbs and checks the same.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jointlab
from jointlab.contract import Robot
from jointlab.hardware import EmulatorProcess, SerialRobot
from jointlab.interface import NJointAction
from jointlab.sim import SimRobot

PATIENT = {"request_timeout": 2.0, "dead_ms": 8000, "connect_timeout": 15.0}
#: Largest joint deviation allowed over the 500 ms after arming, rad.
MAX_DEVIATION = 2e-3
#: A pose of arm6 at which gravity loads the shoulder, elbow and wrist.
ARM6_OFFSET = np.array([0.3, 0.5, -0.6, 0.0, 0.4, 0.0])


@pytest.fixture(params=["pybullet", "mujoco", "serial-lockstep", "servo-lockstep"])
def backend(request: pytest.FixtureRequest) -> Iterator[Robot]:
    if request.param in ("pybullet", "mujoco"):
        with SimRobot("arm6", engine=request.param) as robot:
            yield robot
    elif request.param == "serial-lockstep":
        with EmulatorProcess("arm6", lockstep=True) as emulator:
            with SerialRobot(emulator.path, "arm6", lockstep=True, **PATIENT) as robot:
                yield robot
    else:
        with jointlab.connect("emulated://so101?lockstep=1") as robot:
            yield robot


def _loaded_pose(robot: Robot) -> np.ndarray:
    description = robot.description
    if description.name == "arm6":
        target = description.home + ARM6_OFFSET
    else:  # so101: shoulder lift and elbow bent so that gravity loads them
        target = description.home.copy()
        target[1:3] += np.array([0.4, -0.5])
    return np.clip(target, description.lower, description.upper)


def _settle_at(robot: Robot, target: np.ndarray, seconds: float = 1.0) -> None:
    robot.arm()
    robot.apply(NJointAction.Position(target))
    for _ in range(round(seconds / robot.control_dt)):
        robot.step()


def _deviation_after_arming(robot: Robot, seconds: float = 0.5) -> tuple[float, float]:
    """(largest joint deviation, rad; largest |torque| / effort limit) after ``arm()``."""
    start = robot.read().position.copy()
    robot.disarm()
    robot.arm()
    limit = robot.description.effort_limit
    deviation, load = 0.0, 0.0
    for _ in range(round(seconds / robot.control_dt)):
        robot.step()
        state = robot.read()
        deviation = max(deviation, float(np.abs(state.position - start).max()))
        load = max(load, float((np.abs(state.torque) / limit).max()))
    return deviation, load


def test_arming_holds_the_present_pose_on_every_backend(backend: Robot) -> None:
    _settle_at(backend, _loaded_pose(backend))
    deviation, load = _deviation_after_arming(backend)
    # A servo reads whole encoder ticks (so101: 1.53 mrad): the bound is read to within one.
    bound = MAX_DEVIATION + float(np.max(backend.position_resolution, initial=0.0))
    assert deviation <= bound, f"the arm moved {deviation * 1e3:.2f} mrad after arm()"
    assert load < 0.999, f"a joint reached {load:.0%} of its effort limit after arm()"


def test_arming_an_armed_robot_keeps_its_action() -> None:
    with SimRobot("arm6") as robot:
        target = robot.description.home + 0.1
        robot.apply(NJointAction.Position(target))
        robot.arm()
        assert robot.last_action.position == pytest.approx(target)


VERB_NAMES = ["power_on", "power_off", "brakes_on", "brakes_off", "disarm", "step", "apply", "arm"]
VERBS = st.lists(
    st.sampled_from(VERB_NAMES),
    min_size=1,
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(verbs=VERBS, engine=st.sampled_from(["pybullet", "mujoco"]), seed=st.integers(0, 2**16))
def test_no_order_of_verbs_makes_arming_move_the_robot(verbs, engine, seed) -> None:
    rng = np.random.default_rng(seed)
    with SimRobot("arm6", engine=engine) as robot:
        d = robot.description
        robot.reset(np.clip(d.home + rng.uniform(-0.5, 0.5, d.dof), d.lower, d.upper))
        for verb in verbs:
            state = robot.read()
            if verb == "power_on":
                robot.power(True)
            elif verb == "power_off":
                robot.power(False)
            elif verb == "brakes_on":
                robot.brakes(True)
            elif verb == "brakes_off" and state.motor_power:
                robot.brakes(False)
            elif verb == "disarm":
                robot.disarm()
            elif verb == "step":
                robot.step()
            elif verb == "apply" and state.armed and not state.brakes:
                robot.apply(NJointAction.Position(state.position))
            elif verb == "arm" and state.motor_power and not state.brakes:
                if state.armed:
                    robot.arm()
                    continue
                robot.step()  # the state a person sees before arming
                start = robot.read().position.copy()
                robot.arm()
                for _ in range(100):
                    robot.step()
                moved = np.abs(robot.read().position - start).max()
                assert moved <= MAX_DEVIATION, (verbs, moved)
