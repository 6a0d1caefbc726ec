"""LeRobot teleoperator plugin: ``--teleop.type=jointlab_leader --teleop.url=emulated://so101``.

Importing this package (LeRobot's ``register_third_party_plugins`` does) registers the
``jointlab_leader`` teleoperator type: a JointLab leader arm (torque off), read once per call.
"""

from lerobot_teleoperator_jointlab.config_jointlab_leader import JointLabLeaderConfig
from lerobot_teleoperator_jointlab.jointlab_leader import JointLabLeader

__all__ = ["JointLabLeader", "JointLabLeaderConfig"]
