"""The ``jointlab`` robot type's configuration (``--robot.type=jointlab --robot.url=...``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jointlab.interop.lerobot_env import import_lerobot

RobotConfig = import_lerobot("lerobot.robots.config").RobotConfig


@RobotConfig.register_subclass("jointlab")
@dataclass
class JointLabConfig(RobotConfig):
    """A JointLab robot driven through LeRobot's Robot API.

    Attributes:
        url: The JointLab robot URL: ``sim://so101``, ``sim://koch?engine=mujoco``,
            ``emulated://so101``, ``feetech:///dev/ttyACM0?robot=so101``.
        period: Robot time per action, s (default: 1/30 s in simulation, one control period
            on a device, whose bus paces it).
        max_relative_target: Largest step per action from the present position, degrees.
        sim_cameras: Simulated camera names; each observation holds a rendered RGB image per
            name (LeRobot's own ``cameras`` field is for LeRobot camera configs).
        camera_width: Width of those images, pixels.
        camera_height: Height of those images, pixels.
        task: A task of ``--env.type=jointlab`` (``Reach``) judging the episode: its scene
            (the goal) is drawn in the cameras, its success decided when LeRobot
            disconnects the robot, and logged.
        task_seed: The episode's seed: the scene of ``lerobot-eval``'s episode of that seed.
        task_log: A file each verdict is appended to (one JSON line).
    """

    url: str = "sim://so101"
    period: float | None = None
    max_relative_target: float | None = None
    sim_cameras: list[str] = field(default_factory=list)
    camera_width: int = 128
    camera_height: int = 96
    task: str | None = None
    task_seed: int = 0
    task_log: str | None = None
