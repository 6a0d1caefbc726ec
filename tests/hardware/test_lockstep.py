"""The emulator's lockstep (virtual-time) mode, seen through SerialRobot.

In lockstep the device ticks only when the host's ``step()`` asks (REQ STEP), so what a
program does is independent of the machine's load and reproducible bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hardware_helpers import PATIENT, emulator_process

import jointlab
from jointlab.contract import Robot
from jointlab.controllers import Commander
from jointlab.errors import ConfigurationError, LinkError
from jointlab.hardware import EmulatorProcess, Faults, SerialRobot
from jointlab.hardware.protocol import PositionCommand, SpeedCommand
from jointlab.interface import NJointAction
from jointlab.sim import SimRobot


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorProcess]:
    with emulator_process("arm6", lockstep=True) as process:
        yield process


def connect(emulator: EmulatorProcess, **options: object) -> SerialRobot:
    emulator.reset()
    emulator.set_faults(Faults())
    return SerialRobot(emulator.path, "arm6", lockstep=True, **{**PATIENT, **options})


def wave(robot: Robot, steps: int = 150) -> list[bytes]:
    """A sine on every joint; the states as the bytes of their float arrays."""
    robot.arm()
    home = robot.description.home
    states = []
    for k in range(steps):
        robot.apply(NJointAction.Position(home + 0.2 * np.sin(0.05 * k)))
        robot.step()
        state = robot.read()
        states.append(np.concatenate([state.position, state.velocity, state.torque]).tobytes())
    return states


def test_a_lockstep_run_is_reproducible_bit_for_bit(emulator: EmulatorProcess) -> None:
    runs = []
    for _ in range(2):
        with connect(emulator, stream_period=5) as robot:
            assert not robot.realtime and robot.control_dt == pytest.approx(0.005)
            runs.append(wave(robot))
            assert robot.time == pytest.approx(150 * 0.005)
    assert runs[0] == runs[1]
    assert emulator.report().tick == 150 * 5  # exactly the ticks asked for


def test_a_lost_step_request_is_sent_again_and_runs_its_ticks_once(
    emulator: EmulatorProcess,
) -> None:
    """REQ STEP names the tick to reach, so a retry after a lost frame cannot tick twice."""
    outcomes = []
    # each step() sends the hold in force again, then a STEP: frames 1, 3, 5 ... are STEPs
    for faults in (Faults(), Faults(drop_rx_frames=(3, 22, 31))):  # two STEPs and a hold
        with connect(emulator, request_timeout=0.25, dead_ms=500) as robot:
            robot.arm()
            robot.apply(NJointAction.Position(robot.description.home))
            robot.step()
            start = emulator.set_faults(faults)
            positions = []
            for _ in range(20):
                robot.step()
                positions.append(robot.read().position.tobytes())
            report = emulator.set_faults(Faults())
        assert report.tick - start.tick == 20  # each step ran its tick once, retried or not
        frames = report.rx.frames - start.rx.frames  # a hold and a STEP per step, and retries
        outcomes.append((positions, report.rx_dropped - start.rx_dropped, frames))
    (clean, _, _), (lossy, dropped, frames) = outcomes
    assert dropped == 3 and frames >= 40 + 2  # the two lost STEPs were sent again
    assert lossy == clean  # the lost hold changed nothing: the same hold came a period later


def test_the_clock_mode_must_match_and_the_error_says_which_url_to_use(
    emulator: EmulatorProcess,
) -> None:
    emulator.reset()
    with pytest.raises(LinkError, match=r"lockstep \(virtual time\): connect with \?lockstep=1"):
        SerialRobot(emulator.path, "arm6", **PATIENT)
    with emulator_process("planar2") as realtime:
        with pytest.raises(LinkError, match=r"own clock \(real time\).*\?lockstep=0"):
            SerialRobot(realtime.path, "planar2", lockstep=True, **PATIENT)


def test_reset_sets_the_state_as_a_simulator_does(emulator: EmulatorProcess) -> None:
    q = emulator_home() + np.array([0.2, -0.1, 0.1, 0.0, 0.3, 0.0])
    qd = np.array([0.1, 0.0, -0.2, 0.0, 0.0, 0.5])
    with connect(emulator) as robot, SimRobot("arm6") as sim:
        robot.arm()
        robot.apply(NJointAction.Position(q))
        for backend in (robot, sim):
            state = backend.reset(q, qd)
            assert state.time == 0.0 and backend.last_action.is_zero and state.armed
            np.testing.assert_allclose(state.position, q, atol=1e-6)
            np.testing.assert_allclose(state.velocity, qd, atol=1e-6)
        with pytest.raises(ConfigurationError, match="outside"):
            robot.reset(np.full(6, 100.0))


def emulator_home() -> np.ndarray:
    return jointlab.load_robot("arm6").home


def test_cmd_speed_right_after_cmd_pos_moves_both_joints(emulator: EmulatorProcess) -> None:
    """Issue 13's report: the second joint must not stay at rest (the device's queue)."""
    home = emulator_home()
    with connect(emulator) as robot:
        robot.arm()
        robot.reset()
        robot.apply(NJointAction.Position(home))
        robot.step()
        robot.send_command(PositionCommand(0, float(home[0]) + 0.2), wait=False)
        robot.send_command(SpeedCommand(1, 0.2), wait=False)  # taken in the same tick
        for _ in range(400):
            robot.step()  # sends the SPEED again every period: the watchdog stays fed
        state = robot.read()
    assert state.position[0] == pytest.approx(home[0] + 0.2, abs=5e-3)
    assert state.velocity[1] == pytest.approx(0.2, abs=2e-2)
    assert state.position[1] - home[1] > 0.05


@pytest.mark.parametrize("backend", ["sim", "lockstep"])
def test_commander_velocity_right_after_position_moves_both_joints(
    emulator: EmulatorProcess, backend: str
) -> None:
    robot: Robot = SimRobot("arm6") if backend == "sim" else connect(emulator)
    with robot:
        robot.arm()
        home = robot.description.home
        commander = Commander(robot)
        moved = commander.set_position(0, home[0] + 0.2)
        runs = commander.set_velocity(1, 0.2, duration=0.4)
        assert commander.wait(timeout=3.0)
        assert moved.succeeded and runs.succeeded
        position = robot.read().position
    assert position[0] == pytest.approx(home[0] + 0.2, abs=2e-3)
    assert position[1] - home[1] > 0.05
