"""The NJointAction law on MuJoCo: native actuators give the Python law's torque, and the
Python path takes over exactly where MuJoCo cannot express the law (delays)."""

from __future__ import annotations

import numpy as np
import pytest

from jointlab.interface import NJointAction
from jointlab.sim import Randomization, SimRobot
from jointlab.sim.actuators import ActuatorArray


def random_actions(robot: SimRobot, rng: np.random.Generator, count: int) -> list[NJointAction]:
    """Feed-forward, targets, gains and velocities large enough to saturate DC motors."""
    dof, home = robot.dof, robot.description.home
    actions = []
    for _ in range(count):
        torque, target = rng.uniform(-30, 30, dof), home + rng.uniform(-1, 1, dof)
        kp, kd = rng.uniform(0, 3000, dof), rng.uniform(0, 80, dof)
        velocity = rng.uniform(-2, 2, dof)
        actions.append(NJointAction.TorqueAndPosition(torque, target, kp, kd, velocity))
    return actions


def test_native_actuators_give_the_python_laws_torque_on_every_physics_step():
    """arm6 has DC motors (speed-dependent lines), friction and brakes: the hardest case."""
    with SimRobot("arm6", engine="mujoco") as robot:  # control_dt = dt: one physics step
        loop = robot._loop
        model = ActuatorArray.from_description(robot.description)
        saturated = 0
        for action in random_actions(robot, np.random.default_rng(3), 200):
            before = robot.read()
            robot.apply(action)
            assert loop.native
            _, tau, cmd = loop.law(before.position, before.velocity)  # the Python law
            robot.step()
            state = robot.read()
            np.testing.assert_allclose(state.torque, tau, rtol=1e-13, atol=1e-12)
            np.testing.assert_allclose(loop.cmd, cmd, rtol=1e-13, atol=1e-12)
            np.testing.assert_allclose(tau, model.clamp(cmd, before.velocity), atol=1e-12)
            saturated += int(np.any(np.abs(tau - cmd) > 1e-9))
        assert saturated > 100  # the clamps were exercised, not just the linear part


def test_a_delay_line_switches_to_the_python_path_and_back():
    randomization = Randomization(latency=(2, 2))
    with SimRobot("planar2", engine="mujoco", randomization=randomization) as robot:
        loop = robot._loop
        assert loop.native
        robot.reset(randomize=True)
        assert not loop.native  # MuJoCo cannot delay a command that depends on the state
        robot.apply(NJointAction.Torque([0.5, -0.5]))
        torques = []
        for _ in range(4):
            robot.step()
            torques.append(robot.read().torque.tolist())
        assert torques == [[0.0, 0.0], [0.0, 0.0], [0.5, -0.5], [0.5, -0.5]]
        robot.reset()
        assert loop.native


def test_native_and_python_paths_integrate_the_same_law_alike():
    """Same robot, same actions: with a zero-step delay line forced on, the Python path."""

    def run(python: bool) -> np.ndarray:
        with SimRobot("arm6", engine="mujoco", control_dt=0.01) as robot:
            if python:
                from jointlab.sim.actuators import DelayLine

                robot._loop.delay = DelayLine(np.zeros(robot.dof, dtype=np.int64))
                robot._loop.set_action(robot.last_action, robot._loop._active)
                robot._loop._build_law()
                assert not robot._loop.native
            rng = np.random.default_rng(5)
            for _ in range(30):  # default gains, torques inside the lines: no chaos to amplify
                target = robot.description.home + rng.uniform(-0.1, 0.1, 6)
                robot.apply(NJointAction.Position(target))
                robot.step()
            return robot.read().position

    np.testing.assert_allclose(run(python=True), run(python=False), atol=1e-14)


@pytest.mark.parametrize("path", ["native", "python"])
def test_same_actions_give_bit_identical_states_on_either_path(path):
    randomization = Randomization(latency=(1, 1)) if path == "python" else None

    def run() -> list:
        with SimRobot(
            "coupled_gripper", engine="mujoco", control_dt=0.005, randomization=randomization
        ) as robot:
            robot.reset(randomize=True)
            states = []
            for action in random_actions(robot, np.random.default_rng(1), 40):
                robot.apply(action)
                robot.apply_external_force("left_finger_tool", [0.0, 1.0, 0.0])
                robot.step()
                states.append(robot.read())
            return states

    assert run() == run()


def test_plain_positions_after_other_gains_keep_the_law_exact():
    """The actuators' PD bias is rewritten only when the gains change: plain Position
    actions (default gains, the env's position mode) around actions with their own gains,
    after a power cycle and after a reset still give the Python law's torque."""
    with SimRobot("arm6", engine="mujoco") as robot:
        loop = robot._loop
        rng = np.random.default_rng(5)
        home = robot.description.home
        custom = random_actions(robot, rng, 6)
        plan = []
        for action in custom:
            plan += [
                NJointAction.Position(home + rng.uniform(-0.5, 0.5, robot.dof)) for _ in range(3)
            ]
            plan.append(action)
        for i, action in enumerate(plan):
            if i == 9:
                robot.power(False)
                robot.power(True)
                robot.arm()
            if i == 17:
                robot.reset()
            before = robot.read()
            robot.apply(action)
            _, tau, _ = loop.law(before.position, before.velocity)
            robot.step()
            np.testing.assert_allclose(robot.read().torque, tau, rtol=1e-13, atol=1e-12)
