"""JointLab inside LeRobot: the ``jointlab`` robot and ``jointlab_leader`` teleoperator plugins.

LeRobot finds them as it finds any third-party device (installed distributions named
``lerobot_robot_*`` / ``lerobot_teleoperator_*``, imported by ``register_third_party_plugins``);
then LeRobot's own ``record()`` and ``teleoperate()`` run from the command-line flags a user
would type (parsed by LeRobot's draccus config classes): ``--robot.type=jointlab
--robot.url=sim://so101 --teleop.type=jointlab_leader --teleop.url=emulated://so101``.
"""

from __future__ import annotations

import numpy as np
import pytest

from jointlab.errors import CommandRefused, ConfigurationError
from jointlab.interop.dataset import open_dataset
from jointlab.interop.lerobot_bridge import LeaderBridge, RobotBridge
from jointlab.interop.lerobot_env import import_lerobot

LEADER = "emulated://so101?lockstep=1"
JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]


@pytest.fixture(scope="module")
def plugins():
    """LeRobot's discovery of installed plugins, as lerobot-record runs it."""
    import_lerobot("lerobot.robots.config")
    from lerobot.utils.import_utils import register_third_party_plugins

    register_third_party_plugins()
    from lerobot.robots.config import RobotConfig
    from lerobot.teleoperators.config import TeleoperatorConfig

    return RobotConfig, TeleoperatorConfig


def test_lerobot_discovers_the_plugins(plugins) -> None:
    robot_config, teleop_config = plugins
    assert robot_config.get_choice_class("jointlab").__name__ == "JointLabConfig"
    assert teleop_config.get_choice_class("jointlab_leader").__name__ == "JointLabLeaderConfig"


@pytest.mark.slow
def test_lerobot_record_runs_with_the_jointlab_robot(plugins, tmp_path) -> None:
    import draccus

    record = import_lerobot("lerobot.scripts.lerobot_record")
    root = tmp_path / "lerobot-record"
    flags = [
        "--robot.type=jointlab",
        "--robot.url=sim://so101",
        "--robot.sim_cameras=[front]",
        "--robot.camera_width=64",
        "--robot.camera_height=48",
        f"--robot.calibration_dir={tmp_path / 'calibration'}",
        "--teleop.type=jointlab_leader",
        f"--teleop.url={LEADER}",
        f"--teleop.calibration_dir={tmp_path / 'calibration'}",
        "--dataset.repo_id=local/lerobot-record",
        f"--dataset.root={root}",
        "--dataset.single_task=follow the leader",
        "--dataset.num_episodes=2",
        "--dataset.episode_time_s=0.6",
        "--dataset.reset_time_s=0",
        "--dataset.fps=10",
        "--dataset.push_to_hub=false",
        "--play_sounds=false",
    ]
    config = draccus.parse(record.RecordConfig, args=flags)
    assert config.robot.type == "jointlab" and config.robot.url == "sim://so101"
    record.record(config)  # LeRobot's own record(): its record_loop drives the plugin
    dataset = open_dataset(root)
    assert dataset.num_episodes == 2 and dataset.num_frames >= 4
    assert dataset.meta.robot_type == "jointlab"
    names = dataset.meta.info["features"]["observation.state"]["names"]
    assert names == [f"{joint}.pos" for joint in JOINTS]
    item = dataset[1]
    assert tuple(item["observation.images.front"].shape) == (3, 48, 64)
    # The leader hangs limp at home; the follower was commanded there (degrees, gripper 0-100).
    from jointlab.interop.units import LeRobotUnits
    from jointlab.robots import load_robot

    home = LeRobotUnits.of(load_robot("so101")).to_lerobot([0.0, 0.5, 1.4, 0.8, 0.0, 0.0])
    assert np.abs(item["action"].numpy() - home).max() < 15.0


@pytest.mark.slow
def test_lerobot_teleoperate_runs_with_the_jointlab_robot(plugins, tmp_path) -> None:
    import draccus

    teleoperate = import_lerobot("lerobot.scripts.lerobot_teleoperate")
    flags = [
        "--robot.type=jointlab",
        "--robot.url=sim://so101",
        f"--robot.calibration_dir={tmp_path}",
        "--teleop.type=jointlab_leader",
        f"--teleop.url={LEADER}",
        f"--teleop.calibration_dir={tmp_path}",
        "--fps=20",
        "--teleop_time_s=0.3",
    ]
    config = draccus.parse(teleoperate.TeleoperateConfig, args=flags)
    teleoperate.teleoperate(config)


def test_the_bridge_clips_steps_and_refuses_unknown_joints() -> None:
    bridge = RobotBridge("sim://so101", max_relative_target=2.0)
    assert list(bridge.action_features) == [f"{joint}.pos" for joint in JOINTS]
    bridge.connect()
    try:
        start = bridge.observation()
        sent = bridge.send_action({"shoulder_pan.pos": 45.0, "gripper.pos": -3.0})
        assert sent["shoulder_pan.pos"] == pytest.approx(start["shoulder_pan.pos"] + 2.0)
        assert sent["gripper.pos"] == pytest.approx(start["gripper.pos"] - 2.0)
        assert sent["elbow_flex.pos"] == pytest.approx(start["elbow_flex.pos"])  # holds
        assert bridge.robot.time == pytest.approx(1 / 30, abs=1e-3)  # one action period
        with pytest.raises(ConfigurationError, match=r"\['elbow.pos'\] are not joints"):
            bridge.send_action({"elbow.pos": 1.0})
    finally:
        bridge.disconnect()
    assert not bridge.is_connected
    bridge.disconnect()  # safe twice


def test_an_uncalibrated_servo_arm_names_the_command_to_run() -> None:
    bridge = RobotBridge("emulated://so101?calibrated=0&lockstep=1")
    with pytest.raises(CommandRefused, match="jointlab calibrate") as raised:
        bridge.connect()
    assert raised.value.reason == "uncalibrated"
    assert not bridge.is_connected


def test_the_leader_bridge_reads_degrees_and_a_gripper_0_to_100() -> None:
    leader = LeaderBridge(LEADER)
    assert list(leader.action_features) == [f"{joint}.pos" for joint in JOINTS]
    leader.connect()
    try:
        goal = np.array([0.3, 0.4, 1.2, 0.5, -0.2, 0.1])
        leader.leader.robot.emulator.move(goal)
        action = leader.action()
        np.testing.assert_allclose(list(action.values())[:5], np.degrees(goal[:5]), atol=0.2)
        low, high = (
            leader.units.from_lerobot(np.zeros(6))[5],
            leader.units.from_lerobot(np.full(6, 100.0))[5],
        )  # the gripper's range, rad
        assert action["gripper.pos"] == pytest.approx(100 * (0.1 - low) / (high - low), abs=0.2)
    finally:
        leader.disconnect()
