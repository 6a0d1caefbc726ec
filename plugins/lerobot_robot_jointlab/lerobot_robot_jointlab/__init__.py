"""LeRobot robot plugin: ``--robot.type=jointlab --robot.url=sim://so101``.

Importing this package (LeRobot's ``register_third_party_plugins`` does) registers the
``jointlab`` robot type. The robot itself is :class:`JointLab`, whose work is done by
:class:`jointlab.interop.lerobot_bridge.RobotBridge`.
"""

from lerobot_robot_jointlab.config_jointlab import JointLabConfig
from lerobot_robot_jointlab.jointlab import JointLab

__all__ = ["JointLab", "JointLabConfig"]
