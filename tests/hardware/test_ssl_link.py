"""SSLRobotLink: ControlMessages drive the ssl_robot, in sim and through the emulator."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hardware_helpers import PATIENT

import jointlab
from jointlab.contract import Robot
from jointlab.errors import ConfigurationError, PackingError
from jointlab.hardware import ControlMessage, SSLRobotLink, Team, TriggerMode


@pytest.fixture(params=["pybullet", "mujoco"])
def sim(request: pytest.FixtureRequest) -> Iterator[Robot]:
    with jointlab.connect(f"sim://ssl_robot?engine={request.param}") as robot:
        yield robot


def mean_velocity(link: SSLRobotLink, steps: int, window: int) -> np.ndarray:
    """Run ``steps`` periods; mean base velocity (x, y, w) over the last ``window``."""
    for _ in range(steps - window):
        link.step()
    start = link.robot.read()
    for _ in range(window):
        end = link.step()
    return (end.position[:3] - start.position[:3]) / (end.time - start.time)


def test_body_velocity_is_tracked_in_sim(sim: Robot) -> None:
    link = SSLRobotLink(sim)
    link.drive(0.5, -0.25, 0.0)
    velocity = mean_velocity(link, 1000, 500)
    np.testing.assert_allclose(velocity[:2], [0.5, -0.25], atol=0.01)
    # Driving diagonally it does not turn: nothing but the drive joints touches the field
    # (a floating puck base dragged its tipped chassis and turned at 0.1 rad/s with mu = 1).
    assert abs(velocity[2]) < 1e-3
    assert abs(sim.read().position[2]) < 1e-3


def test_body_frame_is_rotated_by_the_measured_yaw(sim: Robot) -> None:
    link = SSLRobotLink(sim)
    link.drive(0.0, 0.0, 2.0)
    state = sim.read()
    for _ in range(1000):
        state = link.step()
        if state.position[2] >= np.pi / 2:
            break
    link.drive(0.5, 0.0, 0.0)  # body x now points along world y
    velocity = mean_velocity(link, 400, 200)
    assert velocity[1] == pytest.approx(0.5, abs=0.05)
    assert abs(velocity[0]) < 0.05


def test_kicker_fires_on_its_trigger_and_retracts(sim: Robot) -> None:
    link = SSLRobotLink(sim)
    link.drive(0.0, 0.0, 0.0, kick_strength=255, trigger_mode=TriggerMode.STAND_DOWN)
    for _ in range(50):
        state = link.step()
    assert state.position[4] < 1e-3  # stand-down never fires
    link.drive(0.0, 0.0, 0.0, kick_strength=255, trigger_mode=TriggerMode.IMMEDIATE)
    for _ in range(50):
        state = link.step()
    assert state.position[4] > 0.02
    link.drive(0.0, 0.0, 0.0)
    for _ in range(100):
        state = link.step()
    assert state.position[4] < 5e-3


def test_dribbler_turns_at_the_commanded_fraction(sim: Robot) -> None:
    link = SSLRobotLink(sim, dribbler_max_speed=20.0)
    link.drive(0.0, 0.0, 0.0, dribbler_speed=127)
    for _ in range(1000):
        state = link.step()
    assert state.velocity[3] == pytest.approx(20.0, rel=0.1)


def test_wire_bytes_and_addressing(sim: Robot) -> None:
    link = SSLRobotLink(sim, team=Team.YELLOW, robot_id=3)
    message = ControlMessage.from_velocity(Team.YELLOW, 3, 0.2, 0.0, 0.0)
    assert link.command(message.pack())
    assert link.message == message
    assert not link.command(ControlMessage.from_velocity(Team.BLUE, 3, 1.0, 0.0, 0.0))
    assert not link.command(ControlMessage.from_velocity(Team.YELLOW, 4, 1.0, 0.0, 0.0))
    assert link.ignored == 2 and link.message == message
    with pytest.raises(PackingError):
        link.command(b"\x00" * 9)


def test_a_robot_without_the_ssl_joints_is_refused() -> None:
    with (
        jointlab.connect("sim://planar2") as robot,
        pytest.raises(ConfigurationError, match="base_x"),
    ):
        SSLRobotLink(robot)


def test_body_velocity_is_tracked_through_the_emulator() -> None:
    # lockstep: 400 periods are 400 ms of device time however busy the machine is
    with jointlab.connect("emulated://ssl_robot?lockstep=1", **PATIENT) as robot:
        robot.arm()
        link = SSLRobotLink(robot)
        start = robot.read()
        link.drive(0.5, 0.0, 0.0)
        for _ in range(400):
            end = link.step()
    assert end.time - start.time == pytest.approx(0.4)
    travelled = end.position[:3] - start.position[:3]  # 0.5 m/s for 0.4 s, minus a small lag
    np.testing.assert_allclose(travelled, [0.2, 0.0, 0.0], atol=0.04)
