"""One rule for every loop that can move a robot, proved by a property test.

When a robot faults (:data:`jointlab.faults.FAULTS`: a device's protection, a lost servo, a
dead link), every loop follows :func:`jointlab.faults.stop_after_fault`: the fault goes into
the loop's log as a ``fault`` event (where it has one), the joints hold where they are for
one period (:func:`jointlab.holding.hold_action`), the robot disarms, and the loop ends with
the error (raised, or in a teleoperation summary).

The robot is a simulated SO-101 whose ``step`` raises a drawn fault at a drawn tick
(``FaultingRobot`` of tests/faulting_robot.py, also reachable as the URL
``faulty://so101?at=K&fault=KIND``, for the loops that connect their own robot). It
records everything the loop does to it after the fault, so the test checks the whole rule:
the first thing applied is the hold at the present position, then one period, then the
disarm; nothing else moves it afterwards. Each loop: ``run()`` with a controller, with a
Commander and recorder, a command program (``jointlab run``'s path, from its arming step),
``Commander.wait``, ``Teleop.run``, ``record_teleop`` and ``record_program`` (``jointlab
record``'s paths), replaying a log and a dataset episode (``jointlab replay``), a device's
reset move, a Gymnasium env's ``step`` on a robot and on a URL, the LeRobot bridge's
``send_action`` (the ``jointlab`` LeRobot robot plugin's worker), and ``jointlab view``'s
hold loop (the LeRobot plugin itself:
tests/interop/test_lerobot_plugin_fault_rule.py). The ROS 2 bridge's loop:
tests/ros2/test_bridge_fault_rule.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from faulting_robot import (
    BUILT,
    DESCRIPTION,
    FaultingRobot,
    assert_the_rule,
    faults,
    robot_for,
    target_of,
    url_for,
)
from hypothesis import given, settings

from jointlab.controllers import Commander, run
from jointlab.errors import DeviceFault, LinkError
from jointlab.interface import NJointAction
from jointlab.recording import Recorder, load_log
from jointlab.sim import SimRobot

#: Examples per loop: each is a fresh simulated robot (about 50 ms) and a short loop.
EXAMPLES = 12


def fault_events(path: Path) -> list[Any]:
    return [e for e in load_log(path).events if e.kind == "fault"]


def assert_logged(path: Path, robot: FaultingRobot) -> None:
    """The log has exactly one ``fault`` event, with the fault's message, joint and reasons."""
    events = fault_events(path)
    assert len(events) == 1, events
    fields = events[0].fields
    fault = robot.fault
    assert fields["message"] == " ".join(str(fault).split())
    assert fields["error"] == type(fault).__name__
    if isinstance(fault, DeviceFault):
        assert fields["joint"] == fault.joint and fields["reasons"] == list(fault.reasons)


class Toward:
    """A controller: a position target away from the start (the run is moving)."""

    def __init__(self, target: np.ndarray) -> None:
        self.target = target

    def reset(self, state: Any) -> None:
        pass

    def compute(self, state: Any) -> NJointAction:
        return NJointAction.Position(self.target)


@pytest.fixture(scope="module")
def faults_logged(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[FaultingRobot, Callable[[Recorder], Any]], None]:
    """``check(robot, loop)``: ``loop(recorder)`` raises the fault, follows the rule, logs it.

    Each call records into a fresh log (hypothesis examples share a test's fixtures).
    """
    folder = tmp_path_factory.mktemp("logs")
    count = itertools.count()

    def check(robot: FaultingRobot, loop: Callable[[Recorder], Any]) -> None:
        path = folder / f"log{next(count)}.npz"
        with Recorder(path) as recorder, pytest.raises((DeviceFault, LinkError)) as info:
            loop(recorder)
        assert_the_rule(robot, info.value)
        assert_logged(path, robot)

    return check


# ====================================================================== the loops
@settings(max_examples=EXAMPLES)
@given(fault=faults(40))
def test_run_with_a_controller(fault, faults_logged) -> None:
    with robot_for(fault) as robot:
        robot.arm()
        controller, duration = Toward(target_of(robot)), 60 * robot.control_dt
        faults_logged(robot, lambda log: run(robot, controller, duration=duration, recorder=log))


@settings(max_examples=EXAMPLES)
@given(fault=faults(40))
def test_run_with_a_commander_until_idle(fault, faults_logged) -> None:
    with robot_for(fault) as robot:
        robot.arm()
        commander = Commander(robot)
        commander.set_positions(target_of(robot), duration=60 * robot.control_dt)
        faults_logged(robot, lambda log: run(robot, commander, recorder=log))


