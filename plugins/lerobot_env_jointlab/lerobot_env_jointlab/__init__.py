"""LeRobot environment plugin: ``--env.type=jointlab --env.task=Reach``.

Importing this package registers the ``jointlab`` environment type with LeRobot: LeRobot
0.4.x imports it for ``--env.discover_packages_path=lerobot_env_jointlab``, LeRobot 0.5+
for every installed ``lerobot_env_*`` distribution. The environment itself is
:class:`jointlab.interop.lerobot_gym.LeRobotTaskEnv`.
"""

from lerobot_env_jointlab.config_jointlab import JointLabEnvConfig

__all__ = ["JointLabEnvConfig"]
