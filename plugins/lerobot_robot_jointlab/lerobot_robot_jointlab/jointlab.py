"""The ``jointlab`` robot: any JointLab robot behind LeRobot's ``Robot`` class."""

from __future__ import annotations

import logging
from functools import cached_property
from typing import Any

from jointlab.interop.lerobot_bridge import RobotBridge
from jointlab.interop.lerobot_env import import_lerobot
from lerobot_robot_jointlab.config_jointlab import JointLabConfig

Robot = import_lerobot("lerobot.robots.robot").Robot


class JointLab(Robot):
    """A JointLab robot (simulated, emulated or real) as a LeRobot robot.

    Observations and actions are ``<joint>.pos`` in degrees (as LeRobot's SO-101 and Koch
    followers with ``use_degrees=True``), plus one image per simulated camera.
    """

    config_class = JointLabConfig
    name = "jointlab"

    def __init__(self, config: JointLabConfig) -> None:
        super().__init__(config)
        self.config = config
        self.bridge = RobotBridge(
            config.url,
            period=config.period,
            max_relative_target=config.max_relative_target,
            cameras=config.sim_cameras,
            camera_size=(config.camera_width, config.camera_height),
            task=config.task,
            task_seed=config.task_seed,
            task_log=config.task_log,
        )
        #: Camera names (LeRobot sizes its image writers by ``len(robot.cameras)``).
        self.cameras = dict.fromkeys(config.sim_cameras)

    @cached_property
    def observation_features(self) -> dict[str, Any]:
        """``<joint>.pos``: float, and each camera: (height, width, 3)."""
        return self.bridge.observation_features

    @cached_property
    def action_features(self) -> dict[str, type]:
        """``<joint>.pos``: float."""
        return self.bridge.action_features

    @property
    def is_connected(self) -> bool:
        """True between ``connect()`` and ``disconnect()``."""
        return self.bridge.is_connected

    def connect(self, calibrate: bool = True) -> None:
        """Connect and arm (holding the present pose)."""
        del calibrate  # JointLab robots carry their calibration (jointlab calibrate)
        self.bridge.connect()

    @property
    def is_calibrated(self) -> bool:
        """True: simulated robots need none; servo arms refuse to arm without one."""
        return True

    def calibrate(self) -> None:
        """Nothing here: a servo arm is calibrated with ``jointlab calibrate``."""

    def configure(self) -> None:
        """Nothing to configure: the URL says it all."""

    def get_observation(self) -> dict[str, Any]:
        """Joint positions (degrees) and camera images."""
        return self.bridge.observation()

    def send_action(self, action: dict[str, Any]) -> dict[str, Any]:
        """Apply ``<joint>.pos`` targets (degrees) for one action period; what was sent."""
        return self.bridge.send_action(action)

    def disconnect(self) -> None:
        """Judge the episode (with ``task``), hold, disarm, close."""
        self.bridge.disconnect()
        if self.bridge.verdict is not None:
            logging.getLogger(__name__).info("JointLab task verdict: %s", self.bridge.verdict)
