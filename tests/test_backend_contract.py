"""One contract, three backends: SimRobot (PyBullet and MuJoCo) and SerialRobot (over the
emulator) behave alike.

Modelled on trifinger_simulation's ``test_robot_equivalent_interface``: the same tests run
against ``sim://arm6``, ``sim://arm6?engine=mujoco`` and a SerialRobot talking to
``emulated://arm6`` through a real pseudo-terminal. Differences that are part of the design
are tested as such: a SimRobot starts armed and is not real-time; a SerialRobot starts
disarmed and is paced by the device.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import numpy as np
import pytest

from jointlab.errors import ActionError, CommandRefused, ConfigurationError
from jointlab.hardware import EmulatorProcess, SerialRobot
from jointlab.interface import ArrayState, NJointAction, Robot
from jointlab.sim import SimRobot

PATIENT = {"request_timeout": 0.5, "dead_periods": 1000, "connect_timeout": 10.0}
BACKENDS = ["sim", "mujoco", "emulated"]


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorProcess]:
    process = EmulatorProcess("arm6")
    yield process
    process.close()
    assert not process.alive


@pytest.fixture(params=BACKENDS)
def fresh(request: pytest.FixtureRequest) -> Iterator[Robot]:
    """A robot as its backend creates it."""
    if request.param in ("sim", "mujoco"):
        robot: Robot = SimRobot("arm6", engine="pybullet" if request.param == "sim" else "mujoco")
    else:
        emulator = request.getfixturevalue("emulator")
        emulator.reset()
        robot = SerialRobot(emulator.path, "arm6", **PATIENT)
    with robot:
        yield robot


@pytest.fixture
def robot(fresh: Robot) -> Robot:
    """A robot armed and holding home."""
    fresh.arm()
    fresh.apply(NJointAction.Position(fresh.description.home))
    fresh.step()
    return fresh


def public_api(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(getattr(Robot, name))
        for name in dir(Robot)
        if not name.startswith("_") and callable(getattr(Robot, name))
    }


@pytest.mark.parametrize("cls", [SimRobot, SerialRobot])
def test_both_backends_implement_the_whole_interface(cls: type) -> None:
    assert issubclass(cls, Robot) and not inspect.isabstract(cls)
    for name, signature in public_api(Robot).items():
        method = getattr(cls, name)
        ours = list(inspect.signature(method).parameters)[: len(signature.parameters)]
        assert ours == list(signature.parameters), f"{cls.__name__}.{name}{signature}"
    for name in ("description", "dof", "time", "control_dt", "last_action", "config_accel"):
        assert isinstance(getattr(cls, name), property), name


def test_power_up_state_is_the_documented_one(fresh: Robot) -> None:
    state = fresh.read()
    assert state.motor_power and not state.brakes
    assert state.armed is (not fresh.realtime)  # SimRobot armed; SerialRobot disarmed
    assert fresh.realtime is isinstance(fresh, SerialRobot)


def test_read_returns_float64_joint_arrays(robot: Robot) -> None:
    state = robot.read()
    assert isinstance(state, ArrayState)
    for name in ("position", "velocity", "acceleration", "torque", "current"):
        array = getattr(state, name)
        assert array.dtype == np.float64 and array.shape == (6,), name
    assert state.actuator_state.dtype == np.uint8
    assert np.all(np.abs(state.torque) <= robot.description.effort_limit + 1e-3)


def test_step_advances_time_by_whole_control_periods(robot: Robot) -> None:
    before = robot.time
    assert robot.read().time == before
    for _ in range(5):
        robot.step()
    periods = (robot.time - before) / robot.control_dt
    assert periods >= 5 - 1e-6 and abs(periods - round(periods)) < 1e-6
    assert robot.read().time == robot.time


def test_apply_validates_the_action(robot: Robot) -> None:
    with pytest.raises(ActionError):
        robot.apply(NJointAction.Zero(5))
    with pytest.raises(ActionError):
        robot.apply([0.0] * 6)  # type: ignore[arg-type]


def test_disarmed_robots_accept_only_zero(robot: Robot) -> None:
    robot.disarm()
    assert robot.last_action == NJointAction.Zero(6)
    with pytest.raises(CommandRefused) as info:
        robot.apply(NJointAction.Position(robot.description.home))
    assert info.value.reason == "disarmed"
    robot.apply(NJointAction.Zero(6))
    robot.step()
    assert not robot.read().armed
    robot.arm()
    action = NJointAction.Position(robot.description.home)
    robot.apply(action)
    robot.step()
    assert robot.read().armed and robot.last_action == action


def test_power_and_brakes_show_in_the_next_state(robot: Robot) -> None:
    robot.brakes(True)
    robot.step()
    assert robot.read().brakes
    robot.brakes(False)
    robot.step()
    assert not robot.read().brakes
    robot.power(False)
    robot.step()
    assert not robot.read().motor_power and robot.read().brakes  # power off brakes
    robot.power(True)
    robot.step()
    assert robot.read().motor_power


def test_geometry_is_the_descriptions(robot: Robot) -> None:
    expected = robot.description.geometry()
    geometry = robot.geometry()
    for got, want in zip(geometry.actuators, expected.actuators, strict=True):
        assert (got.type, got.has_brakes) == (want.type, want.has_brakes)
        np.testing.assert_allclose(
            [got.min, got.max, got.home, got.length],
            [want.min, want.max, want.home, want.length],
            atol=1e-6,
        )
    np.testing.assert_allclose(geometry.base_pos, expected.base_pos, atol=1e-6)


def test_configured_speed_and_acceleration(robot: Robot) -> None:
    robot.configure_speed(1, 0.5)
    robot.configure_accel("elbow", 1.5)
    assert robot.geometry().actuators[1].config_speed == pytest.approx(0.5)
    assert robot.config_accel[2] == pytest.approx(1.5)
    with pytest.raises(ConfigurationError):
        robot.configure_speed(1, 1e6)
    with pytest.raises(ConfigurationError):
        robot.configure_speed(1, -1.0)


def test_holding_home_behaves_alike(robot: Robot) -> None:
    home = robot.description.home
    for _ in range(200):
        robot.apply(NJointAction.Position(home))
        robot.step()
    state = robot.read()
    np.testing.assert_allclose(state.position, home, atol=0.01)


def test_close_is_idempotent(fresh: Robot) -> None:
    fresh.close()
    fresh.close()


def rms_tracking_error(robot: Robot) -> float:
    """Follow a 0.8 s Commander trajectory on three joints; RMS tracking error in rad."""
    from jointlab.controllers import Commander

    if not robot.read().armed:
        robot.arm()
    robot.reset()
    commander = Commander(robot)  # the description's default gains
    commander.wait(commander.home())
    home = robot.description.home[:3]
    waypoints = [
        {"time_from_start": 0.0, "position": home},
        {"time_from_start": 0.4, "position": home + np.array([0.25, 0.15, -0.15])},
        {"time_from_start": 0.8, "position": home},
    ]
    handle = commander.follow_trajectory(waypoints, joints=[0, 1, 2])
    errors = []
    while not handle.done:
        action = commander.update()
        robot.step()
        errors.append(robot.read().position[:3] - action.position[:3])
    return float(np.sqrt(np.mean(np.square(errors))))


def test_the_same_trajectory_tracks_alike_on_sim_and_emulated(emulator: EmulatorProcess) -> None:
    """Issue 6: tracking errors within 10 % of each other.

    The device runs the simulator's PD law bit for bit (tests/hardware/test_emulator.py), so
    the one difference is timing: a command that reaches the device after the tick it was
    meant for is used one tick late. The loop runs at 250 Hz (the device still ticks at
    1 kHz) to leave the host time, and the device's log of accepted commands says how many
    were late; a busy machine gets up to three attempts before the comparison is skipped as
    unmeasurable rather than failed.
    """
    with SimRobot("arm6", control_dt=0.004) as sim:
        expected = rms_tracking_error(sim)
    attempts = []
    for _ in range(3):
        emulator.reset()
        with SerialRobot(emulator.path, "arm6", stream_period=4, **PATIENT) as device:
            start = emulator.report().tick
            measured = rms_tracking_error(device)
        ticks = np.array([a.tick for a in emulator.report().applied if a.tick > start])
        late = float(np.mean((ticks - 1) % 4 != 0))  # on time: the tick after a state
        attempts.append((late, measured))
        if late <= 0.05:
            break
    late, measured = min(attempts)
    if late > 0.2:
        pytest.skip(f"the host was late for {late:.0%} of the device ticks: machine too busy")
    assert measured == pytest.approx(expected, rel=0.10)
