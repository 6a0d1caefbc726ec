"""LeRobot datasets from JointLab: recorded by teleoperation, loaded by LeRobot, replayed.

An emulated leader SO-101 (lockstep, its limp arm moved through the emulator as a person
would) drives ``sim://so101``; three episodes with a sim camera are written by LeRobot's own
writer, loaded by LeRobot's own ``LeRobotDataset`` (offline) and replayed on the emulated
follower with its tracking error. Bad input: an existing folder, another robot's dataset.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import jointlab
from jointlab.interop.cameras import SimCamera
from jointlab.interop.convert import episode_to_log, logs_to_dataset
from jointlab.interop.dataset import (
    ACTION,
    STATE,
    DatasetError,
    DatasetWriter,
    check_features,
    load_episode,
    open_dataset,
)
from jointlab.interop.record import frame_periods, record_program, record_teleop
from jointlab.interop.replay import replay_episode
from jointlab.interop.units import LeRobotUnits
from jointlab.teleop import LeaderArm, Teleop

FPS = 25
FRAMES = 12
EPISODES = 3


def _wave(home: np.ndarray, episode: int, frame: int) -> np.ndarray:
    """Where the scripted person puts the leader arm, rad."""
    return home + 0.25 * np.sin(0.3 * (frame + 1) + episode) * np.array([1, 1, -1, 1, 1, 0.5])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Three teleoperated episodes of sim://so101 with a 64x48 sim camera."""
    root = tmp_path_factory.mktemp("datasets") / "so101-wave"
    leader_robot = jointlab.connect("emulated://so101?lockstep=1")
    follower = jointlab.connect("sim://so101?control_dt=0.005")
    home = np.array(follower.description.home)
    leader_robot.emulator.move(home)
    teleop = Teleop(LeaderArm(leader_robot), follower, max_step=0.05)
    camera = SimCamera("front", follower, 64, 48)
    targets = []

    def person(episode: int, frame: int, sample) -> None:
        targets.append(sample.target)
        leader_robot.emulator.move(_wave(home, episode, frame))

    try:
        with DatasetWriter(root, follower.description, FPS, {"front": (48, 64)}) as writer:
            every = frame_periods(FPS, follower.control_dt)
            saved = record_teleop(
                writer, teleop, "wave the arm", EPISODES, FRAMES, [camera], every, on_frame=person
            )
        armed_after = follower.read().armed
    finally:
        camera.close()
        teleop.leader.close()
        follower.close()
    return root, saved, np.array(targets), armed_after


def test_lerobot_loads_the_recorded_dataset_offline(recorded) -> None:
    root, saved, targets, armed_after = recorded
    assert saved == EPISODES and not armed_after  # the follower held, then disarmed
    dataset = open_dataset(root)
    assert dataset.meta.info["codebase_version"] == "v3.0"
    assert (dataset.num_episodes, dataset.num_frames) == (EPISODES, EPISODES * FRAMES)
    assert dataset.meta.video_keys == ["observation.images.front"]
    assert dataset.meta.robot_type == "so101"
    item = dataset[FRAMES + 4]  # episode 1, frame 4
    assert int(item["episode_index"]) == 1 and int(item["frame_index"]) == 4
    assert item["task"] == "wave the arm"
    assert tuple(item["observation.images.front"].shape) == (3, 48, 64)
    image = item["observation.images.front"].numpy()
    assert 0.0 <= image.min() and image.max() <= 1.0 and image.std() > 0.01  # a real render
    units = LeRobotUnits.of(jointlab.load_robot("so101"))  # degrees, the gripper 0-100
    np.testing.assert_allclose(
        item[ACTION].numpy(), units.to_lerobot(targets[FRAMES + 4]), atol=1e-4
    )
    assert (root / "meta" / "stats.json").is_file()
    stats = json.loads((root / "meta" / "stats.json").read_text())
    assert len(stats[STATE]["mean"]) == 6
    names = dataset.meta.info["features"][STATE]["names"]
    assert names[0] == "shoulder_pan.pos" and names[-1] == "gripper.pos"


