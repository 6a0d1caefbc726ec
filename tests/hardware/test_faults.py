"""Fault injection on the emulator: corrupted bytes, silence, stalls, drops and delays."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest
from hardware_helpers import emulator_process, hold, serial_robot, step_until

from jointlab.errors import LinkError
from jointlab.hardware import EmulatorProcess, Faults, SerialRobot
from jointlab.hardware.protocol import CmdType, NJointCommand
from jointlab.interface import NJointAction


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorProcess]:
    with emulator_process("arm6") as process:
        yield process


def test_corrupted_commands_are_never_applied_and_the_rest_apply_in_order(
    emulator: EmulatorProcess,
) -> None:
    with serial_robot(emulator) as robot:
        robot.arm()
        hold(robot, 10)
        start = emulator.set_faults(corrupt_rx=0.01, seed=3)
        sent: dict[int, bytes] = {}
        for i in range(300):
            target = robot.description.home + np.array([1e-4 * i, 0, 0, 0, 0, 0])
            command = NJointCommand.from_action(NJointAction.Position(target))
            sent[robot.send_command(command, wait=False)] = command.pack()
            robot.step()
        report = emulator.set_faults(Faults())
    applied = [
        a
        for a in report.applied
        if a.seq in sent and a.tick > start.tick and a.msg_type == CmdType.NJOINT
    ]
    seqs = [a.seq for a in applied]
    assert len(applied) > 30  # about 27 % of 133-byte frames survive 1 % byte errors
    assert seqs == sorted(set(seqs)), "commands applied out of order or twice"
    assert all(a.payload == sent[a.seq] for a in applied), "a corrupted command was applied"
    assert report.rx_corrupted > 0
    rx = report.rx
    assert rx.crc_errors + rx.cobs_errors + rx.runts > len(sent) - len(applied) - 5
    assert rx.sequence_gaps > 0  # the frames lost show up as gaps in the sequence numbers


def test_corrupted_states_are_dropped_and_counted_by_the_host(emulator: EmulatorProcess) -> None:
    with serial_robot(emulator) as robot:
        robot.arm()
        home = robot.description.home
        action = NJointAction.Position(home)
        robot.apply(action)  # sent again by every step(): hold home until the arm is there
        step_until(robot, lambda s: np.abs(s.position - home)[:3].max() < 0.01)
        emulator.set_faults(corrupt_tx=0.01, seed=5)
        positions = []
        for _ in range(200):
            robot.apply(action)
            robot.step()
            positions.append(robot.read().position)
        emulator.set_faults(Faults())
        stats = robot.link_stats
    assert stats.crc_errors + stats.cobs_errors + stats.runts > 0
    assert stats.frames_missed > 0
    np.testing.assert_allclose(
        np.array(positions)[:, :3], [robot.description.home[:3]] * 200, atol=0.05
    )


def test_link_silence_engages_the_watchdog_within_its_timeout_plus_one_tick(
    emulator: EmulatorProcess,
) -> None:
    with serial_robot(emulator, watchdog_ms=30) as robot:
        robot.arm()
        hold(robot, 10)
        emulator.set_faults(drop_rx=1.0)  # the device stops hearing the host
        state = step_until(robot, lambda s: s.watchdog, max_steps=5000)  # reported in the state
        report = emulator.set_faults(Faults())
        assert state.watchdog and report.watchdog_tick > 0
    # Measured on the device clock, from the tick the last command took effect: the host may
    # be late or skip states on a busy machine, the device's record is exact.
    last = max(a.tick for a in report.applied if a.tick <= report.watchdog_tick)
    assert 30 <= report.watchdog_tick - last <= 31
    assert round(robot.device_time * 1000) >= report.watchdog_tick


def test_device_silence_raises_link_error_within_the_dead_time(emulator: EmulatorProcess) -> None:
    with serial_robot(emulator, dead_ms=300) as robot:
        robot.arm()
        hold(robot, 10)
        emulator.set_faults(drop_tx=1.0)
        with pytest.raises(LinkError, match="no DATA STATE") as info:
            for _ in range(100_000):
                robot.apply(NJointAction.Position(robot.description.home))
                robot.step()
        assert "?dead_ms=" in str(info.value)  # the message says which URL setting to change
        assert robot.dead
        with pytest.raises(LinkError, match="dead"):  # refused until reconnected
            robot.apply(NJointAction.Zero(6))
        with pytest.raises(LinkError, match="dead"):
            robot.arm()
        emulator.set_faults(Faults())
        robot.reconnect()
        assert not robot.dead and not robot.armed
        robot.step()


def test_a_stalled_device_fails_requests_after_one_retry(emulator: EmulatorProcess) -> None:
    emulator.reset()
    with SerialRobot(emulator.path, "arm6", request_timeout=0.05, dead_ms=5000) as robot:
        before = emulator.stall(0.6).rx.frames
        with pytest.raises(LinkError, match="no reply to HeartbeatRequest") as info:
            robot.heartbeat()
        assert "sent twice" in str(info.value) and "?timeout=" in str(info.value)
        after = emulator.report().rx.frames  # answered once the stall is over
        assert after - before == 2  # the request and its one retry, nothing more
        robot.reconnect()
        assert robot.heartbeat() > 0


def test_dropped_states_are_counted_as_sequence_gaps(emulator: EmulatorProcess) -> None:
    with serial_robot(emulator) as robot:
        emulator.set_faults(drop_tx=0.2, seed=1)
        for _ in range(100):
            robot.step()
        emulator.set_faults(Faults())
        stats = robot.link_stats
    assert stats.sequence_gaps > 0 and stats.frames_missed >= stats.sequence_gaps
    assert stats.crc_errors == 0


def test_delayed_replies_lengthen_the_round_trip(emulator: EmulatorProcess) -> None:
    with serial_robot(emulator) as robot:
        emulator.set_faults(delay_tx=0.01)
        round_trip = robot.heartbeat()
        emulator.set_faults(Faults())
    assert round_trip >= 0.01


def test_frames_stay_in_order_when_the_delay_is_lowered(emulator: EmulatorProcess) -> None:
    """50 ms of states are delayed when the delay is removed: the new frames wait behind them
    (they overtook them: the host's time went back, and a reply could pass older states)."""
    with serial_robot(emulator) as robot:
        emulator.set_faults(delay_tx=0.05)
        for _ in range(100):
            robot.step()
        emulator.set_faults(Faults())
        times = []
        for _ in range(100):
            robot.step()
            times.append(robot.device_time)
        stats = robot.link_stats
    assert np.all(np.diff(times) > 0)
    assert stats.out_of_order == 0 and stats.sequence_gaps == 0


def test_a_host_that_was_descheduled_does_not_declare_a_live_device_dead(
    emulator: EmulatorProcess,
) -> None:
    """Silence counts only while no bytes wait unread: those mean *we* were late, not it."""
    with serial_robot(emulator, dead_ms=200) as robot:
        robot.arm()
        hold(robot, 5)
        link = robot._link  # the host's link: holding its lock stalls the reader thread
        with link.cond:
            time.sleep(0.5)  # the host is descheduled for 2.5 dead times
            robot.step()  # the first look at the clock sees 500 ms of silence, bytes waiting
        assert not robot.dead
        hold(robot, 5)
