"""SerialRobot over a real pseudo-terminal to the device emulator (in its own process)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest
from hardware_helpers import PATIENT, emulator_process, hold, serial_robot, step_until

from jointlab.errors import (
    ActionError,
    CommandRefused,
    ConfigurationError,
    LinkError,
    RobotClosed,
)
from jointlab.hardware import ConfigurationRefused, EmulatorProcess, Faults, SerialRobot
from jointlab.hardware.protocol import HomeCommand, NJointCommand, PositionCommand
from jointlab.interface import ActuatorState, ArrayState, NJointAction
from jointlab.robots import (
    description_digest,
    description_from_dict,
    description_to_dict,
    load_robot,
)


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorProcess]:
    with emulator_process("arm6") as process:
        yield process


@pytest.fixture
def robot(emulator: EmulatorProcess) -> Iterator[SerialRobot]:
    with serial_robot(emulator) as robot_:
        yield robot_


# ------------------------------------------------------------------ handshake
def test_handshake_gives_a_disarmed_realtime_robot(robot: SerialRobot) -> None:
    assert robot.description.name == "arm6"
    assert robot.dof == 6
    assert robot.realtime is True
    assert robot.control_dt == pytest.approx(0.001)
    assert robot.device.rate_hz == 1000
    assert robot.device.digest_hex == description_digest(load_robot("arm6"))
    state = robot.read()
    assert isinstance(state, ArrayState)
    assert state.position.dtype == np.float64 and state.position.shape == (6,)
    assert not robot.armed and not state.armed and state.motor_power


def test_description_is_found_from_the_device_digest(emulator: EmulatorProcess) -> None:
    emulator.reset()
    with SerialRobot(emulator.path, None, **PATIENT) as robot:
        assert robot.description == load_robot("arm6")


def test_dof_mismatch_is_a_link_error(emulator: EmulatorProcess) -> None:
    with pytest.raises(LinkError, match="drives 6 joints"):
        SerialRobot(emulator.path, "planar2", **PATIENT)


def test_digest_mismatch_is_a_link_error_unless_allowed(emulator: EmulatorProcess) -> None:
    data = description_to_dict(load_robot("arm6"))
    data["name"] = "arm6_modified"
    other = description_from_dict(data)
    with pytest.raises(LinkError, match="different robot description"):
        SerialRobot(emulator.path, other, **PATIENT)
    with SerialRobot(emulator.path, other, allow_digest_mismatch=True, **PATIENT) as robot:
        assert robot.description.name == "arm6_modified"


def test_a_port_that_does_not_exist_is_a_link_error() -> None:
    with pytest.raises(LinkError, match="cannot open serial port"):
        SerialRobot("/dev/does-not-exist-jointlab")


# ------------------------------------------------------------------ time semantics
def test_step_waits_for_the_next_state_and_time_is_device_time(robot: SerialRobot) -> None:
    robot.arm()
    times = []
    for _ in range(20):
        robot.apply(NJointAction.Position(robot.description.home))
        robot.step()
        state = robot.read()
        assert state.time == robot.time
        times.append(state.time)
    steps = np.diff(times) / robot.control_dt
    assert np.all(steps >= 1 - 1e-9)  # each step() is at least one period of device time
    np.testing.assert_allclose(steps, np.round(steps), atol=1e-6)  # whole ticks


def test_apply_sends_the_action_and_the_pd_holds_it(robot: SerialRobot) -> None:
    robot.arm()
    target = robot.description.home + np.array([0.05, 0.0, 0.0, 0.0, 0.0, 0.0])
    action = NJointAction.Position(target)
    hold(robot, 300, target)
    assert robot.last_action == action
    assert robot.read().position[0] == pytest.approx(target[0], abs=0.005)


# ------------------------------------------------------------------ refusals
def test_disarmed_robot_refuses_motion_but_accepts_zero(robot: SerialRobot) -> None:
    with pytest.raises(CommandRefused) as info:
        robot.apply(NJointAction.Position(robot.description.home))
    assert info.value.reason == "disarmed"
    robot.apply(NJointAction.Zero(6))
    robot.step()


def test_device_nack_reasons_reach_the_user(robot: SerialRobot) -> None:
    with pytest.raises(CommandRefused) as info:  # the device checks, not the host
        robot.send_command(PositionCommand(0, 0.1))
    assert info.value.reason == "disarmed"
    assert "the robot is disarmed" in str(info.value)
    robot.arm()
    with pytest.raises(CommandRefused) as info:
        robot.send_command(PositionCommand(0, 10.0))
    assert info.value.reason == "out_of_limits"
    with pytest.raises(CommandRefused) as info:
        robot.send_command(PositionCommand(17, 0.0))
    assert info.value.reason == "unknown_joint" and "detail 17" in str(info.value)


def test_refused_settings_are_configuration_errors_with_the_device_reason(
    robot: SerialRobot,
) -> None:
    with pytest.raises(ConfigurationRefused) as info:
        robot.configure_speed(0, 1000.0)
    assert info.value.reason == "out_of_limits"
    assert isinstance(info.value, ConfigurationError) and isinstance(info.value, CommandRefused)
    with pytest.raises(ConfigurationRefused) as info:
        robot.configure_speed(99, 0.5)
    assert info.value.reason == "unknown_joint"
    with pytest.raises(ConfigurationRefused) as info:
        robot.configure_accel(0, float("nan"))
    assert info.value.reason == "invalid_value"
    with pytest.raises(ConfigurationError):
        robot.configure_speed("no_such_joint", 0.5)


def test_brakes_are_in_effect_when_the_call_returns(robot: SerialRobot) -> None:
    robot.arm()
    robot.brakes(True)
    state = robot.read()  # no step(): the acknowledged brakes show at once
    assert state.brakes and state.armed
    braked = robot.description.has_brakes
    assert np.all(state.actuator_state[braked] == ActuatorState.BRAKED)
    with pytest.raises(CommandRefused) as info:  # refused by the host, as in simulation
        robot.apply(NJointAction.Position(robot.description.home))
    assert info.value.reason == "braked"
    with pytest.raises(CommandRefused) as info:  # and by the device, with the same reason
        robot.send_command(NJointCommand.from_action(NJointAction.Position(robot.description.home)))
    assert info.value.reason == "braked"
    robot.brakes(False)
    assert not robot.read().brakes
    hold(robot, 5)  # accepted again


def test_a_refusal_reaches_send_command_on_a_slow_link(
    robot: SerialRobot, emulator: EmulatorProcess
) -> None:
    """The device's states are 50 ms in flight: those sent before it read the command arrive
    after the command was sent, and must not be taken for its answer (as two states were)."""
    robot.arm()
    robot.brakes(True)
    emulator.set_faults(delay_tx=0.05)
    try:
        for _ in range(100):  # 100 ms: 50 ms of states are in flight from now on
            robot.step()
        command = NJointCommand.from_action(NJointAction.Position(robot.description.home))
        with pytest.raises(CommandRefused) as info:
            robot.send_command(command)
        assert info.value.reason == "braked"
    finally:
        emulator.set_faults(Faults())
    robot.brakes(False)


def _fall_while_disarmed(robot: SerialRobot, emulator: EmulatorProcess) -> np.ndarray:
    """Hold a loaded pose, disarm, and let 1.5 s of device time pass without a step (a pause,
    a loaded host): the arm falls to rest far from the last state the host took. Returns
    the pose it held."""
    d = robot.description
    pose = np.clip(d.home + np.array([0.3, 0.5, -0.6, 0.0, 0.4, 0.0]), d.lower, d.upper)
    robot.arm()
    hold(robot, 300, pose)
    robot.disarm()
    start = emulator.report().tick
    while emulator.report().tick - start < 1500:
        time.sleep(0.05)
    return pose


def test_arming_holds_where_the_arm_rests_not_where_the_last_step_saw_it(
    robot: SerialRobot, emulator: EmulatorProcess
) -> None:
    """arm() must hold the pose the device latched, not pull the arm back to the last step's
    state (it did: about 1 rad on the shoulder and the elbow)."""
    pose = _fall_while_disarmed(robot, emulator)
    robot.arm()
    robot.step()
    armed_at = robot.read().position.copy()
    assert np.abs(armed_at - pose).max() > 0.5  # it fell while the host looked away
    for _ in range(300):
        robot.step()
    assert np.abs(robot.read().position - armed_at).max() < 2e-3


def test_a_reset_right_after_arming_starts_its_move_where_the_arm_rests(
    robot: SerialRobot, emulator: EmulatorProcess
) -> None:
    """The minimum-jerk move of reset() starts at the joints' present position, not at the
    last step's state (it did: its first target was that stale pose, about 1 rad away, and
    the joints were yanked at 3 to 6 times their configured speed)."""
    pose = _fall_while_disarmed(robot, emulator)
    robot.arm()
    first: list[np.ndarray] = []

    class FirstTarget:
        def on_step(self, robot_: SerialRobot) -> None:
            if not first:
                first.append(robot_.last_action.position.copy())
                first.append(robot_.read().position.copy())

        def on_refusal(self, robot_: SerialRobot, verb: str, reason: str) -> None:
            pass

    undo = robot.listen(FirstTarget())
    try:
        state = robot.reset(pose)
    finally:
        undo()
    target, where = first
    assert np.abs(where - pose).max() > 0.5  # it starts from where it fell
    assert np.abs(target - where).max() < 0.01  # one period along the blend from there
    np.testing.assert_allclose(state.position, pose, atol=0.02)


def test_power_off_disarms_and_refuses_arm(robot: SerialRobot) -> None:
    robot.arm()
    robot.power(False)
    state = robot.read()
    assert not state.motor_power and not state.armed and not robot.armed
    robot.step()
    assert not robot.read().motor_power  # the device's next state agrees
    with pytest.raises(CommandRefused) as info:
        robot.apply(NJointAction.Position(robot.description.home))
    assert info.value.reason == "unpowered"
    with pytest.raises(CommandRefused) as info:
        robot.arm()
    assert info.value.reason == "unpowered"
    robot.power(True)
    robot.arm()


def test_wrong_actions_are_action_errors(robot: SerialRobot) -> None:
    with pytest.raises(ActionError, match="expected 6"):
        robot.apply(NJointAction.Zero(3))
    with pytest.raises(ActionError, match=r"NJointAction\.position has length 5"):
        robot.apply(NJointAction.Position(np.zeros(5)))
    with pytest.raises(ActionError):
        robot.apply(np.zeros(6))  # type: ignore[arg-type]


# ------------------------------------------------------------------ requests
def test_geometry_and_configured_speed(robot: SerialRobot) -> None:
    expected = robot.description.geometry()
    geometry = robot.geometry()
    assert len(geometry.actuators) == 6
    for got, want in zip(geometry.actuators, expected.actuators, strict=True):
        assert got.type == want.type and got.has_brakes == want.has_brakes
        assert got.max == pytest.approx(want.max, rel=1e-6)
    robot.configure_speed("elbow", 0.5)
    robot.configure_accel(2, 2.0)
    assert robot.geometry().actuators[2].config_speed == pytest.approx(0.5)
    assert robot.config_speed[2] == pytest.approx(0.5)
    assert robot.config_accel[2] == pytest.approx(2.0)


def test_player_position_and_home_commands_move_the_joint(robot: SerialRobot) -> None:
    robot.arm()
    robot.reset()
    robot.send_command(PositionCommand(0, 0.05))
    state = step_until(robot, lambda s: abs(s.position[0] - 0.05) < 0.005, max_steps=3000)
    assert abs(state.position[0] - 0.05) < 0.005
    robot.send_command(HomeCommand(-1))
    state = step_until(robot, lambda s: abs(s.position[0]) < 0.005, max_steps=3000)
    assert abs(state.position[0]) < 0.005


def test_heartbeat_measures_a_round_trip(robot: SerialRobot) -> None:
    assert robot.heartbeat() > 0


# ------------------------------------------------------------------ reset
def test_reset_moves_to_q_holds_and_restarts_time(robot: SerialRobot) -> None:
    robot.arm()
    target = robot.description.home + np.array([0.1, -0.05, 0.0, 0.0, 0.0, 0.0])
    state = robot.reset(target)
    assert state.time == 0.0 and robot.time == 0.0
    np.testing.assert_allclose(state.position, target, atol=0.02)
    assert robot.last_action == NJointAction.Position(target, velocity=np.zeros(6))


def test_reset_refuses_to_move_a_disarmed_robot(robot: SerialRobot) -> None:
    far = robot.description.home + 0.3
    with pytest.raises(CommandRefused, match="disarmed"):
        robot.reset(far)
    with pytest.raises(ConfigurationError, match="outside"):
        robot.reset(np.full(6, 100.0))
    with pytest.raises(ConfigurationError, match="qd"):
        robot.reset(qd=np.ones(6))


# ------------------------------------------------------------------ lifetime
def test_close_is_idempotent_and_final(emulator: EmulatorProcess) -> None:
    emulator.reset()
    robot = SerialRobot(emulator.path, "arm6", **PATIENT)
    robot.close()
    robot.close()
    for verb in (lambda: robot.apply(NJointAction.Zero(6)), robot.step, robot.read, robot.arm):
        with pytest.raises(RobotClosed, match="closed") as info:
            verb()
        assert info.value.reason == "closed"
