"""Gymnasium environments: a :class:`Robot` plus a :class:`Task`, with NJointAction actions.

Importing this package registers ``jointlab/Reach-v0``, ``jointlab/JointTracking-v0``,
``jointlab/Hold-v0`` and ``jointlab/Push-v0``, and the manipulation tasks
``jointlab/Lift-v0``, ``jointlab/Push-v1``, ``jointlab/PickPlace-v0`` and
``jointlab/Stack-v0`` (:mod:`jointlab.envs.manipulation`)::

    import gymnasium
    import jointlab.envs  # noqa: F401  (registers the ids)

    env = gymnasium.make("jointlab/Reach-v0", robot="arm6", action_mode="position")
"""

from .actions import (
    ACTION_MODES,
    NJOINT_FIELDS,
    ActionAdapter,
    action_bounds,
    normalize,
    unnormalize,
)
from .env import JointLabEnv
from .manipulation import ManipulationEnv, expert_policy, register_manipulation_envs
from .observations import ObservationLayout, ObservationPart
from .registration import ENV_SPECS, make_env, register_envs
from .tasks import TASKS, Hold, JointTracking, Push, Reach, Task
from .wrappers import ActionLatency, DomainRandomization, ObservationNoise

register_envs()
register_manipulation_envs()

__all__ = [
    "ACTION_MODES",
    "ENV_SPECS",
    "NJOINT_FIELDS",
    "TASKS",
    "ActionAdapter",
    "ActionLatency",
    "DomainRandomization",
    "Hold",
    "JointLabEnv",
    "JointTracking",
    "ManipulationEnv",
    "ObservationLayout",
    "ObservationNoise",
    "ObservationPart",
    "Push",
    "Reach",
    "Task",
    "action_bounds",
    "expert_policy",
    "make_env",
    "normalize",
    "register_envs",
    "unnormalize",
]
