"""ROS 2: any JointLab robot as a ROS 2 node (``jointlab ros2 URL``, :class:`Ros2Bridge`).

Importing this package needs no ROS; :class:`Ros2Bridge` needs the ``ros2`` extra
(``pip install "jointlab[ros2]"``: rclpy with Fast DDS and the message packages, from the
package index). See docs/ros2.md.
"""

from jointlab.interop.ros2.bridge import BridgeStatistics, Ros2Bridge
from jointlab.interop.ros2.config import BridgeConfig
from jointlab.interop.ros2.messages import BadMessage
from jointlab.interop.ros2.ros2_control import ros2_control_xml, urdf_with_ros2_control

__all__ = [
    "BadMessage",
    "BridgeConfig",
    "BridgeStatistics",
    "Ros2Bridge",
    "ros2_control_xml",
    "urdf_with_ros2_control",
]
