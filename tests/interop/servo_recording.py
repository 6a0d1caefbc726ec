"""Recording a servo arm through LeRobot's own record loop, goals scripted (test helper).

``record_loop`` of ``lerobot.scripts.lerobot_record`` runs as ``lerobot-record`` runs it:
the ``jointlab`` robot plugin drives the arm (an emulated bus in lockstep, so each frame is
exactly ``1 / fps`` of arm time however slow the machine), a scripted teleoperator sends the
goals, LeRobot's default processors and its ``LeRobotDataset`` writer record them. The
teleoperator ends the episode after its last goal (LeRobot's ``exit_early`` event), so the
number of frames does not depend on the wall clock.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jointlab.interop.lerobot_env import import_lerobot


def record_through_lerobot(
    url: str, joints: list[str], goals: np.ndarray, fps: int, root: Path, calibration: Path
) -> Path:
    """Record one episode of ``goals`` (``(n, dof)``, degrees) on ``url``; the dataset root."""
    record = import_lerobot("lerobot.scripts.lerobot_record")
    teleoperator = import_lerobot("lerobot.teleoperators.teleoperator").Teleoperator
    config = import_lerobot("lerobot.teleoperators.config").TeleoperatorConfig
    datasets = import_lerobot("lerobot.datasets.lerobot_dataset")
    features = import_lerobot("lerobot.datasets.pipeline_features")
    utils = import_lerobot("lerobot.datasets.utils")
    processors = import_lerobot("lerobot.processor")
    from lerobot_robot_jointlab import JointLab, JointLabConfig

    keys = [f"{joint}.pos" for joint in joints]
    events = {"exit_early": False, "rerecord_episode": False, "stop_recording": False}

    class ScriptedGoals(teleoperator):  # type: ignore[misc, valid-type]
        """Sends one row of ``goals`` per call; ends the episode after the last."""

        config_class = config
        name = "scripted_goals"

        def __init__(self) -> None:
            self.frame = 0
            self.id = None
            self.calibration = {}

        action_features = property(lambda self: dict.fromkeys(keys, float))
        feedback_features = property(lambda self: {})
        is_connected = property(lambda self: True)
        is_calibrated = property(lambda self: True)

        def connect(self, calibrate: bool = True) -> None:
            del calibrate

        def calibrate(self) -> None:
            pass

        def configure(self) -> None:
            pass

        def get_action(self) -> dict[str, float]:
            row = goals[min(self.frame, len(goals) - 1)]
            self.frame += 1
            if self.frame >= len(goals):
                events["exit_early"] = True
            return dict(zip(keys, row.tolist(), strict=True))

        def send_feedback(self, feedback: dict) -> None:
            del feedback

        def disconnect(self) -> None:
            pass

    robot = JointLab(JointLabConfig(url=url, calibration_dir=calibration))
    teleop_processor, robot_processor, observation_processor = processors.make_default_processors()
    dataset_features = utils.combine_feature_dicts(
        features.aggregate_pipeline_dataset_features(
            pipeline=teleop_processor,
            initial_features=features.create_initial_features(action=robot.action_features),
            use_videos=False,
        ),
        features.aggregate_pipeline_dataset_features(
            pipeline=observation_processor,
            initial_features=features.create_initial_features(
                observation=robot.observation_features
            ),
            use_videos=False,
        ),
    )
    dataset = datasets.LeRobotDataset.create(
        "local/servo-identification",
        fps,
        root=root,
        robot_type=robot.name,
        features=dataset_features,
        use_videos=False,
    )
    robot.connect()
    try:
        record.record_loop(
            robot=robot,
            events=events,
            fps=fps,
            teleop_action_processor=teleop_processor,
            robot_action_processor=robot_processor,
            robot_observation_processor=observation_processor,
            dataset=dataset,
            teleop=ScriptedGoals(),
            control_time_s=10 * len(goals) / fps,
            single_task="identify the servos",
        )
        dataset.save_episode()
        dataset.finalize()
    finally:
        robot.disconnect()
    return root