@settings(max_examples=EXAMPLES)
@given(fault=faults(40))
def test_a_command_program(fault, faults_logged) -> None:
    """``jointlab run``'s loop: the program's steps, each a ``run()`` of the Commander."""
    from jointlab.program import run_program

    with robot_for(fault) as robot:
        robot.disarm()  # as a robot on a bus starts: the program arms it (its first step)
        target = [float(x) for x in target_of(robot)]
        program = [
            {"set_positions": {"positions": target, "duration": 0.02}},
            {"wait": 0.02},
            {"home": {}},
        ]
        faults_logged(robot, lambda log: run_program(robot, program, recorder=log))


@settings(max_examples=EXAMPLES)
@given(fault=faults(40))
def test_commander_wait(fault) -> None:
    """A command driven to completion by ``Commander.wait`` (``drive_until_done``)."""
    with robot_for(fault) as robot:
        robot.arm()
        commander = Commander(robot)
        handle = commander.set_positions(target_of(robot), duration=60 * robot.control_dt)
        with pytest.raises((DeviceFault, LinkError)) as info:
            commander.wait(handle)
        assert_the_rule(robot, info.value)


def scripted_leader(robot: SimRobot) -> Any:
    from jointlab.teleop import ScriptedTeleoperator

    start = robot.read().position.copy()
    return ScriptedTeleoperator(
        DESCRIPTION.joint_names,
        DESCRIPTION.lower,
        DESCRIPTION.upper,
        lambda k: np.clip(start + 0.01 * k, DESCRIPTION.lower, DESCRIPTION.upper),
    )


@settings(max_examples=EXAMPLES)
@given(fault=faults(40))
def test_teleop_run(fault) -> None:
    """``Teleop.run`` returns a summary: stopped by the fault (or the link), with its message."""
    from jointlab.teleop import Teleop

    with robot_for(fault) as robot:
        summary = Teleop(scripted_leader(robot), robot).run(periods=60)
        assert_the_rule(robot)
        expected = "link" if isinstance(robot.fault, LinkError) else "fault"
        assert summary.stopped_by == expected
        assert summary.error == str(robot.fault)
        assert summary.periods == robot.at - 1  # the faulted period did not count


class ListWriter:
    """A dataset writer keeping frames in lists (the loop is under test, not LeRobot's files)."""

    def __init__(self) -> None:
        self.frames: list[Any] = []
        self.episodes: list[list[Any]] = []
        self.discarded = 0

    def add_frame(self, state: Any, target: Any, task: str, images: Any = None) -> None:
        self.frames.append((state, target))

    def save_episode(self) -> int:
        self.episodes.append(self.frames)
        self.frames = []
        return len(self.episodes) - 1

    def discard_episode(self) -> None:
        self.discarded += bool(self.frames)
        self.frames = []


@settings(max_examples=EXAMPLES)
@given(fault=faults(63))  # 3 episodes of 20 periods and a hold
def test_record_teleop(fault) -> None:
    """``jointlab record --leader``: the episode in progress is dropped, saved ones kept."""
    from jointlab.interop.record import record_teleop
    from jointlab.teleop import Teleop

    with robot_for(fault) as robot:
        writer = ListWriter()
        teleop = Teleop(scripted_leader(robot), robot)
        with pytest.raises((DeviceFault, LinkError)) as info:
            record_teleop(writer, teleop, "task", episodes=3, frames=10, every=2)
        assert_the_rule(robot, info.value)
        # 20 periods an episode, then the hold of its stop: saved before that hold
        assert len(writer.episodes) == robot.at // 21
        assert writer.frames == [] and all(len(e) == 10 for e in writer.episodes)


@settings(max_examples=EXAMPLES)
@given(fault=faults(60))
def test_record_program(fault) -> None:
    """``jointlab record --program``: the program's run() holds and disarms; episode dropped."""
    from jointlab.interop.record import record_program

    with robot_for(fault) as robot:
        writer = ListWriter()
        program = [{"wait": 0.02}]
        with pytest.raises((DeviceFault, LinkError)) as info:
            record_program(writer, robot, program, "task", episodes=3)
        assert_the_rule(robot, info.value)
        assert writer.frames == []
        assert all(len(e) == 20 for e in writer.episodes) and len(writer.episodes) < 3


def _step_env_until_it_raises(env: Any) -> BaseException:
    env.reset(seed=0)
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    with pytest.raises((DeviceFault, LinkError)) as info:
        for _ in range(100):
            env.step(zero + 0.5)
    return info.value


