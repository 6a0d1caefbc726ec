"""Teleoperation: a :class:`Teleoperator` (``read() -> joint positions``) drives a follower.

``Teleop(LeaderArm(jointlab.connect(LEADER_URL)), jointlab.connect(FOLLOWER_URL)).run()`` is
what ``jointlab teleop`` does; ``jointlab record`` records the same loop into a LeRobot
dataset. Imports the Robot interface and descriptions only (no backend).
"""

from __future__ import annotations

from jointlab.teleop.keyboard import KeyboardTeleoperator
from jointlab.teleop.loop import Teleop, TeleopSample, TeleopSummary
from jointlab.teleop.mapping import MAPPINGS, JointMap
from jointlab.teleop.teleoperator import LeaderArm, ScriptedTeleoperator, Teleoperator

__all__ = [
    "MAPPINGS",
    "JointMap",
    "KeyboardTeleoperator",
    "LeaderArm",
    "ScriptedTeleoperator",
    "Teleop",
    "TeleopSample",
    "TeleopSummary",
    "Teleoperator",
]
