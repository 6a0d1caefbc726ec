"""One contract, every backend: SimRobot (PyBullet and MuJoCo) and SerialRobot (emulated,
real-time and lockstep, and the reference firmware in QEMU in lockstep).

Modelled on trifinger_simulation's ``test_robot_equivalent_interface``: the same tests run
against ``sim://arm6``, ``sim://arm6?engine=mujoco`` and a SerialRobot talking to the
emulator through a real pseudo-terminal, in both of the emulator's clocks, and a SerialRobot
on the reference firmware (``emulated://arm6?device=firmware&lockstep=1``: the C firmware in
``qemu-system-arm``, the physics behind its second UART; a new QEMU for each test). These tests
check *behaviour* (what is refused, with which reason, and when a change shows); whether
the numbers agree is the parity suite's business (tests/test_parity.py, lockstep only).
Differences that are part of the design are tested as such: a SimRobot starts armed, a
SerialRobot disarmed; a real-time SerialRobot is paced by the device.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator

import numpy as np
import pytest

import jointlab
from jointlab.contract import Robot
from jointlab.errors import (
    ActionError,
    CommandRefused,
    ConfigurationError,
    ConfigurationRefused,
    RobotClosed,
)
from jointlab.hardware import EmulatorProcess, SerialRobot
from jointlab.interface import ActuatorState, ArrayState, NJointAction
from jointlab.sim import SimRobot

PATIENT = {"request_timeout": 1.0, "dead_ms": 5000, "connect_timeout": 10.0}
BACKENDS = [
    "sim",
    "mujoco",
    "lockstep",
    "realtime",
    pytest.param("firmware", marks=pytest.mark.slow),
]


@pytest.fixture(scope="module")
def emulators() -> Iterator[dict[str, EmulatorProcess]]:
    processes = {
        "lockstep": EmulatorProcess("arm6", lockstep=True),
        "realtime": EmulatorProcess("arm6"),
    }
    yield processes
    for process in processes.values():
        process.close()
        assert not process.alive


@pytest.fixture(params=BACKENDS)
def fresh(request: pytest.FixtureRequest) -> Iterator[Robot]:
    """A robot as its backend creates it."""
    if request.param in ("sim", "mujoco"):
        robot: Robot = SimRobot("arm6", engine="pybullet" if request.param == "sim" else "mujoco")
    elif request.param == "firmware":
        request.getfixturevalue("pil_firmware")  # the PIL build (tests/conftest.py)
        robot = jointlab.connect("emulated://arm6?device=firmware&lockstep=1", **PATIENT)
    else:
        emulator = request.getfixturevalue("emulators")[request.param]
        emulator.reset()
        robot = SerialRobot(emulator.path, "arm6", lockstep=emulator.lockstep, **PATIENT)
    with robot:
        yield robot


@pytest.fixture
def robot(fresh: Robot) -> Robot:
    """A robot armed and holding home."""
    fresh.arm()
    fresh.apply(NJointAction.Position(fresh.description.home))
    fresh.step()
    return fresh


@pytest.mark.parametrize("cls", [SimRobot, SerialRobot])
def test_both_backends_implement_the_whole_interface(cls: type) -> None:
    assert issubclass(cls, Robot) and not inspect.isabstract(cls)
    for name in ("read", "apply", "step", "reset", "arm", "disarm", "power", "brakes"):
        assert getattr(cls, name) is getattr(Robot, name), f"{cls.__name__} overrides {name}"
    for name in ("description", "dof", "time", "control_dt", "last_action", "config_accel"):
        assert isinstance(getattr(cls, name), property), name


def test_power_up_state_is_the_documented_one(fresh: Robot) -> None:
    state = fresh.read()
    assert state.motor_power and not state.brakes
    assert state.armed is isinstance(fresh, SimRobot)  # SimRobot armed; SerialRobot disarmed
    assert fresh.realtime is (isinstance(fresh, SerialRobot) and not fresh.lockstep)


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


def test_apply_validates_the_action_and_names_the_field(robot: Robot) -> None:
    with pytest.raises(ActionError, match=r"NJointAction\.torque has length 5"):
        robot.apply(NJointAction.Zero(5))
    with pytest.raises(ActionError, match=r"NJointAction\.position has length 5, expected 6"):
        robot.apply(NJointAction.Position(np.zeros(5)))
    with pytest.raises(ActionError):
        robot.apply([0.0] * 6)  # type: ignore[arg-type]


def test_state_changes_show_in_the_very_next_read(fresh: Robot) -> None:
    """arm, disarm, power, brakes: in effect when the call returns, on every backend."""
    fresh.arm()
    assert fresh.read().armed
    fresh.disarm()
    assert not fresh.read().armed and fresh.last_action.is_zero
    fresh.arm()
    fresh.brakes(True)
    state = fresh.read()
    braked = fresh.description.has_brakes
    assert state.brakes and np.all(state.actuator_state[braked] == ActuatorState.BRAKED)
    fresh.brakes(False)
    assert not fresh.read().brakes
    fresh.power(False)
    state = fresh.read()
    assert not state.motor_power and not state.armed and state.brakes  # power off brakes
    fresh.power(True)
    state = fresh.read()
    assert state.motor_power and not state.armed and not state.brakes
    fresh.step()  # and the backend's next state agrees
    state = fresh.read()
    assert state.motor_power and not state.armed and not state.brakes


def test_refusals_have_the_same_reasons_in_the_same_order(fresh: Robot) -> None:
    hold = NJointAction.Position(fresh.description.home)
    fresh.disarm()
    with pytest.raises(CommandRefused) as info:
        fresh.apply(hold)
    assert info.value.reason == "disarmed"
    fresh.apply(NJointAction.Zero(6))  # a zero action is accepted in every state
    fresh.arm()
    fresh.brakes(True)
    with pytest.raises(CommandRefused) as info:
        fresh.apply(hold)
    assert info.value.reason == "braked"
    fresh.power(False)  # unpowered comes before disarmed and braked
    for verb in (lambda: fresh.apply(hold), fresh.arm, lambda: fresh.brakes(False)):
        with pytest.raises(CommandRefused) as info:
            verb()
        assert info.value.reason == "unpowered"
    fresh.power(True)
    fresh.brakes(False)
    fresh.arm()
    fresh.apply(hold)
    fresh.step()
    assert fresh.read().armed and fresh.last_action == hold


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
    for joint, value, reason in (
        (1, 1e6, "out_of_limits"),
        (1, -1.0, "out_of_limits"),
        (1, float("nan"), "invalid_value"),
        (9, 0.5, "unknown_joint"),
        ("no_such_joint", 0.5, "unknown_joint"),
    ):
        with pytest.raises(ConfigurationRefused) as info:
            robot.configure_speed(joint, value)
        assert info.value.reason == reason and isinstance(info.value, ConfigurationError)


def test_holding_home_behaves_alike(robot: Robot) -> None:
    home = robot.description.home
    # A real-time emulated arm starts where it settled unpowered, as a real one is found:
    # reset() brings every backend home first (a teleport in sim, a move on a device).
    robot.reset()
    for _ in range(200):
        robot.apply(NJointAction.Position(home))
        robot.step()
    state = robot.read()
    np.testing.assert_allclose(state.position, home, atol=0.01)


def test_every_verb_after_close_raises_robot_closed(fresh: Robot) -> None:
    action = fresh.last_action  # the same object too: no shortcut skips the check
    fresh.close()
    fresh.close()  # safe twice
    assert fresh.closed
    verbs = [
        fresh.read,
        fresh.step,
        fresh.arm,
        fresh.disarm,
        fresh.reset,
        fresh.geometry,
        lambda: fresh.apply(action),
        lambda: fresh.power(True),
        lambda: fresh.brakes(False),
        lambda: fresh.configure_speed(0, 0.5),
    ]
    for verb in verbs:
        with pytest.raises(RobotClosed) as info:
            verb()
        assert info.value.reason == "closed"