@settings(max_examples=EXAMPLES)
@given(fault=faults(40))
def test_env_step_on_a_robot(fault) -> None:
    from jointlab.envs import JointLabEnv

    with robot_for(fault) as robot:
        env = JointLabEnv("reach", robot)
        try:
            raised = _step_env_until_it_raises(env)
        finally:
            env.close()
        assert_the_rule(robot, raised)


@settings(max_examples=EXAMPLES // 2)
@given(fault=faults(40))
def test_env_step_on_a_url(fault) -> None:
    import gymnasium

    import jointlab.envs  # noqa: F401 - registers jointlab/Reach-v0

    env = gymnasium.make("jointlab/Reach-v0", backend=url_for(fault)).unwrapped
    try:
        raised = _step_env_until_it_raises(env)
        assert_the_rule(BUILT[-1], raised)
    finally:
        env.close()


@settings(max_examples=EXAMPLES)
@given(fault=faults(150))
def test_lerobot_send_action(fault) -> None:
    """The ``jointlab`` LeRobot robot's ``send_action`` (RobotBridge), then LeRobot's disconnect.

    Each action is about 33 simulated periods (LeRobot's 30 fps), so a fault in a period
    anywhere inside an action is drawn.
    """
    from jointlab.interop.lerobot_bridge import RobotBridge

    bridge = RobotBridge(url_for(fault))
    bridge.connect()
    robot = bridge.robot
    try:
        observation = bridge.observation()
        action = {key: value + 5.0 for key, value in observation.items() if key.endswith(".pos")}
        with pytest.raises((DeviceFault, LinkError)) as info:
            for _ in range(10):
                bridge.send_action(action)
        assert_the_rule(robot, info.value)
    finally:
        bridge.disconnect()  # what LeRobot does next: tries its own hold, which is refused
    assert_the_rule(robot)


@pytest.fixture(scope="module")
def a_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log of 40 periods of a simulated SO-101 moving (for ``jointlab replay LOG``)."""
    path = tmp_path_factory.mktemp("replay") / "log.npz"
    with SimRobot(DESCRIPTION) as robot, Recorder(path) as recorder:
        run(robot, Toward(target_of(robot)), duration=40 * robot.control_dt, recorder=recorder)
    return path


@settings(max_examples=EXAMPLES)
@given(fault=faults(40))
def test_replay_a_log(fault, a_log, faults_logged) -> None:
    """``jointlab replay LOG ROBOT``: the replay's own log gets the fault event."""
    from jointlab.recording.replay import replay

    with robot_for(fault) as robot:
        faults_logged(robot, lambda log: replay(robot, a_log, recorder=log))


@settings(max_examples=EXAMPLES)
@given(fault=faults(60))
def test_replay_a_dataset_episode(fault) -> None:
    """``jointlab replay DATASET ROBOT``: an episode's targets, a frame every 20 periods."""
    from jointlab.interop.dataset import Episode
    from jointlab.interop.replay import replay_episode

    frames = 3
    home = np.tile(DESCRIPTION.home, (frames, 1))
    targets = home + 0.1 * np.arange(1, frames + 1)[:, None]
    episode = Episode(0, "task", 50.0, np.arange(frames) / 50.0, home, home, home, targets)
    with robot_for(fault) as robot:
        with pytest.raises((DeviceFault, LinkError)) as info:
            replay_episode(robot, episode)
        assert_the_rule(robot, info.value)


@settings(max_examples=EXAMPLES)
@given(fault=faults(40))
def test_a_device_reset_move(fault) -> None:
    """A device's ``reset()`` (``record --program`` between episodes): a minimum-jerk move."""
    from jointlab.hardware.host.reset_move import minimum_jerk_move

    with robot_for(fault) as robot:
        with pytest.raises((DeviceFault, LinkError)) as info:
            minimum_jerk_move(robot, target_of(robot))
        assert_the_rule(robot, info.value)


@settings(max_examples=3)  # each serves a live view
@given(fault=faults(40))
def test_jointlab_view(fault, tmp_path_factory) -> None:
    """``jointlab view URL --program P``: the program, then the hold loop until --seconds."""
    from jointlab.cli import main

    program = tmp_path_factory.mktemp("view") / "wait.yaml"
    program.write_text("- wait: 0.02\n")
    status = main(
        ["view", url_for(fault), "--program", str(program), "--seconds", "1", "--port", "0"]
    )
    assert status != 0
    assert_the_rule(BUILT[-1])
