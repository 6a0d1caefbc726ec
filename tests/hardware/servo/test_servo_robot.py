"""ServoBusRobot on emulated buses: capabilities, refusals, bad input before motion, bus errors."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from servo_helpers import emulated_bus

import jointlab
from jointlab.errors import ActionError, CommandRefused, ConfigurationError, LinkError
from jointlab.hardware.servo_emulator.emulator import BusFaults
from jointlab.hardware.servo_host.robot import ServoBusRobot
from jointlab.interface import ActuatorState, NJointAction
from jointlab.robots import dump_yaml, load_robot

FAST = "lockstep=1"


@pytest.fixture(scope="module")
def koch():
    with jointlab.connect(f"emulated://koch?{FAST}") as robot:
        yield robot


def test_a_servo_robot_starts_disarmed_and_reads_every_quantity(koch) -> None:
    state = koch.read()
    assert not state.armed and state.motor_power and not state.brakes
    np.testing.assert_allclose(state.position, koch.description.home, atol=2e-3)
    assert set(state.extras) >= {"temperature", "voltage", "hardware_error"}
    np.testing.assert_allclose(state.extras["voltage"], [11.1, 11.1, 5, 5, 5, 5])
    assert state.actuator_state.dtype == np.uint8
    with pytest.raises(CommandRefused) as info:
        koch.apply(NJointAction.Position(koch.description.home))
    assert info.value.reason == "disarmed"


def test_capabilities_per_model(koch) -> None:
    """XL430 joints are position-only; XL330 joints run the host law on goal current."""
    koch.arm()
    home = koch.description.home
    torque = np.zeros(6)
    torque[0] = 0.1  # on an XL430: no current control
    with pytest.raises(
        CommandRefused, match=r"servo id 1, xl430-w250\) has no current control"
    ) as info:
        koch.apply(NJointAction.TorqueAndPosition(torque, home))
    assert info.value.reason == "unsupported_by_device"
    with pytest.raises(CommandRefused, match="needs a target position") as info:
        koch.apply(NJointAction(np.zeros(6), np.r_[np.nan, home[1:]]))
    assert info.value.reason == "unsupported_by_device"
    torque = np.zeros(6)
    torque[2] = 0.05  # on an XL330 in current mode: accepted, sent as goal current
    action = NJointAction.TorqueAndPosition(torque, home)
    koch.apply(action)
    for _ in range(60):
        koch.step()
    assert koch.last_action == action
    state = koch.read()
    assert state.armed and abs(state.position[0] - home[0]) < 0.02
    assert koch.read_register("shoulder_pan", "bus_watchdog") == 5  # 100 ms while armed
    with pytest.raises(ActionError):
        koch.apply(NJointAction.Zero(5))
    with pytest.raises(CommandRefused) as info:
        koch.brakes(True)
    assert info.value.reason == "no_brakes"  # as on every backend without brakes
    koch.brakes(False)  # releasing brakes that do not exist is harmless
    koch.disarm()
    assert koch.read_register("shoulder_pan", "torque_enable") == 0
    assert koch.read_register("shoulder_pan", "bus_watchdog") == 0


def test_a_fired_bus_watchdog_shows_in_the_state_and_the_next_goals_clear_it(koch) -> None:
    """Dynamixel Bus Watchdog: the servos stop when the host falls silent; read() says so."""
    koch.arm()
    home = koch.description.home
    koch.apply(NJointAction.Position(home))
    koch.step()
    # 300 ms of firmware time without an instruction, as if the program had stopped calling
    # step(): every servo's watchdog (100 ms) fires and it holds where it is.
    koch.emulator.advance(0.3, koch.driver.bytes_written)
    assert koch.read_register("shoulder_pan", "bus_watchdog") == -1  # fired
    target = home + np.array([0.2, 0.0, 0.0, 0.0, 0.0, 0.0])
    koch.apply(NJointAction.Position(target))
    flags = []
    for _ in range(60):  # the host reads the watchdog once per watchdog period (20 cycles)
        koch.step()
        flags.append(koch.read().watchdog)
    assert flags.count(True) == 1  # the state of the cycle that found and cleared it
    assert koch.read_register("shoulder_pan", "bus_watchdog") == 5  # set again
    assert koch.read().position[0] - home[0] > 0.15  # the goals take effect again
    koch.disarm()


def test_refusals_name_the_servo_before_any_motion() -> None:
    with jointlab.connect(f"emulated://so101?{FAST}") as robot:
        robot.arm()
        held = robot.last_action  # arming holds the present pose (gravity in the targets)
        assert np.abs(held.position - robot.read().position).max() < 0.1
        target = robot.description.home.copy()
        target[2] = robot.description.upper[2] + 0.2  # beyond the calibrated range
        with pytest.raises(CommandRefused, match=r"servo id 3.*calibrated range") as info:
            robot.apply(NJointAction.Position(target))
        assert info.value.reason == "out_of_limits"
        with pytest.raises(CommandRefused, match="beyond its registers") as info:
            robot.apply(NJointAction.Position(robot.description.home, kp=np.full(6, 1e4)))
        assert info.value.reason == "out_of_range"
        assert robot.last_action == held  # the refused actions changed nothing
        robot.power(False)
        assert robot.read_register(0, "torque_enable") == 0 and not robot.read().motor_power
        with pytest.raises(CommandRefused) as info:
            robot.apply(NJointAction.Position(robot.description.home))
        assert info.value.reason == "unpowered"


def test_an_uncalibrated_arm_refuses_to_arm_and_says_how_to_calibrate() -> None:
    with jointlab.connect(f"emulated://so101?{FAST}&calibrated=0") as robot:
        with pytest.raises(CommandRefused, match="jointlab calibrate feetech://") as info:
            robot.arm()
        assert info.value.reason == "uncalibrated"


def write_robot(tmp_path, name: str, change) -> str:
    data = yaml.safe_load(dump_yaml(load_robot(name)))
    change(data)
    path = tmp_path / f"{name}_changed.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_bad_bus_input_is_named_with_its_fix(tmp_path) -> None:
    """Absent id, wrong model, wrong mode, baud mismatch: errors at connect, before motion."""
    absent = write_robot(tmp_path, "so101", lambda d: d["bus"]["servos"]["gripper"].update(id=9))

    def wrong_model(data: dict) -> None:
        data["bus"]["servos"]["elbow_flex"].update(model="xl430-w250", mode="position")

    model = write_robot(tmp_path, "koch", wrong_model)
    with emulated_bus("so101", lockstep=True) as bus:
        with pytest.raises(ConfigurationError, match=r"servo id 9 \(gripper\) does not answer"):
            ServoBusRobot(bus.path, absent, timeout_ms=400, retries=4)
        with pytest.raises(ConfigurationError, match=r"no servo answers .* at 500000 bit/s.*baud"):
            ServoBusRobot(bus.path, "so101", baud=500_000, timeout_ms=50, retries=0)
        assert bus.report().garbled > 0
    with emulated_bus("koch", lockstep=True) as bus:
        with pytest.raises(
            ConfigurationError, match=r"servo id 3 \(elbow_flex\) reports model number 1200"
        ):
            ServoBusRobot(bus.path, model, timeout_ms=400, retries=4)
    mode = write_robot(
        tmp_path, "koch", lambda d: d["bus"]["servos"]["elbow_flex"].update(mode="position")
    )
    with emulated_bus("koch", lockstep=True) as bus:
        with pytest.raises(
            ConfigurationError, match=r"servo id 3 \(elbow_flex\) runs 'current'.*configure=True"
        ):
            ServoBusRobot(bus.path, mode, timeout_ms=400, retries=4)
        with ServoBusRobot(bus.path, mode, timeout_ms=400, retries=4, configure=True) as robot:
            assert robot.read_register("elbow_flex", "operating_mode") == 3


def test_bus_errors_are_counted_retried_and_reported_with_the_servo_id() -> None:
    with jointlab.connect(f"emulated://so101?{FAST}&timeout_ms=150&retries=6") as robot:
        robot.emulator.set_faults(corrupt_status={2: 0.2}, drop_status={4: 0.1}, seed=1)
        for _ in range(30):
            robot.step()  # every state still arrives: retried within the budget
        stats = robot.driver.stats
        assert stats.corrupt[2] > 0 and stats.missing[4] > 0 and stats.retries > 0
        robot.emulator.set_faults(drop_status={3: 1.0})
        with pytest.raises(
            LinkError, match=r"servo id 3 \(elbow_flex\).*no status packet.*latency_timer"
        ):
            robot.step()
        robot.emulator.set_faults(BusFaults())
        robot.emulator.inject(5, 0x20)  # overload: the servo shuts down, the state says so
        robot.step()
        state = robot.read()
        assert state.extras["hardware_error"][4] and state.actuator_state[4] & ActuatorState.STALLED
        robot.reboot("wrist_roll")
        robot.step()
        assert not robot.read().extras["hardware_error"][4]
