"""RoboCup SSL support: the ``ControlMessage`` codec on its own, and its robot link.

* :mod:`~jointlab.hardware.ssl.codec`: the 10-byte base-station-to-robot
  :class:`ControlMessage` (bit-exact pack/unpack) and the holonomic mapping to joint
  velocities; it depends on nothing but numpy;
* :mod:`~jointlab.hardware.ssl.link`: :class:`SSLRobotLink`, which drives the ``ssl_robot``
  description on any :class:`~jointlab.contract.Robot` from ControlMessages.
"""

from __future__ import annotations

from jointlab.hardware.ssl.codec import (
    SSL_JOINTS,
    VELOCITY_SCALE_FACTOR,
    ControlMessage,
    Mode,
    ShootMode,
    Team,
    TriggerMode,
    holonomic_joint_velocities,
)
from jointlab.hardware.ssl.link import SSLRobotLink

__all__ = [
    "SSL_JOINTS",
    "VELOCITY_SCALE_FACTOR",
    "ControlMessage",
    "Mode",
    "SSLRobotLink",
    "ShootMode",
    "Team",
    "TriggerMode",
    "holonomic_joint_velocities",
]
