"""Parity: the same program gives the same outcome on ``sim://`` and lockstep ``emulated://``.

Every public verb of ``Robot`` and of ``Commander``, and every registered environment id,
runs as one script on a ``SimRobot`` and on a ``SerialRobot`` talking to the emulator in
lockstep (virtual time) through a real pseudo-terminal, with ``arm()`` right before the
first command (a device starts disarmed). The outcomes are compared: every state read
(times and flags exactly, numbers within float32 rounding, which is what the wire carries),
every command event, every refusal's type and reason, every environment observation and
reward. Nothing here depends on the machine's load: the emulator ticks only when the host
asks, so a busy machine changes how long a test takes, never its result.

Tolerances: values cross the wire as float32 (relative rounding 6e-8) and the controller
then acts on those, so differences accumulate through the loop, most while a robot moves
under a torque with no PD to pull the two runs together. Over 400 periods, 100 of them
free (20 ms periods), they were measured at 1.9e-5 rad, 1.9e-4 rad/s, 4.2e-3 rad/s² (a
finite difference over one 1 ms step), 1.4e-4 N·m and 2.9e-5 A; the bounds below leave
at least a factor 2.5. The acceleration's bound is wider: in the free 50 periods arm6's wrist
falls onto the ground, and with its links' contact friction at 1 (before the contact-model fix
PyBullet had left them at its 0.5) the stick-slip of that contact turns 1e-6 rad of
difference into 7.3e-2 rad/s² over one 1 ms step (positions still agree to 1.0e-6 rad).
A lockstep run is deterministic: a test here passes or fails the same way on every run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import numpy as np
import pytest

import jointlab.envs  # noqa: F401 - registers the ids
from jointlab.contract import Robot
from jointlab.controllers import Commander
from jointlab.envs import ENV_SPECS, TASKS
from jointlab.errors import ActionError, ConfigurationError, JointLabError
from jointlab.hardware import EmulatorProcess, SerialRobot
from jointlab.interface import ArrayState, NJointAction
from jointlab.robots.dynamics import rigid_body_model
from jointlab.sim import SimRobot
from jointlab.sim.pybullet import bullet_model

PATIENT = {"request_timeout": 2.0, "dead_ms": 10_000, "connect_timeout": 20.0}
#: Largest difference allowed per state field (see the module docstring).
TOLERANCE = {
    "position": 5e-5,
    "velocity": 5e-4,
    "acceleration": 2e-1,
    "torque": 2e-3,
    "current": 3e-4,
}
FLAGS = ("time", "motor_power", "armed", "brakes", "watchdog")


# ====================================================================== the two backends
@pytest.fixture(scope="module")
def emulators() -> Iterator[Callable[[str], EmulatorProcess]]:
    """Lockstep emulators shared by the module, one per robot, started on first use."""
    started: dict[str, EmulatorProcess] = {}

    def get(robot: str) -> EmulatorProcess:
        if robot not in started:
            started[robot] = EmulatorProcess(robot, lockstep=True)
        return started[robot]

    yield get
    for process in started.values():
        process.close()
        assert not process.alive


def device(emulators: Callable[[str], EmulatorProcess], robot: str, period: int) -> SerialRobot:
    emulator = emulators(robot)
    emulator.reset()
    return SerialRobot(emulator.path, robot, lockstep=True, stream_period=period, **PATIENT)


@contextmanager
def twins(
    emulators: Callable[[str], EmulatorProcess], robot: str = "arm6", period: int = 1
) -> Iterator[tuple[Robot, Robot]]:
    """A SimRobot and a lockstep SerialRobot of ``robot`` with ``period`` ms per step."""
    sim = SimRobot(robot, control_dt=0.001 * period)
    try:
        with device(emulators, robot, period) as emulated:
            yield sim, emulated
    finally:
        sim.close()


# ====================================================================== outcomes
@dataclass
class Outcome:
    """Everything a script observed, in order."""

    items: list[tuple[str, Any]] = field(default_factory=list)

    def state(self, robot: Robot) -> None:
        self.items.append(("state", robot.read()))

    def value(self, name: str, value: Any) -> None:
        self.items.append((name, value))

    def attempt(self, call: Callable[[], Any]) -> Any:
        """Run ``call``; record its refusal (type and reason) or that it succeeded."""
        try:
            result = call()
        except JointLabError as error:
            self.items.append(("error", (type(error).__name__, getattr(error, "reason", None))))
            return None
        self.items.append(("ok", None))
        return result

    def events(self, commander: Commander) -> None:
        for event in commander.get_events():
            self.items.append(("event", event))


def assert_same_state(a: ArrayState, b: ArrayState, where: str) -> None:
    for name in FLAGS:
        assert getattr(a, name) == getattr(b, name), f"{where}: {name}"
    np.testing.assert_array_equal(a.actuator_state, b.actuator_state, err_msg=where)
    for name, tolerance in TOLERANCE.items():
        np.testing.assert_allclose(
            getattr(a, name), getattr(b, name), rtol=0, atol=tolerance, err_msg=f"{where}: {name}"
        )


def assert_close(a: Any, b: Any, where: str, atol: float = 3e-5) -> None:
    """Numbers (also inside lists, tuples, dicts, arrays) within float32 rounding.

    States compare as :func:`assert_same_state`; inside a dict, the values of a state field
    (``position``, ``acceleration`` ...) get that field's tolerance.
    """
    if isinstance(a, ArrayState):  # an env's info["state"]
        assert isinstance(b, ArrayState), f"{where}: {b!r}"
        assert_same_state(a, b, where)
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_close(a[key], b[key], f"{where}.{key}", TOLERANCE.get(key, atol))
    elif isinstance(a, (list, tuple, np.ndarray)) and not isinstance(a, str):
        a_array, b_array = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
        assert a_array.shape == b_array.shape, where
        for i, (x, y) in enumerate(zip(a_array.ravel(), b_array.ravel(), strict=True)):
            assert_close(x, y, f"{where}[{i}]", atol)
    elif isinstance(a, (float, np.floating)) and not isinstance(a, bool):
        assert math.isclose(a, b, rel_tol=1e-4, abs_tol=atol) or (
            math.isnan(a) and math.isnan(b)
        ), f"{where}: {a} vs {b}"
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def assert_same_outcome(sim: Outcome, emulated: Outcome) -> None:
    assert [k for k, _ in sim.items] == [k for k, _ in emulated.items]
    for index, ((kind, a), (_, b)) in enumerate(zip(sim.items, emulated.items, strict=True)):
        where = f"item {index} ({kind})"
        if kind == "state":
            assert_same_state(a, b, where)
        elif kind == "event":
            assert (a.kind, a.command_id, a.time, a.joints) == (
                b.kind,
                b.command_id,
                b.time,
                b.joints,
            ), where
            assert_close(dict(a.data), dict(b.data), where)
        else:
            assert_close(a, b, where)


def run_twins(
    emulators: Callable[[str], EmulatorProcess],
    script: Callable[[Robot, Outcome], None],
    robot: str = "arm6",
    period: int = 1,
) -> tuple[Outcome, Outcome]:
    outcomes = (Outcome(), Outcome())
    with twins(emulators, robot, period) as robots:
        for each, outcome in zip(robots, outcomes, strict=True):
            script(each, outcome)
    return outcomes


# ====================================================================== Robot verbs
def tracking(robot: Robot, out: Outcome) -> None:
    """apply / step / read / time: a sine on every joint, then a torque, then zero."""
    robot.arm()
    home = robot.description.home
    for _ in range(200):
        robot.apply(NJointAction.Position(home + 0.3 * np.sin(2 * np.pi * robot.time)))
        robot.step()
        out.state(robot)
    robot.apply(NJointAction.Torque(np.array([1.0, -2.0, 0.5, 0.0, 0.1, 0.0])))
    for _ in range(50):
        robot.step()
        out.state(robot)
    robot.apply(NJointAction.Zero(robot.dof))
    robot.step()
    out.state(robot)
    out.value("time", robot.time)
    out.value("last_action", robot.last_action.get_data())


def state_changes(robot: Robot, out: Outcome) -> None:
    """arm / disarm / power / brakes: in effect at once; refusals with the same reasons."""
    hold = NJointAction.Position(robot.description.home)
    robot.arm()
    out.state(robot)
    robot.apply(hold)
    robot.step()
    for change in (robot.disarm, lambda: robot.brakes(True), lambda: robot.power(False)):
        out.attempt(change)
        out.state(robot)
        out.value("last_action", robot.last_action.get_data())
        out.attempt(lambda: robot.apply(hold))
        for _ in range(20):  # what the robot does with the action the change left in force
            robot.step()
            out.state(robot)
        out.attempt(robot.arm)
        out.attempt(lambda: robot.brakes(False))
        out.attempt(lambda: robot.apply(NJointAction.Zero(robot.dof)))
        robot.step()
        out.state(robot)
        out.attempt(lambda: robot.power(True))
        out.attempt(lambda: robot.brakes(False))
        out.attempt(robot.arm)
        out.state(robot)
        out.attempt(lambda: robot.apply(hold))
        robot.step()
        out.state(robot)
        out.value("last_action", robot.last_action.get_data())


def settings(robot: Robot, out: Outcome) -> None:
    """configure_speed / configure_accel / geometry, accepted and refused."""
    robot.arm()
    out.attempt(lambda: robot.configure_speed(1, 0.5))
    out.attempt(lambda: robot.configure_accel("elbow", 1.5))
    for joint, value in ((1, 1e6), (1, -1.0), (1, float("nan")), (9, 0.5), ("nope", 0.5)):
        out.attempt(lambda j=joint, v=value: robot.configure_speed(j, v))
        out.attempt(lambda j=joint, v=value: robot.configure_accel(j, v))
    out.value("config_speed", robot.config_speed)
    out.value("config_accel", robot.config_accel)
    geometry = robot.geometry()
    out.value(
        "geometry",
        [
            (g.type, g.length, g.min, g.max, g.home, g.config_speed, g.has_brakes)
            for g in geometry.actuators
        ],
    )


def resets(robot: Robot, out: Outcome) -> None:
    """reset to home, to a pose, to a pose in motion; time restarts; then free motion."""
    robot.arm()
    home = robot.description.home
    for q, qd in ((None, None), (home + 0.2, None), (home - 0.1, np.full(robot.dof, 0.3))):
        out.items.append(("state", robot.reset(q, qd)))
        out.value("last_action", robot.last_action.get_data())
        for _ in range(20):
            robot.step()
            out.state(robot)
    out.attempt(lambda: robot.reset(np.full(robot.dof, 100.0)))


def action_errors(robot: Robot, out: Outcome) -> None:
    """Wrong actions: the same error type and the same message on both backends."""
    robot.arm()
    for action in (NJointAction.Position(np.zeros(5)), NJointAction.Zero(3), [0.0] * 6):
        with pytest.raises(ActionError) as info:
            robot.apply(action)  # type: ignore[arg-type]
        out.value("message", str(info.value))


def closing(robot: Robot, out: Outcome) -> None:
    """After close(): every verb refused with reason "closed"."""
    robot.arm()
    robot.close()
    for verb in (
        robot.read,
        robot.step,
        robot.arm,
        robot.disarm,
        robot.reset,
        robot.geometry,
        lambda: robot.apply(NJointAction.Zero(robot.dof)),
        lambda: robot.power(False),
        lambda: robot.brakes(True),
        lambda: robot.configure_accel(0, 1.0),
    ):
        out.attempt(verb)


@pytest.mark.parametrize(
    "script",
    [tracking, state_changes, settings, resets, action_errors, closing],
    ids=lambda s: s.__name__,
)
def test_robot_verbs_behave_alike(emulators: Any, script: Callable[[Robot, Outcome], None]) -> None:
    assert_same_outcome(*run_twins(emulators, script))


def test_the_same_tracking_with_twenty_ticks_per_step(emulators: Any) -> None:
    assert_same_outcome(*run_twins(emulators, tracking, period=20))


# ====================================================================== Commander verbs
#: Device ticks per Commander tick (250 Hz control): the device still ticks at 1 kHz.
COMMANDER_PERIOD = 4


def commander_script(
    verbs: Callable[[Commander, Robot, Outcome], None],
) -> Callable[[Robot, Outcome], None]:
    def script(robot: Robot, out: Outcome) -> None:
        robot.arm()
        # one rigid-body model for both backends (each offers its own by default: the
        # simulator Bullet's, a device the numpy model), so only the backends differ
        model = rigid_body_model(robot.description, evaluator=bullet_model)
        commander = Commander(robot, dynamics=model)
        verbs(commander, robot, out)
        commander.wait(timeout=3.0)
        out.events(commander)
        out.state(robot)

    return script


def run_for(commander: Commander, robot: Robot, out: Outcome, seconds: float) -> None:
    for _ in range(round(seconds / robot.control_dt)):
        commander.update()
        robot.step()
        out.state(robot)


def moves(c: Commander, robot: Robot, out: Outcome) -> None:
    home = robot.description.home
    c.set_position(0, home[0] + 0.3)
    c.set_velocity(1, 0.4, duration=0.3)  # a second joint in the same tick
    run_for(c, robot, out, 0.5)
    c.wait(c.set_positions(home + np.array([0.2, -0.1, 0.2, 0.1, 0.1, 0.1])), timeout=3)
    c.wait(c.home(), timeout=3)
    c.wait(c.home("elbow"), timeout=3)


def velocities(c: Commander, robot: Robot, out: Outcome) -> None:
    c.wait(c.set_velocities(np.array([0.3, -0.2, 0.2, 0.0, 0.1, -0.1]), duration=0.2), timeout=3)
    c.set_velocity("elbow", 0.3)
    run_for(c, robot, out, 0.2)
    c.wait(c.stop("decelerate"), timeout=3)
    c.set_velocity(0, -0.3)
    run_for(c, robot, out, 0.1)
    c.wait(c.stop("immediate"), timeout=3)


def efforts(c: Commander, robot: Robot, out: Outcome) -> None:
    c.wait(c.set_effort(0, 2.0, duration=0.1), timeout=3)
    c.wait(c.set_current(1, 0.5, duration=0.1), timeout=3)
    c.wait(c.set_currents(np.array([0.1, 0.2, 0.1, 0.0, 0.0, 0.0]), duration=0.1), timeout=3)
    c.hold()
    run_for(c, robot, out, 0.1)


def trajectory(c: Commander, robot: Robot, out: Outcome) -> None:
    home = robot.description.home[:3]
    waypoints = [
        {"time_from_start": 0.0, "position": home},
        {"time_from_start": 0.3, "position": home + np.array([0.2, 0.1, -0.1])},
        {"time_from_start": 0.6, "position": home},
    ]
    c.wait(c.follow_trajectory(waypoints, joints=[0, 1, 2], repeat=2), timeout=5)


def requests(c: Commander, robot: Robot, out: Outcome) -> None:
    out.attempt(lambda: c.configure_speed(0, 0.5))
    out.attempt(lambda: c.configure_accel(0, 2.0))
    c.wait(c.set_position(0, robot.description.home[0] + 0.2), timeout=3)
    out.value("config_speed", c.geometry().actuators[0].config_speed)
    out.attempt(lambda: c.brakes(True))
    out.attempt(lambda: c.set_position(0, 0.1))
    out.attempt(lambda: c.brakes(False))
    out.attempt(lambda: c.power(False))
    out.attempt(lambda: c.set_position(0, 0.1))
    out.attempt(lambda: c.power(True))
    out.attempt(lambda: c.set_position(0, 0.1))
    robot.arm()
    c.wait(c.set_position(0, 0.1), timeout=3)


def refusals(c: Commander, robot: Robot, out: Outcome) -> None:
    for command in (
        lambda: c.set_position(0, 99.0),
        lambda: c.set_position(17, 0.0),
        lambda: c.set_position("nope", 0.0),
        lambda: c.set_velocity(0, 1e3),
        lambda: c.set_positions(np.zeros(3)),
        lambda: c.set_effort(0, 1e6),
    ):
        out.attempt(command)
    robot.disarm()
    out.attempt(lambda: c.set_position(0, 0.1))
    out.attempt(lambda: c.stop())  # accepted even when disarmed


@pytest.mark.parametrize(
    "verbs", [moves, velocities, efforts, trajectory, requests, refusals], ids=lambda v: v.__name__
)
def test_commander_verbs_behave_alike(emulators: Any, verbs: Any) -> None:
    sim, emulated = run_twins(emulators, commander_script(verbs), period=COMMANDER_PERIOD)
    assert any(kind == "event" for kind, _ in sim.items)
    assert_same_outcome(sim, emulated)


# ====================================================================== environments


def env_run(env: gymnasium.Env, steps: int = 15) -> Outcome:
    out = Outcome()
    observation, info = env.reset(seed=3)
    out.value("reset", (observation, info))
    env.action_space.seed(5)
    for _ in range(steps):
        observation, reward, terminated, truncated, info = env.step(env.action_space.sample())
        out.value("step", (observation, float(reward), terminated, truncated, info))
    return out


def env_kwargs(env_id: str) -> dict[str, Any]:
    return {"push_probability": 0.0} if env_id == "jointlab/Hold-v0" else {}


@pytest.mark.parametrize("spec", ENV_SPECS, ids=lambda spec: spec.id)
def test_every_environment_behaves_alike(emulators: Any, spec: Any) -> None:
    env_id = spec.id
    robot_name = TASKS[spec.task].default_robot
    with twins(emulators, robot_name, period=20) as (sim, emulated):
        emulated.arm()  # a live robot is armed by its owner, not by the environment
        outcomes = []
        for robot in (sim, emulated):
            try:
                env = gymnasium.make(env_id, robot=robot, **env_kwargs(env_id))
            except ConfigurationError as error:  # a task that needs a simulated world
                assert robot is emulated and "world" in str(error)
                assert env_id == "jointlab/Push-v0"
                return
            with env:
                outcomes.append(env_run(env))
    assert_same_outcome(*outcomes)


def test_an_environment_built_from_a_url_arms_its_robot_on_reset() -> None:
    urls = ("sim://arm6?control_dt=0.02", "emulated://arm6?lockstep=1&stream_period=20")
    outcomes = []
    for url in urls:
        with gymnasium.make("jointlab/Reach-v0", backend=url) as env:
            outcomes.append(env_run(env, steps=10))
            assert env.unwrapped.robot.read().armed
    assert_same_outcome(*outcomes)


def test_an_environment_given_a_disarmed_robot_says_to_arm_it(emulators: Any) -> None:
    with twins(emulators) as (sim, emulated):
        sim.disarm()
        for robot in (sim, emulated):
            env = gymnasium.make("jointlab/Reach-v0", robot=robot)
            with pytest.raises(JointLabError, match=r"disarmed: call robot\.arm\(\)") as info:
                env.reset(seed=0)
            assert info.value.reason == "disarmed"  # type: ignore[attr-defined]
            env.close()
