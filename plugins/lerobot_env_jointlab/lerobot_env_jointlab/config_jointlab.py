"""The ``jointlab`` environment type (``--env.type=jointlab --env.task=Reach``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from jointlab.interop.lerobot_env import import_lerobot
from jointlab.interop.lerobot_gym import (
    check_policy,
    lerobot_features,
    lerobot_key,
    lerobot_task,
    register_lerobot_env,
)

EnvConfig = import_lerobot("lerobot.envs.configs").EnvConfig
_types = import_lerobot("lerobot.configs.types")
_KINDS = {
    "action": _types.FeatureType.ACTION,
    "state": _types.FeatureType.STATE,
    "env": _types.FeatureType.ENV,
    "visual": _types.FeatureType.VISUAL,
}


@EnvConfig.register_subclass("jointlab")
@dataclass
class JointLabEnvConfig(EnvConfig):
    """A JointLab task in simulation, as LeRobot evaluates policies on it.

    Attributes:
        task: ``Reach`` (the names of ``jointlab.interop.lerobot_gym.LEROBOT_TASKS``).
        fps: Steps per second (a divisor of 1000); the dataset's fps.
        robot: The robot (``so101``).
        engine: ``pybullet`` (default) or ``mujoco``.
        episode_length: Steps per episode (default: the task's).
        cameras: Rendered cameras (``observation.images.<name>``).
        camera_width: Their width, pixels.
        camera_height: Their height, pixels.
        render_width: Width of ``lerobot-eval``'s videos, pixels.
        render_height: Height of those videos, pixels.
    """

    task: str | None = "Reach"
    fps: int = 25
    robot: str = "so101"
    engine: str | None = None
    episode_length: int | None = None
    cameras: list[str] = field(default_factory=list)
    camera_width: int = 96
    camera_height: int = 96
    render_width: int = 160
    render_height: int = 120

    def __post_init__(self) -> None:
        lerobot_task(str(self.task))  # an unknown task: one clear error, before anything runs
        size = (self.camera_width, self.camera_height)
        features = lerobot_features(str(self.task), self.robot, self.cameras, size)
        self.features = {
            key: _types.PolicyFeature(type=_KINDS[kind], shape=shape)
            for key, (kind, shape) in features.items()
        }
        self.features_map = {key: lerobot_key(key) for key in features}

    @property
    def package_name(self) -> str:
        """The module of the environment class."""
        return "jointlab.interop.lerobot_gym"

    @property
    def gym_id(self) -> str:
        """``jointlab/LeRobot-<task>-v0``, registered with Gymnasium when first asked for."""
        return register_lerobot_env(str(self.task))

    @property
    def gym_kwargs(self) -> dict:
        """The environment's keywords; first checks a ``--policy.path`` checkpoint against it."""
        policy = import_lerobot("lerobot.configs.parser").get_path_arg("policy")
        size = (self.camera_width, self.camera_height)
        if policy:
            check_policy(policy, str(self.task), self.robot, self.cameras, size)
        kwargs = {
            "robot": self.robot,
            "fps": self.fps,
            "engine": self.engine,
            "cameras": list(self.cameras),
            "camera_size": size,
            "render_size": (self.render_width, self.render_height),
        }
        if self.episode_length is not None:
            kwargs["max_episode_steps"] = self.episode_length
        return kwargs