def test_an_episode_replays_on_the_emulated_follower(recorded) -> None:
    root = recorded[0]
    episode = load_episode(root, 2, jointlab.load_robot("so101"))
    assert len(episode) == FRAMES and episode.task == "wave the arm"
    with jointlab.connect("emulated://so101?lockstep=1") as follower:
        follower.set_stream_period(frame_periods(FPS, follower.bus_dt))
        report = replay_episode(follower, episode)
        assert not follower.read().armed
    assert report.replayed.shape == (FRAMES, 6)
    # Recorded on the PD-driven simulator, replayed on emulated STS3215 servos: within a few
    # degrees, and not trivially equal.
    assert np.degrees(report.max).max() < 6.0, np.degrees(report.max)
    assert np.degrees(report.rms).max() > 0.01


def test_jointlab_logs_and_datasets_convert_both_ways(recorded, tmp_path) -> None:
    root = recorded[0]
    log = episode_to_log(root, 1, tmp_path / "episode1.npz", "so101")
    logs_to_dataset(
        [log], tmp_path / "back", "so101", "wave the arm", cameras=["front"], size=(64, 48)
    )
    before, after = load_episode(root, 1), load_episode(tmp_path / "back", 0)
    assert len(before) == len(after) == FRAMES
    np.testing.assert_allclose(after.position, before.position, atol=1e-6)
    np.testing.assert_allclose(after.target, before.target, atol=1e-6)
    assert open_dataset(tmp_path / "back").meta.video_keys == ["observation.images.front"]


def test_a_command_program_records_episodes(tmp_path) -> None:
    with jointlab.connect("sim://so101?control_dt=0.02") as robot:
        # 0.2 rad on every joint, the shoulder and wrist lifting the arm: +0.2 on all of them
        # would drive the jaw 4 cm into the table (docs/hardware.md 9.8).
        move = 0.2 * np.array([1, -1, 1, -1, 1, 1])
        goal = np.array(robot.description.home) + move
        program = [{"set_positions": {"positions": goal.tolist()}}, {"wait": 0.6}]
        with DatasetWriter(tmp_path / "program", robot.description, 50) as writer:
            assert record_program(writer, robot, program, "reach", 2) == 2
    first, last = load_episode(tmp_path / "program", 0), load_episode(tmp_path / "program", 1)
    assert len(first) == len(last) > 10
    # Each episode starts from home and ends near the goal (the Commander's targets).
    np.testing.assert_allclose(last.position[0], goal - move, atol=0.02)
    assert np.abs(last.target[-1] - goal).max() < 0.06
    # The loaded joints sag under gravity (the servos' P gain): at most 0.12 of the 0.2 rad.
    assert np.abs(last.position[-1] - goal).max() < 0.6 * np.abs(last.position[0] - goal).max()


def test_an_existing_folder_is_refused_and_left_alone(tmp_path) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(DatasetError, match=r"taken exists .*nothing was written"):
        DatasetWriter(folder, jointlab.load_robot("so101"), FPS)
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    assert (folder / "notes.txt").read_text() == "mine"


def test_another_robots_dataset_is_refused_naming_the_joints(recorded) -> None:
    koch = jointlab.load_robot("koch")
    renamed = koch.joint_names != jointlab.load_robot("so101").joint_names
    planar = jointlab.load_robot("planar2")
    with pytest.raises(DatasetError, match=r"'observation.state' has joints .* robot 'planar2'"):
        check_features(recorded[0], planar)
    if renamed:
        with pytest.raises(DatasetError, match="koch"):
            check_features(recorded[0], koch)
    with pytest.raises(DatasetError, match="no episode 7; it has episodes 0 to 2"):
        load_episode(recorded[0], 7)


def test_writing_videos_leaves_the_scheduling_policy_alone(tmp_path) -> None:
    """LeRobot's AV1 encoder makes its caller SCHED_FIFO 99 as root; the writer undoes it."""
    import os

    from jointlab.interop.dataset import DatasetWriter

    before = os.sched_getscheduler(0), os.sched_getparam(0)
    with jointlab.connect("sim://so101") as robot:
        description, state = robot.description, robot.read()
        with DatasetWriter(tmp_path / "d", description, 25.0, {"front": (24, 32)}) as writer:
            for _ in range(3):
                writer.add_frame(
                    state,
                    description.home,
                    "wave",
                    images={"front": np.zeros((24, 32, 3), dtype=np.uint8)},
                )
            writer.save_episode()
    assert (os.sched_getscheduler(0), os.sched_getparam(0)) == before
