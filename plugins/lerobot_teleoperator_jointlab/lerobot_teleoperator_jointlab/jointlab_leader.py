"""The ``jointlab_leader`` teleoperator: a JointLab leader arm behind LeRobot's class."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from jointlab.interop.lerobot_bridge import LeaderBridge
from jointlab.interop.lerobot_env import import_lerobot
from lerobot_teleoperator_jointlab.config_jointlab_leader import JointLabLeaderConfig

Teleoperator = import_lerobot("lerobot.teleoperators.teleoperator").Teleoperator


class JointLabLeader(Teleoperator):
    """A leader arm (torque off) read once per ``get_action``: ``<joint>.pos`` in degrees."""

    config_class = JointLabLeaderConfig
    name = "jointlab_leader"

    def __init__(self, config: JointLabLeaderConfig) -> None:
        super().__init__(config)
        self.config = config
        self.bridge = LeaderBridge(config.url)

    @cached_property
    def action_features(self) -> dict[str, type]:
        """``<joint>.pos``: float."""
        return self.bridge.action_features

    @cached_property
    def feedback_features(self) -> dict[str, Any]:
        """None: a leader arm takes no feedback."""
        return {}

    @property
    def is_connected(self) -> bool:
        """True between ``connect()`` and ``disconnect()``."""
        return self.bridge.is_connected

    def connect(self, calibrate: bool = True) -> None:
        """Connect (the servos stay limp)."""
        del calibrate
        self.bridge.connect()

    @property
    def is_calibrated(self) -> bool:
        """True: a JointLab servo arm carries its calibration (jointlab calibrate)."""
        return True

    def calibrate(self) -> None:
        """Nothing here: calibrate with ``jointlab calibrate``."""

    def configure(self) -> None:
        """Nothing to configure."""

    def get_action(self) -> dict[str, float]:
        """One reading of the leader: ``<joint>.pos`` in degrees."""
        return self.bridge.action()

    def send_feedback(self, feedback: dict[str, Any]) -> None:
        """A leader arm takes no feedback."""
        del feedback

    def disconnect(self) -> None:
        """Close the leader."""
        self.bridge.disconnect()
