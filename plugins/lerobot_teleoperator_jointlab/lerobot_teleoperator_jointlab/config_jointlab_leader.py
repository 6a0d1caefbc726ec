"""The ``jointlab_leader`` teleoperator's configuration."""

from __future__ import annotations

from dataclasses import dataclass

from jointlab.interop.lerobot_env import import_lerobot

TeleoperatorConfig = import_lerobot("lerobot.teleoperators.config").TeleoperatorConfig


@TeleoperatorConfig.register_subclass("jointlab_leader")
@dataclass
class JointLabLeaderConfig(TeleoperatorConfig):
    """A JointLab leader arm.

    Attributes:
        url: The leader's URL: ``emulated://so101``, ``feetech:///dev/ttyACM1?robot=so101``.
    """

    url: str = "emulated://so101"
